package main

import (
	"context"
	"log/slog"
	"net/http"

	httpapi "github.com/kassa-pay/kassa/adapters/http"
	checkoutweb "github.com/kassa-pay/kassa/adapters/web/checkout"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/checkout"
)

// checkoutPages is the checkout listener until the browser API lands: the hosted pages for
// every path except /api/, which answers the 404 envelope. The buyer use cases are taken from
// the checkout service when it has them (they are being built in parallel); until then every
// page says the service is unavailable.
func checkoutPages(log *slog.Logger, a *app) http.Handler {
	buyer, ok := any(a.checkout).(checkoutweb.Buyer)
	if !ok {
		buyer = noBuyer{}
	}
	pages := checkoutweb.New(checkoutweb.Deps{Log: log, Buyer: buyer})
	mux := http.NewServeMux()
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		httpapi.WriteError(w, r, core.Invalid("resource_missing", "", "Unrecognized request URL (%s %s).", r.Method, r.URL.Path))
	})
	mux.Handle("/", pages)
	return httpapi.Outer(log.With("listener", "checkout"), mux)
}

var errNoBuyer = core.NewError(core.TypeAPI, "service_unavailable", "", "Hosted checkout is not available yet.")

type noBuyer struct{}

func (noBuyer) BuyerView(context.Context, string, string) (*checkout.BuyerView, error) {
	return nil, errNoBuyer
}
func (noBuyer) Confirm(context.Context, string, string, checkout.ConfirmInput) (*checkout.ConfirmResult, error) {
	return nil, errNoBuyer
}
func (noBuyer) ResolveAction(context.Context, string, string, bool) (*checkout.ConfirmResult, error) {
	return nil, errNoBuyer
}
func (noBuyer) CancelByBuyer(context.Context, string, string) (*checkout.Session, error) {
	return nil, errNoBuyer
}
