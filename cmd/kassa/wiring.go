package main

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/adapters/fx"
	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/sandbox"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/apps"
	"github.com/kassa-pay/kassa/modules/billing"
	"github.com/kassa-pay/kassa/modules/catalog"
	"github.com/kassa-pay/kassa/modules/checkout"
	"github.com/kassa-pay/kassa/modules/events"
	"github.com/kassa-pay/kassa/modules/identity"
	"github.com/kassa-pay/kassa/modules/invoicing"
	"github.com/kassa-pay/kassa/modules/ledger"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/modules/payouts"
	"github.com/kassa-pay/kassa/modules/scheduler"
	"github.com/kassa-pay/kassa/modules/testclock"
	"github.com/kassa-pay/kassa/modules/webhooks"
	"github.com/kassa-pay/kassa/ports"
)

// app is the wired application: modules over their Postgres stores.
type app struct {
	db        *sqlx.DB
	identity  *identity.Service
	dashboard *identity.Dashboard // set by serve, which owns the sign-in throttle settings
	catalog   *catalog.Service
	checkout  *checkout.Service
	invoices  *invoicing.Service
	billing   *billing.Service
	mrr       *billing.MRRHistory
	testclock *testclock.Service
	due       *scheduler.Registry
	payments  *payments.Sweeper
	attempts  *payments.AttemptSweeper
	refunds   *payments.Refunder
	disputes  *payments.Disputes
	ledger    *ledger.Service
	payouts   *payouts.Service
	wall      core.Clock
	events    *events.Service
	apps      *apps.Service
	appReader *postgres.AppReader
	webhooks  *webhooks.Service // set by serve, which owns the secret-sealing key
	appHooks  *webhooks.AppService
	idem      *postgres.IdempotencyStore
	uow       *postgres.UnitOfWork // the transaction a request's changes and its idempotency record share
}

// keyedUoW is the unit of work of the idempotency gate's one-transaction shape.
func (a *app) keyedUoW() ports.UnitOfWorkOf[ports.IdempotencyTx] {
	return postgres.Bind(a.uow, func(tx *postgres.Tx) ports.IdempotencyTx { return tx })
}

// clockWiring is what the test clock needs of the process: the id of its presence (the zero
// value for a process that runs no advance: the operator subcommands), how long an advance
// request waits, and the log.
type clockWiring struct {
	Owner int32
	Wait  time.Duration
	Log   *slog.Logger
}

