package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/adapters/sandbox"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/checkout"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/ports"
)

// Sandbox test data (D6).
const (
	ibanSettles  = "DE89370400440532013000"
	ibanFails    = "DE62370400440532013001"
	cardDisputed = "4000000000000259"
)

// dueFixture is a checkout service and the payments sweeper over one database, with the
// sandbox processor and the production presenters.
type dueFixture struct {
	db      *sqlx.DB
	co      *checkout.Service
	sweeper *payments.Sweeper
	proc    *sandbox.Processor
}

func newDueFixture(t *testing.T, db *sqlx.DB) *dueFixture {
	t.Helper()
	// The sandbox stands in for a live processor too, so that live payments exist to sweep.
	co := paymentsOn(db, fixedClocks{payNow}, core.EnvLive)
	proc := sandbox.New()
	return &dueFixture{db: db, co: co, proc: proc,
		sweeper: sweeperOn(db, bothEnvs(proc), co)}
}

// sweeperOn is the payments sweeper as the wiring builds it: its rounds write in units of
// work over payments.Tx.
func sweeperOn(db *sqlx.DB, settle map[core.Environment]payments.Settlements, co *checkout.Service) *payments.Sweeper {
	uow := postgres.Bind(postgres.NewUnitOfWork(db), func(tx *postgres.Tx) payments.Tx { return tx })
	sw, err := payments.NewSweeper(postgres.NewPaymentStore(db), uow, settle, chargerFor(co))
	if err != nil {
		panic(err)
	}
	return sw
}

func bothEnvs(p payments.Settlements) map[core.Environment]payments.Settlements {
	return map[core.Environment]payments.Settlements{core.EnvTest: p, core.EnvLive: p}
}

// pay creates a session in scope and pays it with the card number or IBAN through the
// browser API's use case (at payNow). It returns the session.
func (f *dueFixture) pay(t *testing.T, scope core.Scope, source string) *checkout.Session {
	t.Helper()
	return mustPay(t, f.co, createSession(t, f.co, scope), source)
}

func paymentStatus(t *testing.T, db *sqlx.DB, scope core.Scope, sessionID string) (status string, prev, failure *string) {
	t.Helper()
	var row struct {
		Status  string  `db:"status"`
		Prev    *string `db:"previous_status"`
		Failure *string `db:"failure_code"`
	}
	if err := db.Get(&row, `SELECT status, previous_status, failure_code FROM payments
		WHERE merchant_id = $1 AND environment = $2 AND session_id = $3`, scope.MerchantID, string(scope.Env), sessionID); err != nil {
		t.Fatal(err)
	}
	return row.Status, row.Prev, row.Failure
}

func receipts(t *testing.T, db *sqlx.DB, scope core.Scope) int {
	t.Helper()
	return countRows(t, db, `SELECT count(*) FROM mail_outbox WHERE merchant_id = $1 AND environment = $2 AND kind = 'receipt'`,
		scope.MerchantID, string(scope.Env))
}

