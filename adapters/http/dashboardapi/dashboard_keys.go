package dashboardapi

import (
	"context"

	"github.com/kassa-pay/kassa/adapters/http/kit"
	"github.com/kassa-pay/kassa/adapters/http/present"
	"github.com/kassa-pay/kassa/modules/identity"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
)

// API keys of the path's environment (interface 5.1): the mode of a key made here is {env}.

func presentDashKey(k *identity.APIKey) dash.ApiKey {
	return dash.ApiKey{Id: k.ID(), Object: dash.ApiKeyObjectApiKey, Name: k.Name(), Mode: dash.DashboardEnvironment(k.Env()),
		Display: k.Display(), Created: k.Created().Unix(), LastUsed: present.UnixPtr(k.LastUsed()), RevokedAt: present.UnixPtr(k.RevokedAt())}
}

func (a *dashboardAPI) ListApiKeys(ctx context.Context, _ dash.ListApiKeysRequestObject) (dash.ListApiKeysResponseObject, error) {
	keys, err := a.d.Identity.ListScopeKeys(ctx, kit.CallerFrom(ctx).Scope)
	if err != nil {
		return nil, err
	}
	out := dash.ApiKeyList{Data: make([]dash.ApiKey, 0, len(keys))}
	for _, k := range keys {
		out.Data = append(out.Data, presentDashKey(k))
	}
	return dash.ListApiKeys200JSONResponse{Body: out}, nil
}

func (a *dashboardAPI) CreateApiKey(ctx context.Context, r dash.CreateApiKeyRequestObject) (dash.CreateApiKeyResponseObject, error) {
	k, secret, err := a.d.Identity.CreateScopeKey(ctx, kit.CallerFrom(ctx).Scope, r.Body.Name)
	if err != nil {
		return nil, err
	}
	p := presentDashKey(k)
	return dash.CreateApiKey201JSONResponse{Body: dash.ApiKeyCreated{
		Id: p.Id, Object: dash.ApiKeyCreatedObjectApiKey, Name: p.Name, Mode: p.Mode, Display: p.Display,
		Created: p.Created, LastUsed: p.LastUsed, RevokedAt: p.RevokedAt, Secret: secret,
	}}, nil
}

func (a *dashboardAPI) RevokeApiKey(ctx context.Context, r dash.RevokeApiKeyRequestObject) (dash.RevokeApiKeyResponseObject, error) {
	k, err := a.d.Identity.RevokeScopeKey(ctx, kit.CallerFrom(ctx).Scope, r.Id)
	if err != nil {
		return nil, err
	}
	return dash.RevokeApiKey200JSONResponse{Body: presentDashKey(k)}, nil
}