func wire(db *sqlx.DB, checkoutURL string, fees payments.FeeComputer, clocks clockWiring) *app {
	clock := core.SystemClock{}
	// The due-work processors: the background scheduler and the test clock run the same ones.
	due := scheduler.NewRegistry()
	tc, err := testclock.NewService(postgres.NewTestClockStore(db, clocks.Owner), clock, due,
		testclock.Options{Wait: clocks.Wait, Log: clocks.Log})
	if err != nil {
		panic(err) // every argument is given here
	}
	uow := postgres.NewUnitOfWork(db)
	// Every change of a product or a price runs in a unit of work, seen as catalog's Tx (the
	// catalog store bound to the transaction).
	cat, err := catalog.NewService(postgres.NewCatalogStore(db), postgres.Bind(uow, func(tx *postgres.Tx) catalog.Tx { return tx }), tc)
	if err != nil {
		panic(err) // every argument is given here
	}
	sessions := postgres.NewSessionStore(db)
	// Every change of a session runs in a unit of work over the one transaction type, seen as
	// checkout's Tx (sessions + payments' repositories + outbox + mail queue;
	// docs/composition.md): create, cancel, expire, lazy expiry, the sweep, and the charges of
	// sessions (payments' charge protocol, with checkout as the owner of its payable kind).
	checkoutTx := postgres.Bind(uow, func(tx *postgres.Tx) checkout.Tx { return tx })
	if fees == nil { // operator subcommands: nothing is charged
		fees = payments.NewFeeCalculator(payments.DefaultFeeSchedule(), fx.NewSample())
	}
	// The sandbox charges the test environment and remembers its answers in sandbox_charges
	// (its Lookup answers the charge-attempt sweep across restarts); live has no processor
	// adapter yet, so live confirmations are refused, never faked.
	var sb sandbox.Journal = postgres.NewSandboxJournal(db)
	proc := sandbox.NewWithJournal(sb)
	sessionKind, err := checkout.BindPayableKind(checkoutTx)
	if err != nil {
		panic(err)
	}
	// Invoices are the second payable kind: every change of an invoice, and every step of its
	// charges, runs in a unit of work seen as invoicing's Tx.
	invoicingTx := postgres.Bind(uow, func(tx *postgres.Tx) invoicing.Tx { return tx })
	// A subscription's invoice, once paid, changes its subscription in the same unit of work
	// (billing, set below once its service exists).
	subPayments := &subscriptionPayments{}
	invoiceKind, err := invoicing.BindPayableKind(invoicingTx, checkoutURL, subPayments)
	if err != nil {
		panic(err)
	}
	charger, err := payments.NewCharger(payments.ChargerDeps{
		Fees: fees, Processors: map[core.Environment]ports.Processor{core.EnvTest: proc},
		Attempts: postgres.NewChargeAttemptStore(db), Wall: core.RecordClock{}, Kinds: []payments.Kind{sessionKind, invoiceKind},
	})
	if err != nil {
		panic(err) // every argument is given above
	}
	ident, err := identity.NewService(postgres.NewIdentityStore(db), clock)
	if err != nil {
		panic(err)
	}
	installed, err := apps.NewService(postgres.NewAppStore(db), clock)
	if err != nil {
		panic(err)
	}
	// Subscription-mode checkout sessions start their subscriptions through billing (set
	// below once its service exists).
	coSubs := &checkoutSubscriptions{}
	co, err := checkout.NewService(checkout.Deps{Store: sessions, UoW: checkoutTx, Prices: catalogPrices{cat}, Clocks: tc,
		CheckoutBaseURL: checkoutURL, Charger: charger, Merchants: identityMerchants{ident}, Subscriptions: coSubs})
	if err != nil {
		panic(err) // every argument is given here
	}
	due.Register("checkout session expiry", co)
	inv, err := invoicing.NewService(invoicing.Deps{Store: postgres.NewInvoiceStore(db), UoW: invoicingTx, Clocks: tc,
		Prices: invoicePrices{catalogPrices{cat}}, Charger: charger, CheckoutBaseURL: checkoutURL, Methods: subPayments,
		Merchants: identityMerchants{ident}})
	if err != nil {
		panic(err) // every argument is given here
	}
	// SEPA settlement and announced disputes (D9), in due order; a test clock advance runs
	// them too (D12). The processor of each payment's environment gives the outcomes. A
	// settlement is written in a unit of work of its payable's owner (checkout for sessions),
	// found through the charger's kinds; a dispute in one over payments.Tx.
	ps, err := payments.NewSweeper(postgres.NewPaymentStore(db), postgres.Bind(uow, func(tx *postgres.Tx) payments.Tx { return tx }),
		map[core.Environment]payments.Settlements{core.EnvTest: proc}, charger)
	if err != nil {
		panic(err) // every argument is given here
	}
	due.Register("payments settlement and disputes", ps)
	// The dispute lifecycle (D16): evidence from the dashboard, and the sweep that closes due
	// disputes (lost at the evidence deadline, decided a day after evidence is submitted),
	// moving the payment with the dispute in one unit of work; a test clock advance runs it in
	// time order with the rest (D12).
	disputes, err := payments.NewDisputes(postgres.NewDisputeStore(db),
		postgres.Bind(uow, func(tx *postgres.Tx) payments.Tx { return tx }), tc)
	if err != nil {
		panic(err) // every argument is given here
	}
	due.Register("dispute lifecycle", disputes)
	// Charge attempts left pending (an outcome that failed to commit, a process that died
	// during the call) are resolved by asking the processor once they are older than
	// payments.AttemptGrace (wall-clock time, so a test clock advance has nothing to add).
	as, err := payments.NewAttemptSweeper(charger)
	if err != nil {
		panic(err)
	}
	due.Register("charge attempts left pending", as)
	// Refunds call the processor (the sandbox for test), so they are recorded pending, given
	// back with no transaction open and applied in a second unit of work; those left pending
	// (a process that died during the call) are resolved by lookup after payments.RefundGrace.
	refunder, err := payments.NewRefunder(payments.RefunderDeps{
		UoW:     postgres.Bind(uow, func(tx *postgres.Tx) payments.RefundTx { return tx }),
		Refunds: postgres.NewRefundStore(db), Processors: map[core.Environment]ports.Refunder{core.EnvTest: proc},
		Clocks: tc, Wall: clock,
	})
	if err != nil {
		panic(err)
	}
	due.Register("refunds left pending", refunder)
	// Customers, saved payment methods and subscriptions; the sandbox saves methods in test.
	bill, err := billing.NewService(billing.Deps{Store: postgres.NewBillingStore(db),
		UoW: postgres.Bind(uow, func(tx *postgres.Tx) billing.Tx { return tx }), Clocks: tc,
		Savers: map[core.Environment]ports.MethodSaver{core.EnvTest: proc}, Prices: subscriptionPrices{catalogPrices{cat}},
		Invoices: billingInvoices{inv}, Charger: charger, InvoiceKind: invoicing.Kind.Name})
	if err != nil {
		panic(err) // every argument is given here
	}
	subPayments.bill = bill
	coSubs.bill = bill
	due.Register("subscription expiry and cancellation", bill)
	// Pending balance becomes available at its available_on, on the scope's clock: a state
	// sweep over the release queue, so a test clock advance releases funds in time order too.
	ledgerStore := postgres.NewLedgerStore(db)
	releaser, err := ledger.NewReleaser(postgres.Bind(uow, func(tx *postgres.Tx) ledger.Tx { return tx }), ledgerStore)
	if err != nil {
		panic(err)
	}
	due.Register("balance releases", releaser)
	balances, err := ledger.NewService(ledgerStore)
	if err != nil {
		panic(err)
	}
	// The daily payouts, at 00:00 UTC of each environment's clock: recorded with their ledger
	// postings, sent through the environment's rail with no transaction open, paid on their
	// arrival date. Test has the sandbox rail; live has none yet, so no live payouts are made.
	po, err := payouts.NewService(payouts.Deps{
		UoW: postgres.Bind(uow, func(tx *postgres.Tx) payouts.Tx { return tx }), Store: postgres.NewPayoutStore(db),
		Ledger: ledgerStore, Rails: map[core.Environment]ports.PayoutRail{core.EnvTest: sandbox.PayoutRail{}},
		Clocks: tc, Wall: clock,
	})
	if err != nil {
		panic(err)
	}
	due.Register("daily payouts", po)
	// The daily MRR snapshot, at 00:00 UTC of each environment's clock; registered after the
	// subscription sweeps, so a renewal or resumption due at the same midnight comes first.
	mrr, err := billing.NewMRRHistory(billing.MRRDeps{UoW: postgres.Bind(uow, func(tx *postgres.Tx) billing.MRRTx { return tx }),
		Store: postgres.NewMRRStore(db), Clocks: tc, Wall: clock})
	if err != nil {
		panic(err)
	}
	due.Register("daily MRR snapshots", mrr)
	return &app{
		mrr:       mrr,
		ledger:    balances,
		payouts:   po,
		db:        db,
		identity:  ident,
		apps:      installed,
		appReader: postgres.NewAppReader(db),
		catalog:   cat,
		checkout:  co,
		invoices:  inv,
		billing:   bill,
		testclock: tc,
		due:       due,
		payments:  ps,
		attempts:  as,
		refunds:   refunder,
		disputes:  disputes,
		wall:      clock,
		events:    events.NewService(postgres.NewEventStore(db)),
		idem:      postgres.NewIdempotencyStore(db, db), // serve gives the held keys a pool of their own
		uow:       uow,
	}
}