func TestSweepSettlesSEPA(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	f := newDueFixture(t, db)
	scope := pgtest.Merchant(t, db)
	ctx := context.Background()
	good := f.pay(t, scope, ibanSettles)
	bad := f.pay(t, scope, ibanFails)
	if receipts(t, db, scope) != 0 {
		t.Fatal("a processing payment has a receipt")
	}

	// Before the settlement time nothing happens.
	if n, err := f.sweeper.ProcessDue(ctx, &scope, payNow.Add(sandbox.SettleDelay-time.Second)); err != nil || n != 0 {
		t.Fatalf("early sweep: %d %v", n, err)
	}
	settled := payNow.Add(sandbox.SettleDelay)
	if n, err := f.sweeper.ProcessDue(ctx, &scope, settled); err != nil || n != 2 {
		t.Fatalf("sweep: %d %v", n, err)
	}
	if st, _, _ := paymentStatus(t, db, scope, good.ID()); st != "succeeded" {
		t.Fatalf("good IBAN: %s", st)
	}
	if st, _, code := paymentStatus(t, db, scope, bad.ID()); st != "failed" || code == nil || *code != ports.DeclineInsufficientFunds {
		t.Fatalf("bad IBAN: %s %v", st, code)
	}
	// Again: nothing left to do.
	if n, err := f.sweeper.ProcessDue(ctx, &scope, settled.Add(time.Hour)); err != nil || n != 0 {
		t.Fatalf("second sweep: %d %v", n, err)
	}

	succ := eventsOf(t, db, scope, payments.EventPaymentIntentSucceeded)
	asyncOK := eventsOf(t, db, scope, payments.EventCheckoutSessionAsyncPaymentSucceeded)
	failed := eventsOf(t, db, scope, payments.EventPaymentIntentPaymentFailed)
	asyncBad := eventsOf(t, db, scope, payments.EventCheckoutSessionAsyncPaymentFailed)
	if len(succ) != 1 || len(asyncOK) != 1 || len(failed) != 1 || len(asyncBad) != 1 {
		t.Fatalf("events: %d %d %d %d", len(succ), len(asyncOK), len(failed), len(asyncBad))
	}
	if succ[0]["status"] != "succeeded" || succ[0]["session_id"] != good.ID() || succ[0]["object"] != "payment" {
		t.Errorf("payment_intent.succeeded object %v", succ[0])
	}
	if asyncOK[0]["id"] != good.ID() || asyncOK[0]["payment"].(map[string]any)["status"] != "succeeded" {
		t.Errorf("async_payment_succeeded object %v", asyncOK[0])
	}
	fp := asyncBad[0]["payment"].(map[string]any)
	if asyncBad[0]["id"] != bad.ID() || fp["status"] != "failed" || fp["failure_code"] != "insufficient_funds" || fp["failure_message"] == "" {
		t.Errorf("async_payment_failed object %v", asyncBad[0])
	}
	if failed[0]["failure_code"] != "insufficient_funds" {
		t.Errorf("payment_failed object %v", failed[0])
	}
	// Stamped at the settlement time; the settled payment (only) has its receipt, dated then.
	if n := countRows(t, db, `SELECT count(*) FROM events WHERE merchant_id = $1 AND type LIKE '%async_payment_%ed'
		AND created = $2`, scope.MerchantID, settled); n != 2 {
		t.Errorf("%d async events at the settlement time", n)
	}
	if n := countRows(t, db, `SELECT count(*) FROM mail_outbox o JOIN payments p ON p.id = o.subject_id
		WHERE p.session_id = $1 AND o.created = $2 AND o.status = 'pending'`, good.ID(), settled); n != 1 || receipts(t, db, scope) != 1 {
		t.Errorf("receipt of the settled payment: %d of %d", n, receipts(t, db, scope))
	}
}

