package operatorapi

import (
	"context"
	"fmt"
	"net/http"

	"github.com/kassa-pay/kassa/adapters/http/kit"
	"github.com/kassa-pay/kassa/modules/apps"
	"github.com/kassa-pay/kassa/modules/identity"
	"github.com/kassa-pay/kassa/modules/webhooks"
	"github.com/kassa-pay/kassa/openapi"
	op "github.com/kassa-pay/kassa/openapi/gen/operatorapi"
)

// Deps is what the operator API needs.
type Deps struct {
	Identity *identity.Service
	Apps     *apps.Service
	// AppHooks manages the webhook endpoints of apps and their deliveries.
	AppHooks *webhooks.AppService
	// CheckToken reports whether an Authorization header carries the operator token.
	CheckToken func(authorization string) bool
	// Ready reports whether the database is reachable and its schema current (/readyz).
	Ready func(context.Context) error
	// BaseURL is the API's public base URL (KASSA_API_URL), named in the served spec's servers.
	BaseURL string
}

// New assembles the operator API (/operator/v1 with /healthz and /readyz on the API listener):
// the contract gate with the operator token in front of the generated strict server. Mount it
// inside kit.Outer.
func New(d Deps) (http.Handler, error) {
	spec, err := openapi.LoadOperator()
	if err != nil {
		return nil, fmt.Errorf("operator spec: %w", err)
	}
	served, err := openapi.Served(openapi.OperatorJSON, d.BaseURL)
	if err != nil {
		return nil, err
	}
	strict := op.NewStrictHandlerWithOptions(&operatorAPI{identity: d.Identity, apps: d.Apps, appHooks: d.AppHooks, ready: d.Ready, spec: served}, nil,
		op.StrictHTTPServerOptions{
			RequestErrorHandlerFunc:  kit.BodyInvalidJSON,
			ResponseErrorHandlerFunc: kit.WriteError,
		})
	mux := op.HandlerWithOptions(strict, op.StdHTTPServerOptions{BaseRouter: http.NewServeMux(), ErrorHandlerFunc: kit.ParamError})
	return kit.NewGate(kit.GateConfig{Spec: spec, CheckToken: d.CheckToken}, mux)
}