// The session expiry and the payments sweep tell the test clock their due times, so an advance
// interleaves expiries, settlements and disputes in time order (D12).
var (
	_ scheduler.NextDuer = (*checkout.Service)(nil)
	_ scheduler.NextDuer = (*payments.Sweeper)(nil)
	_ scheduler.NextDuer = (*payments.Disputes)(nil)
	_ scheduler.NextDuer = (*billing.Service)(nil)
	_ scheduler.NextDuer = (*ledger.Releaser)(nil)
	_ scheduler.NextDuer = (*payouts.Service)(nil)
	_ scheduler.NextDuer = (*billing.MRRHistory)(nil)
)

// catalogPrices lets checkout look prices up in the catalog (checkout → catalog is a natural
// dependency; the translation keeps checkout free of catalog's types).
type catalogPrices struct{ cat *catalog.Service }

func (c catalogPrices) LookupPrice(ctx context.Context, scope core.Scope, id string) (*checkout.PriceInfo, error) {
	p, err := c.cat.FindPrice(ctx, scope, id)
	if err != nil {
		return nil, err
	}
	out := &checkout.PriceInfo{
		ID: p.ID(), Active: p.Active(), Recurring: p.Recurring() != nil, UnitAmount: p.UnitAmount(),
		Currency: p.Currency(), ProductID: p.ProductID(),
	}
	if r := p.Recurring(); r != nil {
		out.Interval, out.IntervalCount = r.Interval, r.IntervalCount
		if r.TrialPeriodDays != nil {
			out.TrialPeriodDays = *r.TrialPeriodDays
		}
	}
	return out, nil
}