func TestSweepOpensDisputeOnce(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	f := newDueFixture(t, db)
	scope := pgtest.Merchant(t, db)
	ctx := context.Background()
	s := f.pay(t, scope, cardDisputed)
	if receipts(t, db, scope) != 1 {
		t.Fatal("a succeeded card payment has no receipt")
	}
	opens := payNow.Add(sandbox.DisputeDelay)
	if n, err := f.sweeper.ProcessDue(ctx, &scope, opens.Add(-time.Second)); err != nil || n != 0 {
		t.Fatalf("early sweep: %d %v", n, err)
	}
	if n, err := f.sweeper.ProcessDue(ctx, &scope, opens.Add(time.Hour)); err != nil || n != 1 {
		t.Fatalf("sweep: %d %v", n, err)
	}
	if n, err := f.sweeper.ProcessDue(ctx, &scope, opens.Add(48*time.Hour)); err != nil || n != 0 {
		t.Fatalf("second sweep: %d %v", n, err)
	}
	st, prev, _ := paymentStatus(t, db, scope, s.ID())
	if st != "disputed" || prev == nil || *prev != "succeeded" {
		t.Fatalf("status %s, previous %v", st, prev)
	}
	evs := eventsOf(t, db, scope, payments.EventChargeDisputeCreated)
	if len(evs) != 1 {
		t.Fatalf("%d dispute events", len(evs))
	}
	d := evs[0]
	if d["object"] != "dispute" || d["payment_id"] != s.Payment().ID() || d["reason"] != sandbox.DisputeReason ||
		d["status"] != "needs_response" || d["amount"] != float64(2500) || d["currency"] != "EUR" ||
		d["created"] != float64(opens.Unix()) || d["evidence_due_by"] != float64(opens.Add(payments.EvidenceWindow).Unix()) {
		t.Errorf("dispute object %v", d)
	}
	if n := countRows(t, db, `SELECT count(*) FROM disputes d JOIN payments p ON p.merchant_id = d.merchant_id
		AND p.environment = d.environment AND p.dispute_id = d.id WHERE d.id = $1`, d["id"]); n != 1 {
		t.Errorf("dispute row linked to its payment: %d", n)
	}
	// A won dispute (returning to succeeded) does not reopen it.
	if _, err := db.Exec(`UPDATE payments SET status = 'succeeded', previous_status = NULL WHERE session_id = $1`, s.ID()); err != nil {
		t.Fatal(err)
	}
	if n, err := f.sweeper.ProcessDue(ctx, &scope, opens.Add(72*time.Hour)); err != nil || n != 0 {
		t.Fatalf("sweep after a won dispute: %d %v", n, err)
	}
}

// Settlements and disputes of one scope come out in due order whatever the order of the
// payments, and their events are stamped with their due times.
func TestSweepRunsInTimeOrder(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	f := newDueFixture(t, db)
	scope := pgtest.Merchant(t, db)
	f.pay(t, scope, ibanSettles)  // settles at +2 min
	f.pay(t, scope, cardDisputed) // disputed at +1 min
	if n, err := f.sweeper.ProcessDue(context.Background(), &scope, payNow.Add(time.Hour)); err != nil || n != 2 {
		t.Fatalf("sweep: %d %v", n, err)
	}
	var types []core.EventType
	if err := db.Select(&types, `SELECT type FROM events WHERE merchant_id = $1 AND created > $2 ORDER BY seq`,
		scope.MerchantID, payNow); err != nil {
		t.Fatal(err)
	}
	want := []core.EventType{payments.EventChargeDisputeCreated, payments.EventPaymentIntentSucceeded,
		payments.EventCheckoutSessionAsyncPaymentSucceeded}
	if len(types) != len(want) {
		t.Fatalf("events %v, want %v", types, want)
	}
	for i := range want {
		if types[i] != want[i] {
			t.Fatalf("events %v, want %v", types, want)
		}
	}
}

