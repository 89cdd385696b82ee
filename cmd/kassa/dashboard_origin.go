package main

import (
	"log/slog"
	"net/http"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/adapters/http/dashboardapi"
	"github.com/kassa-pay/kassa/adapters/http/kit"
	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/web/apidocs"
	"github.com/kassa-pay/kassa/adapters/web/consent"
	dashboardweb "github.com/kassa-pay/kassa/adapters/web/dashboard"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/billing"
	"github.com/kassa-pay/kassa/modules/identity"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/ports"
)

// dashboardOrigin is the handler of the dashboard listener (D1): the JSON API under /api/
// (session cookie + CSRF, openapi/dashboard.yaml) and the pages on every other path.
// rates is the FX source fees are converted with (the payment detail shows the rate used).
func dashboardOrigin(log *slog.Logger, a *app, cfg config, rates ports.FXRates, th throttles) (http.Handler, error) {
	// The development mailbox is read here; messages land in it when no SMTP server is set.
	mailbox, err := postgres.NewMailboxStore(a.db, a.testclock, cfg.MailFrom)
	if err != nil {
		return nil, err
	}
	settings, err := invoiceSettings(a)
	if err != nil {
		return nil, err
	}
	payStore := postgres.NewPaymentStore(a.db)
	payQueries, err := payments.NewQueries(payStore, payStore, rates)
	if err != nil {
		return nil, err
	}
	billingReads := postgres.NewBillingReads(a.db)
	billingQueries, err := billing.NewQueries(postgres.NewBillingStore(a.db), billingReads)
	if err != nil {
		return nil, err
	}
	apiHandler, err := dashboardapi.NewDashboardAPI(dashboardapi.DashboardDeps{
		Billing:         a.billing,
		BillingQueries:  billingQueries,
		CustomerHistory: billingReads,
		MRRHistory:      a.mrr,
		Identity:        a.identity,
		Dashboard:       a.dashboard,
		Catalog:         a.catalog,
		Checkout:        a.checkout,
		Invoices:        a.invoices,
		Refunds:         a.refunds,
		Disputes:        a.disputes,
		Ledger:          a.ledger,
		Payouts:         a.payouts,
		PayoutReads:     a.payouts,
		Idempotency:     a.idem,
		UnitOfWork:      a.keyedUoW(),
		Wall:            a.wall,
		Transactions:    max(1, a.db.Stats().MaxOpenConnections-1),
		Events:          a.events,
		Payments:        payQueries,
		Webhooks:        a.webhooks,
		Apps:            a.apps,
		AppHooks:        a.appHooks,
		Mailbox:         mailbox,
		Settings:        settings,
		Clocks:          a.testclock,
		Declines:        postgres.NewDeclineReader(a.db),
		ClientIP:        th.clientIP,
		SecureCookie:    strings.HasPrefix(cfg.DashboardURL, "https://"),
		AuthThrottle:    th.dashboardAuth,
		Limits:          th.dashboard,
		BaseURL:         cfg.DashboardURL,
	})
	if err != nil {
		return nil, err
	}
	consentPage, err := consent.New(consent.Deps{Apps: a.apps, Sessions: a.dashboard, Log: log})
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/oauth/authorize", consentPage)
	mux.Handle("/api/", apiHandler)
	mux.Handle("/api", apiHandler) // the envelope, not the mux's redirect to /api/
	mux.Handle("/", dashboardweb.New())
	apidocs.Dashboard.Mount(mux)
	return kit.Outer(log.With("listener", "dashboard"), mux), nil
}

// dashboardUseCases are the dashboard's sign-in and session use cases with the configured
// throttle; the dashboard API signs in through them and the sweep purges through them.
// Sessions run on the wall clock: the sandbox test clock never ends a dashboard session.
func dashboardUseCases(db *sqlx.DB, cfg config) *identity.Dashboard {
	d, err := identity.NewDashboard(postgres.NewDashboardStore(db), core.SystemClock{}, identity.ThrottlePolicy{
		PerPair: cfg.LoginPerPair, PerIP: cfg.LoginPerIP, EmailBackoffAfter: cfg.LoginBackoff, Window: cfg.LoginWindow,
	})
	if err != nil {
		panic(err) // every argument is given here
	}
	return d
}