func newLogger(format string) *slog.Logger {
	if format == "text" {
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return slog.New(slog.NewJSONHandler(os.Stderr, nil))
}

// lookupInvoicePrice reads a price for an invoice's catalog line, with its product's name.
func (c catalogPrices) lookupInvoicePrice(ctx context.Context, scope core.Scope, id string) (*invoicing.PriceInfo, error) {
	p, err := c.cat.FindPrice(ctx, scope, id)
	if err != nil {
		return nil, err
	}
	prod, err := c.cat.GetProduct(ctx, scope, p.ProductID())
	if err != nil {
		return nil, err
	}
	return &invoicing.PriceInfo{ID: p.ID(), Active: p.Active(), Recurring: p.Recurring() != nil, UnitAmount: p.UnitAmount(),
		Currency: p.Currency(), ProductID: p.ProductID(), ProductName: prod.Name()}, nil
}

// invoicePrices adapts the catalog to invoicing.PriceLookup.
type invoicePrices struct{ catalogPrices }

func (c invoicePrices) LookupPrice(ctx context.Context, scope core.Scope, id string) (*invoicing.PriceInfo, error) {
	return c.lookupInvoicePrice(ctx, scope, id)
}

// InvoiceMerchant reads the merchant an invoice shows.
func (m identityMerchants) InvoiceMerchant(ctx context.Context, merchantID string) (invoicing.Merchant, error) {
	mer, err := m.id.GetMerchant(ctx, merchantID)
	if err != nil {
		return invoicing.Merchant{}, err
	}
	return invoicing.Merchant{Name: mer.Name()}, nil
}

// subscriptionPrices adapts the catalog to billing.PriceLookup.
type subscriptionPrices struct{ catalogPrices }

func (c subscriptionPrices) LookupSubscriptionPrice(ctx context.Context, scope core.Scope, id string) (*billing.Price, error) {
	p, err := c.cat.FindPrice(ctx, scope, id)
	if err != nil {
		return nil, err
	}
	out := &billing.Price{ID: p.ID(), Active: p.Active(), UnitAmount: p.UnitAmount(), Currency: p.Currency(), ProductID: p.ProductID()}
	if r := p.Recurring(); r != nil {
		out.Recurring, out.Interval, out.IntervalCount, out.UsageType, out.TrialPeriodDays = true, r.Interval, r.IntervalCount, r.UsageType, r.TrialPeriodDays
	}
	return out, nil
}
