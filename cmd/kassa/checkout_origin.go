package main

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/kassa-pay/kassa/adapters/http/checkoutapi"
	"github.com/kassa-pay/kassa/adapters/http/kit"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/checkout"
	"github.com/kassa-pay/kassa/modules/identity"
	"github.com/kassa-pay/kassa/ports"
)

// checkoutOrigin is the handler of the checkout listener (D1): /api/ is the browser API
// (openapi/checkout.yaml), every other path the hosted pages.
func checkoutOrigin(log *slog.Logger, a *app, pages http.Handler, limits *kit.RequestLimits) (http.Handler, error) {
	api, err := checkoutapi.NewCheckoutAPIHandler(checkoutapi.CheckoutAPIDeps{Log: log, Checkout: a.checkout, Limits: limits})
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/api/", api)
	mux.Handle("/", pages)
	return mux, nil
}

// enableBuyer wires the buyer side of checkout: the sandbox processor charges the test
// environment; live has no processor adapter yet, so live confirmations are refused
// (merchant_not_ready before onboarding, else processor_unavailable), never faked.
func enableBuyer(co *checkout.Service, id *identity.Service, sandbox ports.Processor) {
	co.EnableBuyer(checkout.BuyerDeps{
		Processors: map[core.Environment]ports.Processor{core.EnvTest: sandbox},
		Merchants:  identityMerchants{id},
	})
}

// identityMerchants adapts identity to checkout.MerchantNames.
type identityMerchants struct{ id *identity.Service }

func (m identityMerchants) BuyerMerchant(ctx context.Context, merchantID string) (checkout.BuyerMerchant, error) {
	mer, err := m.id.GetMerchant(ctx, merchantID)
	if err != nil {
		return checkout.BuyerMerchant{}, err
	}
	return checkout.BuyerMerchant{Name: mer.Name, Onboarded: mer.Onboarded}, nil
}
