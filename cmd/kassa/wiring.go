package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/adapters/fx"
	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/sandbox"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/catalog"
	"github.com/kassa-pay/kassa/modules/checkout"
	"github.com/kassa-pay/kassa/modules/events"
	"github.com/kassa-pay/kassa/modules/identity"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/modules/testclock"
	"github.com/kassa-pay/kassa/modules/webhooks"
)

// app is the wired application: modules over their Postgres stores.
type app struct {
	db        *sqlx.DB
	identity  *identity.Service
	dashboard *identity.Dashboard // set by serve, which owns the sign-in throttle settings
	catalog   *catalog.Service
	checkout  *checkout.Service
	testclock *testclock.Service
	payments  *payments.Sweeper
	events    *events.Service
	webhooks  *webhooks.Service // set by serve, which owns the secret-sealing key
	idem      *postgres.IdempotencyStore
}

func wire(db *sqlx.DB, checkoutURL string, fees checkout.Fees) *app {
	clock := core.SystemClock{}
	tc := testclock.NewService(postgres.NewTestClockStore(db), clock)
	cat := catalog.NewService(postgres.NewCatalogStore(db), tc)
	sessions := postgres.NewSessionStore(db)
	co := checkout.NewService(sessions, catalogPrices{cat}, tc, checkoutURL)
	if fees == nil { // operator subcommands: nothing is charged
		fees = payments.NewFeeCalculator(payments.DefaultFeeSchedule(), fx.NewSample())
	}
	co.EnablePayments(fees)
	tc.AddProcessor(co)
	// SEPA settlement and announced disputes (D9), in due order; a test clock advance runs
	// them too (D12). The sandbox processor gives the outcomes. The async session events read
	// the session from its store (checkout.Service.SessionEventWithPayment): it is complete (it
	// has a payment), so no lazy expiry or test clock read is involved.
	sb := sandbox.New()
	ps := payments.NewSweeper(postgres.NewPaymentStore(db), sb, co)
	tc.AddProcessor(ps)
	ident := identity.NewService(postgres.NewIdentityStore(db), clock)
	enableBuyer(co, ident, sb)
	return &app{
		db:        db,
		identity:  ident,
		catalog:   cat,
		checkout:  co,
		testclock: tc,
		payments:  ps,
		events:    events.NewService(postgres.NewEventStore(db)),
		idem:      postgres.NewIdempotencyStore(db),
	}
}

// The payments sweep tells the test clock its due times, so an advance interleaves settlements
// and disputes with other modules' work in time order (D12).
var _ testclock.NextDuer = (*payments.Sweeper)(nil)

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
