// Package paymentstest is the behaviour every implementation of payments' repositories shows
// (payments.Tx inside a unit of work, the attempt store and the reader outside), written once
// and run on each: adapters/postgres runs it on a database, the module's tests on Fake, the one
// in-memory fake every use-case test of payments and checkout uses. It imports testing and is
// imported by tests only.
package paymentstest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/ports"
)

// Harness is one implementation under test.
type Harness struct {
	UoW      ports.UnitOfWorkOf[payments.Tx]
	Attempts payments.AttemptStore
	Reader   payments.Reader
	// NewScope returns the test scope of a merchant no other case uses.
	NewScope func(t *testing.T) core.Scope
}

// RunTx runs the suite; newHarness is called once per case, and the cases run in parallel.
func RunTx(t *testing.T, newHarness func(t *testing.T) Harness) {
	cases := []struct {
		name string
		run  func(t *testing.T, h Harness)
	}{
		{"attempt round trip", attemptRoundTrip},
		{"one pending attempt per payable and kind", onePendingAttempt},
		{"attempts inserted together, all or none", insertManyAttempts},
		{"attempts locked and saved together", lockAndSaveManyAttempts},
		{"payments inserted together, all or none", insertManyPayments},
		{"unknown attempts and other scopes", unknownAttempts},
		{"one payment per payable key and kind", paymentUniqueness},
		{"failed unit of work writes nothing", rollback},
		{"lock and save write what changed", lockAndSave},
		{"disputes are their own aggregate", disputes},
		{"a unit of work run twice applies once", runTwice},
		{"concurrent attempts have one winner", concurrentAttempts},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, newHarness(t))
		})
	}
}

// t0 is a time every implementation keeps exactly (microseconds, UTC).
var t0 = time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)

// Two payable kinds that link their payments by invoice_id (no foreign key to another
// module's table), one per payable and one per attempt.
var (
	kindA = payments.KindSpec{Name: "contract_a", Link: payments.LinkInvoice, Payments: payments.OnePaymentPerPayable}
	kindB = payments.KindSpec{Name: "contract_b", Link: payments.LinkInvoice, Payments: payments.OnePaymentPerAttempt}
)

// attempt builds pending attempt n of the payable ref of kind in scope.
func attempt(scope core.Scope, kind payments.PayableKind, ref string, n int) *payments.ChargeAttempt {
	return payments.RehydrateChargeAttempt(payments.ChargeAttemptSnapshot{
		Scope: scope, PayableKind: kind, Reference: ref, Number: n, Kind: payments.AttemptCharge,
		Amount: 1250, Currency: "EUR", Method: ports.MethodCard, Status: payments.AttemptPending,
		ChargedAt: t0, StartedAt: t0.Add(time.Duration(n) * time.Second),
	})
}

// resolved is a with status st (and outcome succeeded when applied), resolved at t0 + 1 min.
func resolved(a *payments.ChargeAttempt, st payments.AttemptStatus) *payments.ChargeAttempt {
	s := a.Snapshot()
	s.Status, s.ResolvedAt = st, t0.Add(time.Minute)
	if st == payments.AttemptApplied {
		s.Outcome = ports.OutcomeSucceeded
	}
	return payments.RehydrateChargeAttempt(s)
}

// record builds a succeeded card payment of the payable ref of kind with payable key key.
func record(t *testing.T, scope core.Scope, kind payments.KindSpec, ref, key string) *payments.Record {
	t.Helper()
	p, err := payments.NewPayment(payments.NewPaymentParams{Scope: scope, PayableKind: kind.Name, InvoiceID: &ref,
		Amount: 1250, Currency: "EUR", Status: payments.StatusSucceeded, Method: payments.MethodCard,
		Card:     &payments.Card{Brand: "visa", Last4: "4242", Country: "DE", Funding: "credit"},
		Fee:      payments.Fee{ServiceFeeEUR: 40, PSPFeeEUR: 20, ServiceFeeChargeCurrency: 40, Currency: "EUR", RateDate: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC), Rate: "1"},
		Customer: payments.Customer{Name: "Ada", Email: "ada@example.com"}, Created: t0})
	if err != nil {
		t.Fatal(err)
	}
	avail := t0.Add(payments.FundsDelay)
	return (&payments.Record{Payment: p, ProcessorRef: "ch_" + key, PayableKey: key}).WithDueFacts(payments.DueFacts{AvailableAt: &avail})
}