// Several sweepers at once (the background sweep of several processes and a test clock
// advance): every payment changes once, with one set of events and one receipt.
func TestSweepExactlyOnceUnderConcurrency(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	f := newDueFixture(t, db)
	scope := pgtest.Merchant(t, db)
	live := core.Scope{MerchantID: scope.MerchantID, Env: core.EnvLive}
	const perScope = 6
	for range perScope {
		f.pay(t, scope, ibanSettles)
		f.pay(t, live, ibanSettles)
		f.pay(t, scope, cardDisputed)
	}
	until := payNow.Add(time.Hour)
	const sweepers = 4
	counts := make([]int, sweepers)
	errs := make([]error, sweepers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range sweepers {
		// Separate sweepers over separate stores, as separate processes have.
		sw := sweeperOn(db, bothEnvs(f.proc), f.co)
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			var sc *core.Scope
			if i%2 == 0 {
				sc = &scope
			}
			counts[i], errs[i] = sw.ProcessDue(context.Background(), sc, until)
		}()
	}
	close(start)
	wg.Wait()
	total := 0
	for i := range sweepers {
		if errs[i] != nil {
			t.Fatalf("sweeper %d: %v", i, errs[i])
		}
		total += counts[i]
	}
	if total != 3*perScope {
		t.Fatalf("%d transitions, want %d", total, 3*perScope)
	}
	for _, sc := range []core.Scope{scope, live} {
		if n := countRows(t, db, `SELECT count(*) FROM payments WHERE merchant_id = $1 AND environment = $2 AND status = 'processing'`,
			sc.MerchantID, string(sc.Env)); n != 0 {
			t.Fatalf("%s: %d still processing", sc.Env, n)
		}
		if n := len(eventsOf(t, db, sc, payments.EventCheckoutSessionAsyncPaymentSucceeded)); n != perScope {
			t.Errorf("%s: %d async_payment_succeeded events", sc.Env, n)
		}
	}
	if n := len(eventsOf(t, db, scope, payments.EventChargeDisputeCreated)); n != perScope {
		t.Errorf("%d dispute events", n)
	}
	if n := countRows(t, db, `SELECT count(*) FROM disputes WHERE merchant_id = $1`, scope.MerchantID); n != perScope {
		t.Errorf("%d disputes", n)
	}
	// One receipt per succeeded payment: the SEPA ones at settlement, the cards at creation.
	if n := countRows(t, db, `SELECT count(*) FROM mail_outbox WHERE merchant_id = $1`, scope.MerchantID); n != 3*perScope {
		t.Errorf("%d receipts", n)
	}
}

