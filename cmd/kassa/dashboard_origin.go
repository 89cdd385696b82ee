package main

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	httpapi "github.com/kassa-pay/kassa/adapters/http"
	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/signing"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/identity"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/modules/webhooks"
	"github.com/kassa-pay/kassa/ports"
)

// dashboardOrigin is the handler of the dashboard listener (D1): the JSON API under /api/
// (session cookie + CSRF, openapi/dashboard.yaml) and the pages on every other path.
// rates is the FX source fees are converted with (the payment detail shows the rate used).
func dashboardOrigin(log *slog.Logger, a *app, cfg config, rates ports.FXRates) (http.Handler, error) {
	key, err := signing.ParseKey(cfg.WebhookKey)
	if err != nil {
		return nil, fmt.Errorf("KASSA_WEBHOOK_SECRET_KEY: %w", err)
	}
	box, err := signing.NewBox(key)
	if err != nil {
		return nil, err
	}
	// The development mailbox is read here; messages land in it when no SMTP server is set.
	mailbox, err := postgres.NewMailboxStore(a.db, a.testclock, "Kassa <no-reply@kassa.invalid>")
	if err != nil {
		return nil, err
	}
	payStore := postgres.NewPaymentStore(a.db)
	apiHandler, err := httpapi.NewDashboardAPI(httpapi.DashboardDeps{
		Log:          log,
		Identity:     a.identity,
		Dashboard:    a.dashboard,
		Catalog:      a.catalog,
		Checkout:     a.checkout,
		Events:       a.events,
		Payments:     payments.NewQueries(payStore, payStore, rates),
		Webhooks:     webhooks.NewService(postgres.NewWebhookStore(a.db, box), core.SystemClock{}),
		Mailbox:      mailbox,
		SecureCookie: strings.HasPrefix(cfg.DashboardURL, "https://"),
	})
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/api/", apiHandler)
	mux.Handle("/", dashboardPages())
	return httpapi.Outer(log.With("listener", "dashboard"), mux), nil
}

// newDashboard wires the dashboard sign-in use cases (sessions on the wall clock: the sandbox
// test clock never ends a dashboard session).
func newDashboard(a *app) *identity.Dashboard {
	return identity.NewDashboard(postgres.NewDashboardStore(a.db), core.SystemClock{}, identity.DefaultThrottle)
}

// dashboardPages serves the dashboard's pages. Until the pages land it is one plain page that
// says where the JSON API is.
func dashboardPages() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Content-Security-Policy", "default-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		if r.URL.Path != "/" {
			w.WriteHeader(http.StatusNotFound)
		}
		_, _ = w.Write([]byte(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Kassa dashboard</title></head>` +
			`<body><h1>Kassa dashboard</h1><p>The dashboard JSON API is served under <code>/api/v1</code> ` +
			`(sign in with <code>POST /api/v1/session</code>).</p></body></html>`))
	})
}