func do(t *testing.T, h Harness, fn func(ctx context.Context, tx payments.Tx) error) error {
	t.Helper()
	return h.UoW.Do(context.Background(), fn)
}

func attemptRoundTrip(t *testing.T, h Harness) {
	ctx := context.Background()
	scope := h.NewScope(t)
	a := attempt(scope, kindA.Name, "in_rt", 1)
	if err := do(t, h, func(ctx context.Context, tx payments.Tx) error { return tx.ChargeAttempts().Insert(ctx, a) }); err != nil {
		t.Fatal(err)
	}
	got, err := h.Attempts.Pending(ctx, scope, kindA.Name, "in_rt")
	if err != nil || got == nil || got.Snapshot() != a.Snapshot() {
		t.Fatalf("pending: %+v %v, want %+v", got, err, a.Snapshot())
	}
	if err := do(t, h, func(ctx context.Context, tx payments.Tx) error {
		l, err := tx.ChargeAttempts().Lock(ctx, scope, "in_rt", a.IdempotencyKey())
		if err != nil {
			return err
		}
		if l.Snapshot() != a.Snapshot() {
			t.Errorf("lock read %+v", l.Snapshot())
		}
		return tx.ChargeAttempts().Save(ctx, resolved(l, payments.AttemptApplied))
	}); err != nil {
		t.Fatal(err)
	}
	if got, err := h.Attempts.Pending(ctx, scope, kindA.Name, "in_rt"); err != nil || got != nil {
		t.Fatalf("pending after apply: %+v %v", got, err)
	}
	err = do(t, h, func(ctx context.Context, tx payments.Tx) error {
		l, err := tx.ChargeAttempts().Lock(ctx, scope, "in_rt", a.IdempotencyKey())
		if err != nil {
			return err
		}
		want := resolved(a, payments.AttemptApplied).Snapshot()
		if l.Snapshot() != want {
			t.Errorf("applied attempt %+v, want %+v", l.Snapshot(), want)
		}
		// Only a pending attempt is resolved.
		return tx.ChargeAttempts().Save(ctx, resolved(l, payments.AttemptAbandoned))
	})
	if err == nil {
		t.Fatal("an applied attempt was saved again")
	}
	// Stale sees pending attempts recorded before the bound only.
	b := attempt(scope, kindA.Name, "in_rt", 2)
	if err := do(t, h, func(ctx context.Context, tx payments.Tx) error { return tx.ChargeAttempts().Insert(ctx, b) }); err != nil {
		t.Fatal(err)
	}
	if st, err := h.Attempts.Stale(ctx, &scope, b.StartedAt(), 10); err != nil || len(st) != 0 {
		t.Fatalf("stale before its start: %d %v", len(st), err)
	}
	if st, err := h.Attempts.Stale(ctx, &scope, b.StartedAt().Add(time.Millisecond), 10); err != nil || len(st) != 1 || st[0].IdempotencyKey() != b.IdempotencyKey() {
		t.Fatalf("stale after its start: %v %v", st, err)
	}
}