// Without a scope the sweep leaves test payments of a merchant whose clock is frozen to that
// clock, and handles live payments and test payments on real time.
func TestSweepWithoutScopeSkipsFrozenClocks(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	f := newDueFixture(t, db)
	frozen := pgtest.Merchant(t, db)
	running := pgtest.Merchant(t, db)
	frozenPay := f.pay(t, frozen, ibanSettles)
	runningPay := f.pay(t, running, ibanSettles)
	if err := setClock(context.Background(), postgres.NewTestClockStore(db, 0), frozen, payNow); err != nil {
		t.Fatal(err)
	}
	if _, err := f.sweeper.ProcessDue(context.Background(), nil, payNow.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if st, _, _ := paymentStatus(t, db, frozen, frozenPay.ID()); st != "processing" {
		t.Errorf("frozen clock's payment: %s", st)
	}
	if st, _, _ := paymentStatus(t, db, running, runningPay.ID()); st != "succeeded" {
		t.Errorf("running clock's payment: %s", st)
	}
}

// failingSettlements fails every Settle.
type failingSettlements struct{}

func (failingSettlements) Settle(context.Context, string, time.Time) (ports.ChargeResult, error) {
	return ports.ChargeResult{}, errors.New("processor unavailable")
}

// A processor that cannot answer postpones the settlement past the sweep's time; the error is
// reported and nothing else changes.
func TestSweepPostponesWhenTheProcessorFails(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	f := newDueFixture(t, db)
	scope := pgtest.Merchant(t, db)
	s := f.pay(t, scope, ibanSettles)
	sw := sweeperOn(db, map[core.Environment]payments.Settlements{core.EnvTest: failingSettlements{}}, f.co)
	until := payNow.Add(time.Hour)
	n, err := sw.ProcessDue(context.Background(), &scope, until)
	if err == nil || n != 0 {
		t.Fatalf("sweep: %d %v", n, err)
	}
	if st, _, _ := paymentStatus(t, db, scope, s.ID()); st != "processing" {
		t.Fatalf("status %s", st)
	}
	if c := countRows(t, db, `SELECT count(*) FROM payments WHERE session_id = $1 AND settles_at = $2`,
		s.ID(), until.Add(payments.SettleRetryDelay)); c != 1 {
		t.Fatal("settlement not postponed")
	}
	// The working processor settles it later.
	if n, err := f.sweeper.ProcessDue(context.Background(), &scope, until.Add(payments.SettleRetryDelay)); err != nil || n != 1 {
		t.Fatalf("later sweep: %d %v", n, err)
	}
}

// The stored due_at is a projection of payments.Record.DueAt: for every state a payment can
// be stored in (each status, with and without a settlement time, an announced dispute and an
// opened dispute), the column, the sweep's listing and the module's rule agree, so the sweep
// never reads a payment it then finds not due (and spins on it).
func TestPaymentDueAtProjectsTheModulesRule(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	f := newDueFixture(t, db)
	scope := pgtest.Merchant(t, db)
	ctx := context.Background()
	s := f.pay(t, scope, "4242424242424242")
	store := postgres.NewPaymentStore(db)
	uow := postgres.Bind(postgres.NewUnitOfWork(db), func(tx *postgres.Tx) payments.Tx { return tx })
	base, err := store.GetBySession(ctx, scope, s.ID())
	if err != nil {
		t.Fatal(err)
	}
	settles := payNow.Add(90 * time.Minute).Add(123 * time.Microsecond)
	opens := payNow.Add(30 * time.Minute)
	statuses := []payments.Status{payments.StatusProcessing, payments.StatusSucceeded, payments.StatusFailed,
		payments.StatusPartiallyRefunded, payments.StatusRefunded, payments.StatusDisputed}
	checked := 0
	for _, status := range statuses {
		for _, withSettle := range []bool{false, true} {
			for _, withNotice := range []bool{false, true} {
				for _, withDispute := range []bool{false, true} {
					var settlesAt, opensAt *time.Time
					var reason, disputeID, prev *string
					if withSettle {
						settlesAt = &settles
					}
					if withNotice {
						opensAt, reason = &opens, ptr("fraudulent")
					}
					if withDispute {
						disputeID = ptr("dp_agreement")
					}
					if status == payments.StatusDisputed {
						prev = ptr("succeeded")
					}
					if _, err := db.Exec(`UPDATE payments SET status = $2, previous_status = $3, settles_at = $4,
						dispute_opens_at = $5, dispute_reason = $6, dispute_id = $7 WHERE id = $1`,
						base.ID(), string(status), prev, settlesAt, opensAt, reason, disputeID); err != nil {
						t.Fatal(err)
					}
					name := fmt.Sprintf("%s settle=%v notice=%v dispute=%v", status, withSettle, withNotice, withDispute)
					var stored *payments.Record
					if err := uow.Do(ctx, func(ctx context.Context, tx payments.Tx) error {
						locked, err := tx.Payments().LockDue(ctx, []*payments.Record{{Payment: base}})
						if len(locked) == 1 {
							stored = locked[0]
						}
						return err
					}); err != nil || stored == nil {
						t.Fatalf("%s: read %v", name, err)
					}
					var column *time.Time
					if err := db.Get(&column, `SELECT due_at FROM payments WHERE id = $1`, base.ID()); err != nil {
						t.Fatal(err)
					}
					rule := stored.DueAt()
					if (rule == nil) != (column == nil) || (rule != nil && !rule.Equal(*column)) {
						t.Errorf("%s: due_at %v, rule %v", name, column, rule)
					}
					for _, until := range []time.Time{opens.Add(-time.Second), opens, settles.Add(-time.Microsecond), settles, settles.Add(time.Hour)} {
						listed, err := store.ListDue(ctx, &scope, until, 10)
						if err != nil {
							t.Fatal(err)
						}
						if (len(listed) == 1) != stored.IsDue(until) {
							t.Errorf("%s: by %s listed %d, rule says due %v", name, until, len(listed), stored.IsDue(until))
						}
					}
					checked++
				}
			}
		}
	}
	if checked != 48 {
		t.Fatalf("%d states checked", checked)
	}
}

func ptr[T any](v T) *T { return &v }
