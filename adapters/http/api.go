package httpapi

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/kassa-pay/kassa/adapters/web/apidocs"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/catalog"
	"github.com/kassa-pay/kassa/modules/checkout"
	"github.com/kassa-pay/kassa/modules/events"
	"github.com/kassa-pay/kassa/modules/identity"
	"github.com/kassa-pay/kassa/modules/testclock"
	"github.com/kassa-pay/kassa/openapi"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
	op "github.com/kassa-pay/kassa/openapi/gen/operatorapi"
	"github.com/kassa-pay/kassa/ports"
)

// APIDeps is what the API listener needs.
type APIDeps struct {
	Log           *slog.Logger
	Identity      *identity.Service
	Catalog       *catalog.Service
	Checkout      *checkout.Service
	Events        *events.Service
	Clock         *testclock.Service
	Limiter       ports.RateLimiter
	Idem          ports.IdempotencyStore
	OperatorCheck func(authorization string) bool
	Ready         func(context.Context) error
}

// NewAPIHandler assembles the API listener (D1): the merchant API under /v1, the operator API
// under /operator/v1 with /healthz and /readyz, each behind its contract gate; anything else is
// a 404 resource_missing envelope. The reference pages of both APIs (D18) are at /docs and
// /operator/docs.
func NewAPIHandler(d APIDeps) (http.Handler, error) {
	merchantSpec, err := openapi.LoadMerchant()
	if err != nil {
		return nil, fmt.Errorf("merchant spec: %w", err)
	}
	operatorSpec, err := openapi.LoadOperator()
	if err != nil {
		return nil, fmt.Errorf("operator spec: %w", err)
	}
	strictOpts := api.StrictHTTPServerOptions{
		RequestErrorHandlerFunc: func(w http.ResponseWriter, r *http.Request, _ error) {
			WriteError(w, r, core.Invalid(codeBodyInvalidJSON, "", "The request body is not valid JSON for this endpoint."))
		},
		ResponseErrorHandlerFunc: WriteError,
	}
	merchant := api.NewStrictHandlerWithOptions(&merchantAPI{
		catalog: d.Catalog, checkout: d.Checkout, events: d.Events, clock: d.Clock, spec: openapi.MerchantJSON,
	}, nil, strictOpts)
	merchantMux := api.HandlerWithOptions(merchant, api.StdHTTPServerOptions{
		BaseRouter:       http.NewServeMux(),
		ErrorHandlerFunc: paramError,
	})
	merchantGate, err := NewGate(GateConfig{
		Spec: merchantSpec, Authenticate: d.Identity.Authenticate, Limiter: d.Limiter,
		Idempotency: d.Idem, Clocks: d.Clock,
	}, merchantMux)
	if err != nil {
		return nil, err
	}

	operator := op.NewStrictHandlerWithOptions(&operatorAPI{identity: d.Identity, ready: d.Ready, spec: openapi.OperatorJSON}, nil,
		op.StrictHTTPServerOptions{
			RequestErrorHandlerFunc:  strictOpts.RequestErrorHandlerFunc,
			ResponseErrorHandlerFunc: WriteError,
		})
	operatorMux := op.HandlerWithOptions(operator, op.StdHTTPServerOptions{BaseRouter: http.NewServeMux(), ErrorHandlerFunc: paramError})
	operatorGate, err := NewGate(GateConfig{Spec: operatorSpec, CheckToken: d.OperatorCheck}, operatorMux)
	if err != nil {
		return nil, err
	}

	root := http.NewServeMux()
	root.Handle("/v1/", merchantGate)
	root.Handle("/operator/v1/", operatorGate)
	root.Handle("/healthz", operatorGate)
	root.Handle("/readyz", operatorGate)
	root.HandleFunc("/", notFound)
	apidocs.Merchant.Mount(root)
	apidocs.Operator.Mount(root)
	return Outer(d.Log, root), nil
}

// Placeholder serves a listener whose pages come with a later issue: every path is a 404
// envelope, so the origin exists (and its base URL is embedded in sessions) from the start.
func Placeholder(log *slog.Logger, name string) http.Handler {
	return Outer(log.With("listener", name), http.HandlerFunc(notFound))
}

func notFound(w http.ResponseWriter, r *http.Request) {
	WriteError(w, r, core.Invalid(codeResourceMissing, "", "Unrecognized request URL (%s %s).", r.Method, r.URL.Path))
}

// paramError answers a parameter the generated router could not bind (the gate's validation
// normally reports it first).
func paramError(w http.ResponseWriter, r *http.Request, err error) {
	WriteError(w, r, core.Invalid("parameter_invalid", "", "A parameter is invalid: %s", err.Error()))
}