func onePendingAttempt(t *testing.T, h Harness) {
	scope := h.NewScope(t)
	insert := func(a *payments.ChargeAttempt) error {
		return do(t, h, func(ctx context.Context, tx payments.Tx) error { return tx.ChargeAttempts().Insert(ctx, a) })
	}
	first := attempt(scope, kindA.Name, "in_one", 1)
	if err := insert(first); err != nil {
		t.Fatal(err)
	}
	if err := insert(attempt(scope, kindA.Name, "in_one", 2)); !errors.Is(err, payments.ErrChargeInProgress) {
		t.Fatalf("a second pending attempt: %v", err)
	}
	// Uniqueness is per kind: the same reference of another kind is another payable.
	if err := insert(attempt(scope, kindB.Name, "in_one", 7)); err != nil {
		t.Fatalf("another kind: %v", err)
	}
	if err := do(t, h, func(ctx context.Context, tx payments.Tx) error {
		return tx.ChargeAttempts().Save(ctx, resolved(first, payments.AttemptAbandoned))
	}); err != nil {
		t.Fatal(err)
	}
	if err := insert(attempt(scope, kindA.Name, "in_one", 2)); err != nil {
		t.Fatalf("after the first was resolved: %v", err)
	}
}

// insertManyAttempts: InsertMany writes the rows Insert would, one per attempt; a second
// pending attempt of any payable among them (stored before, or twice in the batch) refuses
// them all with ErrChargeInProgress.
func insertManyAttempts(t *testing.T, h Harness) {
	ctx := context.Background()
	scope := h.NewScope(t)
	insertMany := func(as ...*payments.ChargeAttempt) error {
		return do(t, h, func(ctx context.Context, tx payments.Tx) error { return tx.ChargeAttempts().InsertMany(ctx, as) })
	}
	if err := insertMany(); err != nil {
		t.Fatalf("no attempts: %v", err)
	}
	as := []*payments.ChargeAttempt{attempt(scope, kindA.Name, "in_m1", 1), attempt(scope, kindA.Name, "in_m2", 3), attempt(scope, kindB.Name, "in_m5", 1)}
	if err := insertMany(as...); err != nil {
		t.Fatal(err)
	}
	for _, a := range as {
		got, err := h.Attempts.Pending(ctx, scope, a.PayableKind(), a.Reference())
		if err != nil || got == nil || got.Snapshot() != a.Snapshot() {
			t.Fatalf("pending %s: %+v %v, want %+v", a.IdempotencyKey(), got, err, a.Snapshot())
		}
	}
	// in_m2 is still pending: a batch with it and a new payable writes nothing.
	if err := insertMany(attempt(scope, kindA.Name, "in_m3", 1), attempt(scope, kindA.Name, "in_m2", 4)); !errors.Is(err, payments.ErrChargeInProgress) {
		t.Fatalf("a batch with a payable in flight: %v", err)
	}
	// Two attempts of one payable in one batch: none.
	if err := insertMany(attempt(scope, kindA.Name, "in_m4", 1), attempt(scope, kindA.Name, "in_m4", 2)); !errors.Is(err, payments.ErrChargeInProgress) {
		t.Fatalf("a batch with one payable twice: %v", err)
	}
	for _, ref := range []string{"in_m3", "in_m4"} {
		if got, err := h.Attempts.Pending(ctx, scope, kindA.Name, ref); err != nil || got != nil {
			t.Fatalf("%s after a refused batch: %+v %v", ref, got, err)
		}
	}
}

