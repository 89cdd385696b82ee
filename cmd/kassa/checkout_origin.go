package main

import (
	"context"
	"log/slog"
	"net/http"
	"strings"

	"github.com/kassa-pay/kassa/adapters/http/checkoutapi"
	"github.com/kassa-pay/kassa/adapters/http/kit"
	"github.com/kassa-pay/kassa/adapters/web/apidocs"
	"github.com/kassa-pay/kassa/modules/checkout"
	"github.com/kassa-pay/kassa/modules/identity"
)

// checkoutOrigin is the handler of the checkout listener (D1): /api/ is the browser API
// (openapi/checkout.yaml), every other path the hosted pages.
func checkoutOrigin(log *slog.Logger, a *app, pages http.Handler, limits *kit.RequestLimits, baseURL string) (http.Handler, error) {
	api, err := checkoutapi.NewCheckoutAPIHandler(checkoutapi.CheckoutAPIDeps{Log: log, Checkout: a.checkout, Invoices: a.invoices, Billing: a.billing, Limits: limits, BaseURL: baseURL})
	if err != nil {
		return nil, err
	}
	// The API's reference page sits under /api/ but is not part of the API.
	docs := http.NewServeMux()
	apidocs.Checkout.Mount(docs)
	// A prefix switch, not a ServeMux: the mux would answer "//api/…" or "/api" with a
	// redirect page before either handler (each inside kit.Outer) could answer the envelope.
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h, pattern := docs.Handler(r); pattern != "" {
			h.ServeHTTP(w, r)
			return
		}
		if r.URL.Path == "/api" || strings.HasPrefix(r.URL.Path, "/api/") {
			api.ServeHTTP(w, r)
			return
		}
		pages.ServeHTTP(w, r)
	}), nil
}

// identityMerchants adapts identity to checkout.MerchantNames.
type identityMerchants struct{ id *identity.Service }

func (m identityMerchants) BuyerMerchant(ctx context.Context, merchantID string) (checkout.BuyerMerchant, error) {
	mer, err := m.id.GetMerchant(ctx, merchantID)
	if err != nil {
		return checkout.BuyerMerchant{}, err
	}
	return checkout.BuyerMerchant{Name: mer.Name(), Onboarded: mer.Onboarded()}, nil
}
