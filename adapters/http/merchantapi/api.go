package merchantapi

import (
	"fmt"
	"net/http"

	"github.com/kassa-pay/kassa/adapters/http/kit"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/billing"
	"github.com/kassa-pay/kassa/modules/catalog"
	"github.com/kassa-pay/kassa/modules/checkout"
	"github.com/kassa-pay/kassa/modules/events"
	"github.com/kassa-pay/kassa/modules/identity"
	"github.com/kassa-pay/kassa/modules/testclock"
	"github.com/kassa-pay/kassa/openapi"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
	"github.com/kassa-pay/kassa/ports"
)

// Deps is what the merchant API needs.
type Deps struct {
	Identity *identity.Service
	Catalog  *catalog.Service
	Billing  *billing.Service
	Checkout *checkout.Service
	Events   *events.Service
	Clock    *testclock.Service
	Limiter  ports.RateLimiter
	Idem     ports.IdempotencyStore
	// UoW is required with Idem: a keyed POST of the one-transaction shape runs in one unit
	// of work; at most Transactions of them hold their transaction at once (0: no bound).
	UoW          ports.UnitOfWorkOf[ports.IdempotencyTx]
	Transactions int
	// BaseURL is the API's public base URL (KASSA_API_URL), named in the served spec's servers.
	BaseURL string
}

// New assembles the merchant API (everything under /v1 on the API listener): the contract
// gate with API-key authentication, rate limits and idempotency in front of the generated
// strict server. Mount it inside kit.Outer.
func New(d Deps) (http.Handler, error) {
	spec, err := openapi.LoadMerchant()
	if err != nil {
		return nil, fmt.Errorf("merchant spec: %w", err)
	}
	served, err := openapi.Served(openapi.MerchantJSON, d.BaseURL)
	if err != nil {
		return nil, err
	}
	strict := api.NewStrictHandlerWithOptions(&merchantAPI{
		catalog: d.Catalog, billing: d.Billing, checkout: d.Checkout, events: d.Events, clock: d.Clock, spec: served,
	}, nil, api.StrictHTTPServerOptions{
		RequestErrorHandlerFunc:  kit.BodyInvalidJSON,
		ResponseErrorHandlerFunc: kit.WriteError,
	})
	mux := api.HandlerWithOptions(strict, api.StdHTTPServerOptions{
		BaseRouter:       http.NewServeMux(),
		ErrorHandlerFunc: kit.ParamError,
	})
	return kit.NewGate(kit.GateConfig{
		Spec: spec, Authenticate: d.Identity.Authenticate, Limiter: d.Limiter,
		Idempotency: d.Idem, UnitOfWork: d.UoW, Transactions: d.Transactions, Wall: core.SystemClock{},
	}, mux)
}
