package main

import (
	"log/slog"
	"net/http"

	"github.com/kassa-pay/kassa/adapters/http/kit"
	checkoutweb "github.com/kassa-pay/kassa/adapters/web/checkout"
)

// checkoutPages is the hosted checkout (every path of the checkout listener but /api/): the
// pages over the buyer use cases of the checkout service, behind the same outer middleware
// as the APIs (request id, panic recovery, an access log line without the query string, so
// the client secret in `?cs=` is never logged).
func checkoutPages(log *slog.Logger, a *app) http.Handler {
	log = log.With("listener", "checkout")
	return kit.Outer(log, checkoutweb.New(checkoutweb.Deps{Log: log, Buyer: a.checkout, Invoices: a.invoices}))
}
