// Package httpapi assembles the API listener (D1) from the API packages beside it:
// merchantapi under /v1, appapi (the App API) under /app, and operatorapi under /operator/v1
// with /healthz and /readyz, each
// behind its own contract gate from the shared kit. The browser API of the checkout origin
// (checkoutapi) and the dashboard JSON API (dashboardapi) are mounted by their listeners. The
// folder is adapters/http; the package is named httpapi so it does not shadow net/http.
package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/kassa-pay/kassa/adapters/http/appapi"
	"github.com/kassa-pay/kassa/adapters/http/kit"
	"github.com/kassa-pay/kassa/adapters/http/merchantapi"
	"github.com/kassa-pay/kassa/adapters/http/operatorapi"
	"github.com/kassa-pay/kassa/adapters/web/apidocs"
	"github.com/kassa-pay/kassa/modules/apps"
	"github.com/kassa-pay/kassa/modules/billing"
	"github.com/kassa-pay/kassa/modules/catalog"
	"github.com/kassa-pay/kassa/modules/checkout"
	"github.com/kassa-pay/kassa/modules/events"
	"github.com/kassa-pay/kassa/modules/identity"
	"github.com/kassa-pay/kassa/modules/testclock"
	"github.com/kassa-pay/kassa/modules/webhooks"
	"github.com/kassa-pay/kassa/ports"
)

// APIDeps is what the API listener needs.
type APIDeps struct {
	Log           *slog.Logger
	Identity      *identity.Service
	Catalog       *catalog.Service
	Billing       *billing.Service
	Checkout      *checkout.Service
	Events        *events.Service
	Clock         *testclock.Service
	Limiter       ports.RateLimiter
	Idem          ports.IdempotencyStore
	UoW           ports.UnitOfWorkOf[ports.IdempotencyTx] // required with Idem
	Transactions  int                                     // keyed transactions held at once (merchantapi.Deps)
	OperatorCheck func(authorization string) bool
	Ready         func(context.Context) error
	// AuthThrottle bounds failed authentication per client address across the merchant and
	// operator APIs (the health probes are not throttled); nil: none.
	AuthThrottle *kit.AuthThrottle
	// BaseURL is the API's public base URL (KASSA_API_URL), named in the served specs' servers.
	BaseURL string
	// The App API: installations, its reader, its rate limits per installation (live, test)
	// and its public base URL (KASSA_APP_URL), which proxies to /app on this listener.
	Apps *apps.Service
	// AppHooks manages app webhook endpoints (operator API).
	AppHooks  *webhooks.AppService
	AppReader appapi.Reader
	AppLive   kit.KeyedLimiter
	AppTest   kit.KeyedLimiter
	AppURL    string
}

// NewAPIHandler assembles the API listener (D1): the merchant API under /v1, the operator API
// under /operator/v1 with /healthz and /readyz, each behind its contract gate; anything else is
// a 404 resource_missing envelope. The reference pages of both APIs (D18) are at /docs and
// /operator/docs.
func NewAPIHandler(d APIDeps) (http.Handler, error) {
	merchantGate, err := merchantapi.New(merchantapi.Deps{
		Identity: d.Identity, Catalog: d.Catalog, Billing: d.Billing, Checkout: d.Checkout, Events: d.Events, Clock: d.Clock,
		Limiter: d.Limiter, Idem: d.Idem, UoW: d.UoW, Transactions: d.Transactions, BaseURL: d.BaseURL,
	})
	if err != nil {
		return nil, err
	}
	appAPI, err := appapi.New(appapi.Deps{Apps: d.Apps, Identity: d.Identity, Reader: d.AppReader, Clocks: d.Clock,
		Live: d.AppLive, Test: d.AppTest, BaseURL: d.AppURL})
	if err != nil {
		return nil, err
	}
	operatorGate, err := operatorapi.New(operatorapi.Deps{Identity: d.Identity, Apps: d.Apps, AppHooks: d.AppHooks, CheckToken: d.OperatorCheck, Ready: d.Ready, BaseURL: d.BaseURL})
	if err != nil {
		return nil, err
	}

	root := http.NewServeMux()
	// Each subtree also takes its root without the slash, which the mux would otherwise answer
	// with a redirect page: the gate answers the envelope.
	root.Handle("/v1/", d.AuthThrottle.Wrap(merchantGate))
	root.Handle("/v1", d.AuthThrottle.Wrap(merchantGate))
	root.Handle("/operator/v1/", d.AuthThrottle.Wrap(operatorGate))
	root.Handle("/operator/v1", d.AuthThrottle.Wrap(operatorGate))
	// The App API answers everything under /app in its own envelope (its paths are relative
	// to the app base URL).
	// Failed tokens count against the client address with the merchant and operator APIs'.
	appFront := d.AuthThrottle.WrapWith(http.StripPrefix("/app", appAPI), func(w http.ResponseWriter, r *http.Request, wait time.Duration) {
		appapi.WriteRateLimited(w, r, wait, "Too many failed authentications from this address")
	})
	root.Handle("/app/", appFront)
	root.Handle("/app", appFront)
	root.Handle("/healthz", operatorGate)
	root.Handle("/readyz", operatorGate)
	root.HandleFunc("/", kit.NotFound)
	apidocs.Merchant.Mount(root)
	apidocs.Operator.Mount(root)
	apidocs.App.Mount(root)
	return kit.Outer(d.Log, root), nil
}