// lockAndSaveManyAttempts: LockMany reads what Lock reads, in the order asked, and an
// unknown attempt is ErrAttemptNotFound; SaveMany writes what Save writes, and one attempt no
// longer pending fails it (its unit of work writes nothing).
func lockAndSaveManyAttempts(t *testing.T, h Harness) {
	ctx := context.Background()
	scope := h.NewScope(t)
	as := []*payments.ChargeAttempt{attempt(scope, kindA.Name, "in_l2", 1), attempt(scope, kindA.Name, "in_l1", 2), attempt(scope, kindB.Name, "in_l3", 1)}
	if err := do(t, h, func(ctx context.Context, tx payments.Tx) error { return tx.ChargeAttempts().InsertMany(ctx, as) }); err != nil {
		t.Fatal(err)
	}
	if err := do(t, h, func(ctx context.Context, tx payments.Tx) error {
		got, err := tx.ChargeAttempts().LockMany(ctx, as)
		if err != nil {
			return err
		}
		if len(got) != len(as) {
			t.Fatalf("%d attempts locked of %d", len(got), len(as))
		}
		for i := range as {
			if got[i].Snapshot() != as[i].Snapshot() {
				t.Errorf("lock many %d: %+v, want %+v", i, got[i].Snapshot(), as[i].Snapshot())
			}
		}
		return tx.ChargeAttempts().SaveMany(ctx, []*payments.ChargeAttempt{resolved(got[0], payments.AttemptApplied), resolved(got[2], payments.AttemptAbandoned)})
	}); err != nil {
		t.Fatal(err)
	}
	for i, want := range []*payments.ChargeAttempt{resolved(as[0], payments.AttemptApplied), as[1], resolved(as[2], payments.AttemptAbandoned)} {
		err := do(t, h, func(ctx context.Context, tx payments.Tx) error {
			got, err := tx.ChargeAttempts().Lock(ctx, scope, want.Reference(), want.IdempotencyKey())
			if err == nil && got.Snapshot() != want.Snapshot() {
				t.Errorf("attempt %d saved: %+v, want %+v", i, got.Snapshot(), want.Snapshot())
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// An attempt no longer pending among them: an error, and the pending one stays pending.
	err := do(t, h, func(ctx context.Context, tx payments.Tx) error {
		got, err := tx.ChargeAttempts().LockMany(ctx, as[:2])
		if err != nil {
			return err
		}
		return tx.ChargeAttempts().SaveMany(ctx, []*payments.ChargeAttempt{resolved(got[1], payments.AttemptApplied), resolved(as[0], payments.AttemptApplied)})
	})
	if err == nil {
		t.Fatal("an applied attempt was saved again among others")
	}
	if got, err := h.Attempts.Pending(ctx, scope, kindA.Name, "in_l1"); err != nil || got == nil {
		t.Fatalf("in_l1 after a refused save: %v %v, want pending", got, err)
	}
	// An unknown attempt among them: ErrAttemptNotFound.
	err = do(t, h, func(ctx context.Context, tx payments.Tx) error {
		_, err := tx.ChargeAttempts().LockMany(ctx, []*payments.ChargeAttempt{as[1], attempt(scope, kindA.Name, "in_l9", 1)})
		return err
	})
	if !errors.Is(err, payments.ErrAttemptNotFound) {
		t.Fatalf("lock many with an unknown attempt: %v", err)
	}
}

// insertManyPayments: InsertMany stores what Insert stores; a payment refused by the
// uniqueness rule (stored before, or twice among them) refuses them all.
func insertManyPayments(t *testing.T, h Harness) {
	ctx := context.Background()
	scope := h.NewScope(t)
	insertMany := func(recs ...*payments.Record) error {
		return do(t, h, func(ctx context.Context, tx payments.Tx) error { return tx.Payments().InsertMany(ctx, recs) })
	}
	recs := []*payments.Record{record(t, scope, kindA, "in_pm1", "in_pm1"), record(t, scope, kindB, "in_pm2", "in_pm2:1")}
	if err := insertMany(recs...); err != nil {
		t.Fatal(err)
	}
	for _, rec := range recs {
		got := lock(t, h, scope, rec.Payment.ID())
		if got.Payment.Snapshot().ID != rec.Payment.ID() || got.PayableKey != rec.PayableKey || got.ProcessorRef != rec.ProcessorRef ||
			got.Payment.Amount() != rec.Payment.Amount() || got.Payment.PayableKind() != rec.Payment.PayableKind() {
			t.Fatalf("stored %+v, want %+v", got, rec)
		}
		if a, w := got.AvailableAt(), rec.AvailableAt(); a == nil || !a.Equal(*w) {
			t.Fatalf("available at %v, want %v", a, w)
		}
	}
	fresh := record(t, scope, kindA, "in_pm3", "in_pm3")
	if err := insertMany(fresh, record(t, scope, kindA, "in_pm1", "in_pm1")); !errors.Is(err, payments.ErrPaymentExists) {
		t.Fatalf("a batch with a payable already paid: %v", err)
	}
	if err := insertMany(record(t, scope, kindB, "in_pm4", "in_pm4:1"), record(t, scope, kindB, "in_pm4", "in_pm4:1")); !errors.Is(err, payments.ErrPaymentExists) {
		t.Fatalf("a batch with one payable key twice: %v", err)
	}
	if _, err := h.Reader.Get(ctx, scope, fresh.Payment.ID()); !errors.Is(err, payments.ErrNotFound) {
		t.Fatalf("a payment of a refused batch: %v", err)
	}
}

func unknownAttempts(t *testing.T, h Harness) {
	scope, other := h.NewScope(t), h.NewScope(t)
	a := attempt(scope, kindA.Name, "in_unk", 1)
	if err := do(t, h, func(ctx context.Context, tx payments.Tx) error { return tx.ChargeAttempts().Insert(ctx, a) }); err != nil {
		t.Fatal(err)
	}
	for _, sc := range []core.Scope{other, scope} {
		key := a.IdempotencyKey()
		if sc == scope {
			key = "in_unk:9"
		}
		err := do(t, h, func(ctx context.Context, tx payments.Tx) error {
			_, err := tx.ChargeAttempts().Lock(ctx, sc, "in_unk", key)
			return err
		})
		if !errors.Is(err, payments.ErrAttemptNotFound) {
			t.Fatalf("lock %s in %v: %v", key, sc, err)
		}
	}
	if got, err := h.Attempts.Pending(context.Background(), other, kindA.Name, "in_unk"); err != nil || got != nil {
		t.Fatalf("pending in another scope: %v %v", got, err)
	}
}

func paymentUniqueness(t *testing.T, h Harness) {
	ctx := context.Background()
	scope := h.NewScope(t)
	insert := func(rec *payments.Record) error {
		return do(t, h, func(ctx context.Context, tx payments.Tx) error { return tx.Payments().Insert(ctx, rec) })
	}
	first := record(t, scope, kindA, "in_pay", "in_pay")
	if err := insert(first); err != nil {
		t.Fatal(err)
	}
	if err := insert(record(t, scope, kindA, "in_pay", "in_pay")); !errors.Is(err, payments.ErrPaymentExists) {
		t.Fatalf("a second payment of the payable: %v", err)
	}
	// Per attempt: two payments of one payable, one per attempt key.
	for _, key := range []string{"in_pay:1", "in_pay:2"} {
		if err := insert(record(t, scope, kindB, "in_pay", key)); err != nil {
			t.Fatalf("kind b, %s: %v", key, err)
		}
	}
	if err := insert(record(t, scope, kindB, "in_pay", "in_pay:2")); !errors.Is(err, payments.ErrPaymentExists) {
		t.Fatalf("a second payment of attempt 2: %v", err)
	}
	got, err := h.Reader.Get(ctx, scope, first.Payment.ID())
	if err != nil || got.ID() != first.Payment.ID() || got.PayableKind() != kindA.Name || got.PayableID() != "in_pay" {
		t.Fatalf("get: %+v %v", got, err)
	}
	if _, err := h.Reader.Get(ctx, h.NewScope(t), first.Payment.ID()); !errors.Is(err, payments.ErrNotFound) {
		t.Fatalf("get in another scope: %v", err)
	}
}

func rollback(t *testing.T, h Harness) {
	ctx := context.Background()
	scope := h.NewScope(t)
	a := attempt(scope, kindA.Name, "in_rb", 1)
	rec := record(t, scope, kindA, "in_rb", "in_rb")
	boom := errors.New("boom")
	err := do(t, h, func(ctx context.Context, tx payments.Tx) error {
		if err := tx.ChargeAttempts().Insert(ctx, a); err != nil {
			return err
		}
		if err := tx.Payments().Insert(ctx, rec); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("do: %v", err)
	}
	if got, err := h.Attempts.Pending(ctx, scope, kindA.Name, "in_rb"); err != nil || got != nil {
		t.Fatalf("attempt after rollback: %v %v", got, err)
	}
	if _, err := h.Reader.Get(ctx, scope, rec.Payment.ID()); !errors.Is(err, payments.ErrNotFound) {
		t.Fatalf("payment after rollback: %v", err)
	}
	// Nothing of the failed unit is in the way of the next.
	if err := do(t, h, func(ctx context.Context, tx payments.Tx) error {
		if err := tx.ChargeAttempts().Insert(ctx, a); err != nil {
			return err
		}
		return tx.Payments().Insert(ctx, rec)
	}); err != nil {
		t.Fatal(err)
	}
}

// runTwice runs the unit of work that applies an attempt twice, as a retried Do (or a second
// resolution) would: the second finds the attempt applied and writes nothing.
func runTwice(t *testing.T, h Harness) {
	scope := h.NewScope(t)
	a := attempt(scope, kindA.Name, "in_twice", 1)
	if err := do(t, h, func(ctx context.Context, tx payments.Tx) error { return tx.ChargeAttempts().Insert(ctx, a) }); err != nil {
		t.Fatal(err)
	}
	applied := 0
	apply := func(ctx context.Context, tx payments.Tx) error {
		l, err := tx.ChargeAttempts().Lock(ctx, scope, "in_twice", a.IdempotencyKey())
		if err != nil {
			return err
		}
		if l.Status() != payments.AttemptPending {
			return nil
		}
		if err := tx.Payments().Insert(ctx, record(t, scope, kindA, "in_twice", "in_twice")); err != nil {
			return err
		}
		applied++
		return tx.ChargeAttempts().Save(ctx, resolved(l, payments.AttemptApplied))
	}
	for i := 0; i < 2; i++ {
		if err := do(t, h, apply); err != nil {
			t.Fatalf("run %d: %v", i+1, err)
		}
	}
	if applied != 1 {
		t.Fatalf("applied %d times", applied)
	}
}

func concurrentAttempts(t *testing.T, h Harness) {
	scope := h.NewScope(t)
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			errs[i] = h.UoW.Do(context.Background(), func(ctx context.Context, tx payments.Tx) error {
				return tx.ChargeAttempts().Insert(ctx, attempt(scope, kindA.Name, "in_race", i+1))
			})
		}(i)
	}
	wg.Wait()
	won := 0
	for i, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, payments.ErrChargeInProgress):
			t.Errorf("attempt %d: %v", i+1, err)
		}
	}
	if won != 1 {
		t.Fatalf("%d attempts pending at once", won)
	}
}

