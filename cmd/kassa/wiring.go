package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/adapters/fx"
	httpapi "github.com/kassa-pay/kassa/adapters/http"
	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/catalog"
	"github.com/kassa-pay/kassa/modules/checkout"
	"github.com/kassa-pay/kassa/modules/events"
	"github.com/kassa-pay/kassa/modules/identity"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/modules/testclock"
)

// app is the wired application: modules over their Postgres stores.
type app struct {
	db        *sqlx.DB
	identity  *identity.Service
	dashboard *identity.Dashboard
	catalog   *catalog.Service
	checkout  *checkout.Service
	testclock *testclock.Service
	events    *events.Service
	idem      *postgres.IdempotencyStore
}

func wire(db *sqlx.DB, checkoutURL string) *app {
	clock := core.SystemClock{}
	tc := testclock.NewService(postgres.NewTestClockStore(db), clock)
	cat := catalog.NewService(postgres.NewCatalogStore(db), tc)
	co := checkout.NewService(postgres.NewSessionStore(db), catalogPrices{cat}, tc, checkoutURL, httpapi.PresentSession)
	// Fees (D7) need the ECB reference rate of the charge day. The calculator takes the
	// ports.FXRates port; the bundled sample fixture (fx.NewSample) is wired here for every
	// environment only because nothing calls checkout.Complete over HTTP yet. Before the
	// browser API takes live payments, a production rate source (fx.ECB refreshed from the
	// ECB daily XML) must replace it explicitly: the sample's rates stop at its last day.
	co.EnablePayments(payments.NewFeeCalculator(payments.DefaultFeeSchedule(), fx.NewSample()), httpapi.PresentPayment)
	tc.AddProcessor(co)
	a := &app{
		db:        db,
		identity:  identity.NewService(postgres.NewIdentityStore(db), clock),
		catalog:   cat,
		checkout:  co,
		testclock: tc,
		events:    events.NewService(postgres.NewEventStore(db)),
		idem:      postgres.NewIdempotencyStore(db),
	}
	a.dashboard = newDashboard(a)
	return a
}

// catalogPrices lets checkout look prices up in the catalog (checkout → catalog is a natural
// dependency; the translation keeps checkout free of catalog's types).
type catalogPrices struct{ cat *catalog.Service }

func (c catalogPrices) LookupPrice(ctx context.Context, scope core.Scope, id string) (*checkout.PriceInfo, error) {
	p, err := c.cat.FindPrice(ctx, scope, id)
	if err != nil {
		return nil, err
	}
	return &checkout.PriceInfo{
		ID: p.ID(), Active: p.Active(), Recurring: p.Recurring() != nil, UnitAmount: p.UnitAmount(),
		Currency: p.Currency(), ProductID: p.ProductID(),
	}, nil
}

func newLogger(format string) *slog.Logger {
	if format == "text" {
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return slog.New(slog.NewJSONHandler(os.Stderr, nil))
}
