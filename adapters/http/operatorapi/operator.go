package operatorapi

import (
	"context"
	"net/http"
	"time"

	"github.com/kassa-pay/kassa/adapters/http/kit"
	"github.com/kassa-pay/kassa/adapters/http/present"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/apps"
	"github.com/kassa-pay/kassa/modules/identity"
	"github.com/kassa-pay/kassa/modules/webhooks"
	op "github.com/kassa-pay/kassa/openapi/gen/operatorapi"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

// operatorAPI implements the operator API of D1 (onboarding merchants and their keys) plus the
// health endpoints.
type operatorAPI struct {
	identity *identity.Service
	apps     *apps.Service
	appHooks *webhooks.AppService
	ready    func(context.Context) error
	spec     []byte
}

var _ op.StrictServerInterface = (*operatorAPI)(nil)

// rawJSON is a response written as it is (the served OpenAPI document).
type rawJSON []byte

func (b rawJSON) VisitGetOperatorSpecResponse(w http.ResponseWriter) error { return kit.WriteRaw(w, b) }

func (o *operatorAPI) GetOperatorSpec(context.Context, op.GetOperatorSpecRequestObject) (op.GetOperatorSpecResponseObject, error) {
	return rawJSON(o.spec), nil
}

func (o *operatorAPI) Healthz(context.Context, op.HealthzRequestObject) (op.HealthzResponseObject, error) {
	return op.Healthz200JSONResponse{Body: op.Health{Status: op.HealthStatusOk}}, nil
}

func (o *operatorAPI) Readyz(ctx context.Context, _ op.ReadyzRequestObject) (op.ReadyzResponseObject, error) {
	cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := o.ready(cctx); err != nil {
		return nil, core.NewError(core.TypeAPI, "service_unavailable", "", "Not ready: the database is unreachable or its schema is behind this binary.")
	}
	return op.Readyz200JSONResponse{Body: op.Health{Status: op.HealthStatusOk}}, nil
}

func (o *operatorAPI) CreateMerchant(ctx context.Context, r op.CreateMerchantRequestObject) (op.CreateMerchantResponseObject, error) {
	b := r.Body
	in := identity.MerchantInput{Name: b.Name, Country: b.Country, Email: b.Email, OwnerPassword: b.OwnerPassword}
	if b.Onboarded != nil {
		in.Onboarded = *b.Onboarded
	}
	m, testKey, liveKey, err := o.identity.CreateMerchant(ctx, in)
	if err != nil {
		return nil, err
	}
	return op.CreateMerchant201JSONResponse{Body: op.MerchantCreated{
		Id: m.ID(), Object: op.MerchantCreatedObjectMerchant, Name: m.Name(), Country: m.Country(), Email: m.Email(),
		Onboarded: m.Onboarded(), Created: m.Created().Unix(), TestKey: testKey, LiveKey: liveKey,
	}}, nil
}

func (o *operatorAPI) RetrieveMerchant(ctx context.Context, r op.RetrieveMerchantRequestObject) (op.RetrieveMerchantResponseObject, error) {
	m, err := o.identity.GetMerchant(ctx, r.Id)
	if err != nil {
		return nil, err
	}
	return op.RetrieveMerchant200JSONResponse{Body: presentMerchant(m)}, nil
}

func (o *operatorAPI) CompleteOnboarding(ctx context.Context, r op.CompleteOnboardingRequestObject) (op.CompleteOnboardingResponseObject, error) {
	m, err := o.identity.CompleteOnboarding(ctx, r.Id)
	if err != nil {
		return nil, err
	}
	return op.CompleteOnboarding200JSONResponse{Body: presentMerchant(m)}, nil
}

func (o *operatorAPI) CreateApiKey(ctx context.Context, r op.CreateApiKeyRequestObject) (op.CreateApiKeyResponseObject, error) {
	k, secret, err := o.identity.CreateKey(ctx, r.Id, r.Body.Name, core.Environment(r.Body.Mode))
	if err != nil {
		return nil, err
	}
	p := presentKey(k)
	return op.CreateApiKey201JSONResponse{Body: op.ApiKeyCreated{
		Id: p.Id, Object: op.ApiKeyCreatedObjectApiKey, Merchant: p.Merchant, Name: p.Name, Mode: p.Mode,
		Display: p.Display, Created: p.Created, LastUsed: p.LastUsed, RevokedAt: p.RevokedAt, Secret: secret,
	}}, nil
}

func (o *operatorAPI) ListApiKeys(ctx context.Context, r op.ListApiKeysRequestObject) (op.ListApiKeysResponseObject, error) {
	keys, err := o.identity.ListKeys(ctx, r.Id)
	if err != nil {
		return nil, err
	}
	out := op.ApiKeyList{Object: wire.ListObjectList, Url: "/operator/v1/merchants/" + r.Id + "/api_keys", Data: make([]op.ApiKey, 0, len(keys))}
	for _, k := range keys {
		out.Data = append(out.Data, presentKey(k))
	}
	return op.ListApiKeys200JSONResponse{Body: out}, nil
}

func (o *operatorAPI) RevokeApiKey(ctx context.Context, r op.RevokeApiKeyRequestObject) (op.RevokeApiKeyResponseObject, error) {
	k, err := o.identity.RevokeKey(ctx, r.KeyId)
	if err != nil {
		return nil, err
	}
	return op.RevokeApiKey200JSONResponse{Body: presentKey(k)}, nil
}

func presentMerchant(m *identity.Merchant) op.Merchant {
	return op.Merchant{Id: m.ID(), Object: op.MerchantObjectMerchant, Name: m.Name(), Country: m.Country(),
		Email: m.Email(), Onboarded: m.Onboarded(), Created: m.Created().Unix()}
}

func presentKey(k *identity.APIKey) op.ApiKey {
	return op.ApiKey{Id: k.ID(), Object: op.ApiKeyObjectApiKey, Merchant: k.MerchantID(), Name: k.Name(),
		Mode: op.Environment(k.Env()), Display: k.Display(), Created: k.Created().Unix(),
		LastUsed: present.UnixPtr(k.LastUsed()), RevokedAt: present.UnixPtr(k.RevokedAt())}
}

func (o *operatorAPI) CreateApp(ctx context.Context, r op.CreateAppRequestObject) (op.CreateAppResponseObject, error) {
	b := r.Body
	in := apps.AppInput{Name: b.Name, RedirectURIs: b.RedirectUris, Scopes: scopeNames(b.Scopes)}
	if b.Reviewed != nil {
		in.Reviewed = *b.Reviewed
	}
	a, secret, err := o.apps.RegisterApp(ctx, in)
	if err != nil {
		return nil, err
	}
	p := presentApp(a)
	return op.CreateApp201JSONResponse{Body: op.AppCreated{
		Id: p.Id, Object: op.AppCreatedObjectApp, Name: p.Name, ClientId: p.ClientId, ClientSecret: secret,
		RedirectUris: p.RedirectUris, Scopes: p.Scopes, Reviewed: p.Reviewed, Created: p.Created,
	}}, nil
}

func (o *operatorAPI) RetrieveApp(ctx context.Context, r op.RetrieveAppRequestObject) (op.RetrieveAppResponseObject, error) {
	a, err := o.apps.GetApp(ctx, r.Id)
	if err != nil {
		return nil, err
	}
	return op.RetrieveApp200JSONResponse{Body: presentApp(a)}, nil
}

func (o *operatorAPI) CreateInstallation(ctx context.Context, r op.CreateInstallationRequestObject) (op.CreateInstallationResponseObject, error) {
	var scopes []string
	if r.Body.Scopes != nil {
		scopes = scopeNames(*r.Body.Scopes)
		if len(scopes) == 0 {
			return nil, apps.ErrScopesMissing
		}
	}
	i, tokens, err := o.apps.Install(ctx, r.Id, r.Body.MerchantId, scopes)
	if err != nil {
		return nil, err
	}
	p := presentInstallation(i)
	return op.CreateInstallation201JSONResponse{Body: op.InstallationCreated{
		Installation: p.Installation, Object: op.InstallationCreatedObjectInstallation, App: p.App, Merchant: p.Merchant,
		Scopes: p.Scopes, Created: p.Created, RevokedAt: p.RevokedAt, LiveToken: tokens.Live, TestToken: tokens.Test,
	}}, nil
}

func (o *operatorAPI) DeleteInstallation(ctx context.Context, r op.DeleteInstallationRequestObject) (op.DeleteInstallationResponseObject, error) {
	i, err := o.apps.Uninstall(ctx, r.Installation)
	if err != nil {
		return nil, err
	}
	return op.DeleteInstallation200JSONResponse{Body: presentInstallation(i)}, nil
}

func scopeNames(in []op.AppScope) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = string(s)
	}
	return out
}

func appScopes(in []string) []op.AppScope {
	out := make([]op.AppScope, len(in))
	for i, s := range in {
		out[i] = op.AppScope(s)
	}
	return out
}

func presentApp(a *apps.App) op.App {
	return op.App{Id: a.ID(), Object: op.AppObjectApp, Name: a.Name(), ClientId: a.ClientID(),
		RedirectUris: a.RedirectURIs(), Scopes: appScopes(a.Scopes()), Reviewed: a.Reviewed(), Created: a.Created().Unix()}
}

func presentInstallation(i *apps.Installation) op.Installation {
	return op.Installation{Installation: i.ID(), Object: op.InstallationObjectInstallation, App: i.AppID(),
		Merchant: i.MerchantID(), Scopes: appScopes(i.Scopes()), Created: i.Created().Unix(), RevokedAt: present.UnixPtr(i.RevokedAt())}
}