// processing builds a processing SEPA payment of the payable ref settling at settles.
func processing(t *testing.T, scope core.Scope, ref string, settles time.Time) *payments.Record {
	t.Helper()
	p, err := payments.NewPayment(payments.NewPaymentParams{Scope: scope, PayableKind: kindA.Name, InvoiceID: &ref,
		Amount: 1250, Currency: "EUR", Status: payments.StatusProcessing, Method: payments.MethodSEPADebit,
		Fee:      payments.Fee{ServiceFeeEUR: 35, PSPFeeEUR: 20, ServiceFeeChargeCurrency: 35, Currency: "EUR", RateDate: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC), Rate: "1"},
		Customer: payments.Customer{Name: "Ada", Email: "ada@example.com"}, Created: t0})
	if err != nil {
		t.Fatal(err)
	}
	return (&payments.Record{Payment: p, ProcessorRef: "ch_" + ref, PayableKey: ref, SEPACountry: "DE", SEPALast4: "3000"}).
		WithDueFacts(payments.DueFacts{SettlesAt: &settles})
}

// lock reads payment id in its own unit of work.
func lock(t *testing.T, h Harness, scope core.Scope, id string) *payments.Record {
	t.Helper()
	var rec *payments.Record
	if err := do(t, h, func(ctx context.Context, tx payments.Tx) error {
		var err error
		rec, err = tx.Payments().Lock(ctx, scope, id)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return rec
}

func lockAndSave(t *testing.T, h Harness) {
	scope := h.NewScope(t)
	rec := processing(t, scope, "in_save", t0.Add(time.Hour))
	if err := do(t, h, func(ctx context.Context, tx payments.Tx) error { return tx.Payments().Insert(ctx, rec) }); err != nil {
		t.Fatal(err)
	}
	id := rec.Payment.ID()
	later := t0.Add(2 * time.Hour)
	change := func(f func(r *payments.Record) error) {
		t.Helper()
		if err := do(t, h, func(ctx context.Context, tx payments.Tx) error {
			r, err := tx.Payments().Lock(ctx, scope, id)
			if err != nil {
				return err
			}
			if r.Changes() != 0 {
				t.Errorf("a locked record reports changes %b", r.Changes())
			}
			if err := f(r); err != nil {
				return err
			}
			return tx.Payments().Save(ctx, r)
		}); err != nil {
			t.Fatal(err)
		}
	}
	change(func(r *payments.Record) error { return r.Postpone(later) })
	got := lock(t, h, scope, id)
	if at := got.SettlesAt(); at == nil || !at.Equal(later) || got.Payment.Status() != payments.StatusProcessing || got.AvailableAt() != nil {
		t.Fatalf("after postpone: %+v %v", got.Due(), got.Payment.Status())
	}
	change(func(r *payments.Record) error { return r.Settle(true, "", "", later) })
	got = lock(t, h, scope, id)
	if got.Payment.Status() != payments.StatusSucceeded || got.AvailableAt() == nil || !got.AvailableAt().Equal(later.Add(payments.FundsDelay)) {
		t.Fatalf("after settle: %+v %v", got.Due(), got.Payment.Status())
	}
	// A settled payment refuses to settle again; nothing changes.
	if err := got.Settle(false, "x", "y", later); !errors.Is(err, payments.ErrPaymentNotProcessing) || got.Changes() != 0 {
		t.Fatalf("second settle: %v %b", err, got.Changes())
	}
	if err := do(t, h, func(ctx context.Context, tx payments.Tx) error {
		_, err := tx.Payments().Lock(ctx, scope, "py_unknown")
		return err
	}); !errors.Is(err, payments.ErrNotFound) {
		t.Fatalf("lock of an unknown payment: %v", err)
	}
}

func disputes(t *testing.T, h Harness) {
	scope := h.NewScope(t)
	rec := record(t, scope, kindA, "in_disp", "in_disp")
	opens := t0.Add(time.Hour)
	rec.DisputeOpensAt, rec.DisputeReason = &opens, "fraudulent"
	if err := do(t, h, func(ctx context.Context, tx payments.Tx) error { return tx.Payments().Insert(ctx, rec) }); err != nil {
		t.Fatal(err)
	}
	var d *payments.Dispute
	if err := do(t, h, func(ctx context.Context, tx payments.Tx) error {
		r, err := tx.Payments().Lock(ctx, scope, rec.Payment.ID())
		if err != nil {
			return err
		}
		if d, err = r.OpenDispute(); err != nil {
			return err
		}
		if err := tx.Payments().Save(ctx, r); err != nil {
			return err
		}
		return tx.Disputes().Insert(ctx, d)
	}); err != nil {
		t.Fatal(err)
	}
	got := lock(t, h, scope, rec.Payment.ID())
	if got.Payment.Status() != payments.StatusDisputed || got.DisputeID() != d.ID() || got.Payment.StatusBeforeDispute() != payments.StatusSucceeded {
		t.Fatalf("after the dispute: %v %q", got.Payment.Status(), got.DisputeID())
	}
	if _, err := got.OpenDispute(); !errors.Is(err, payments.ErrChargeNotDisputable) {
		t.Fatalf("a second dispute: %v", err)
	}
	if err := do(t, h, func(ctx context.Context, tx payments.Tx) error { return tx.Disputes().Insert(ctx, d) }); err == nil {
		t.Fatal("a second dispute of the payment was stored")
	}
}
