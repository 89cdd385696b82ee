package payments_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/ports"
)

// unitsOfWork counts the order store's units of work, and the processor calls made before
// each began.
type unitsOfWork struct {
	mu    sync.Mutex
	calls []int
}

func (w *orderWorld) countUnits() *unitsOfWork {
	u := &unitsOfWork{}
	w.orders.beforeDo = func() {
		w.proc.mu.Lock()
		n := w.proc.calls
		w.proc.mu.Unlock()
		u.mu.Lock()
		u.calls = append(u.calls, n)
		u.mu.Unlock()
	}
	return u
}

func (u *unitsOfWork) seen() []int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.calls)
}

// ChargeMany begins its charges in one unit of work (every attempt recorded and committed
// before the first processor call), and applies their outcomes in one more: payments,
// attempts, events and receipts written for all at once, the events of each charge in the
// order of the payables, the day's volume moved once.
func TestChargeManyBeginsAndAppliesTogether(t *testing.T) {
	t.Parallel()
	w := newOrderWorld(t)
	u := w.countUnits()
	ids := []string{w.newOrder(), w.newOrder(), w.newOrder(), w.newOrder()}
	reqs := []payments.ChargeRequest{w.card(ids[0], cardOK), w.card(ids[1], cardDeclined), w.card(ids[2], cardOK), w.card(ids[3], cardOK)}
	res := w.charger.ChargeMany(context.Background(), reqs)
	if got := u.seen(); !slices.Equal(got, []int{0, 4}) {
		t.Fatalf("units of work began after %v processor calls, want [0 4] (one to begin all, one to apply all)", got)
	}
	for i, r := range res {
		want := ports.OutcomeSucceeded
		if i == 1 {
			want = ports.OutcomeFailed
		}
		if r.Err != nil || r.Charged == nil || !r.Charged.Applied || r.Charged.Outcome != want {
			t.Fatalf("charge %d: %+v %v", i, r.Charged, r.Err)
		}
		if a := w.fake.Attempt(ids[i] + ":1"); a.Status != payments.AttemptApplied || a.ResolvedAt.IsZero() {
			t.Fatalf("attempt %d: %+v", i, a)
		}
	}
	for i, id := range ids {
		o := w.orders.get(id)
		if o.charging != "" || o.attempts != 1 || (i == 1) != (o.status == "open") || (i == 1) != (o.declines == 1) {
			t.Fatalf("order %d: %+v", i, o)
		}
	}
	// The events in the order of the payables (ids sort as they were made).
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	var want []core.EventType
	for _, id := range sorted {
		if id == ids[1] {
			want = append(want, payments.EventPaymentIntentPaymentFailed)
		} else {
			want = append(want, payments.EventPaymentIntentSucceeded)
		}
	}
	if !sameTypes(w.types(), want...) {
		t.Fatalf("events %v, want %v", w.types(), want)
	}
	if m := w.fake.Mail(); len(m) != 3 {
		t.Fatalf("%d receipts, want 3", len(m))
	}
	if v := w.fake.Volumes(); len(v) != 1 || v[0].Count != 3 || v[0].Gross != 3*4200 {
		t.Fatalf("volume changes %+v, want one of 3 payments", v)
	}
}

// A batch that cannot begin together (one payable refuses) begins charge by charge: the
// refusal is that charge's answer, the others are made. A batch whose outcomes cannot be
// applied together is applied one by one, each once.
func TestChargeManyFallsBackOneByOne(t *testing.T) {
	t.Parallel()
	w := newOrderWorld(t)
	ids := []string{w.newOrder(), w.newOrder(), w.newOrder()}
	w.orders.mu.Lock()
	o := w.orders.book.m[ids[1]]
	o.status = "paid"
	w.orders.book.m[ids[1]] = o
	w.orders.mu.Unlock()
	w.fake.FailPaymentInserts(1) // the batch's insert fails; each payment alone is written
	res := w.charger.ChargeMany(context.Background(), []payments.ChargeRequest{w.card(ids[0], cardOK), w.card(ids[1], cardOK), w.card(ids[2], cardOK)})
	if !errors.Is(res[1].Err, errOrderNotOpen) {
		t.Fatalf("the refused charge answered %+v %v", res[1].Charged, res[1].Err)
	}
	for _, i := range []int{0, 2} {
		if r := res[i]; r.Err != nil || r.Charged == nil || !r.Charged.Applied || r.Charged.Outcome != ports.OutcomeSucceeded {
			t.Fatalf("charge %d: %+v %v", i, r.Charged, r.Err)
		}
		if p := w.paymentsOf(ids[i]); len(p) != 1 {
			t.Fatalf("order %d: %d payments", i, len(p))
		}
		if o := w.orders.get(ids[i]); o.status != "paid" || o.attempts != 1 {
			t.Fatalf("order %d: %+v", i, o)
		}
	}
	if w.proc.calls != 2 {
		t.Fatalf("%d processor calls, want 2", w.proc.calls)
	}
	if !sameTypes(w.types(), payments.EventPaymentIntentSucceeded, payments.EventPaymentIntentSucceeded) {
		t.Fatalf("events %v", w.types())
	}
}

// lockingOwner is the order owner with PayableLocker: it counts the batches it locked.
type lockingOwner struct {
	*orderOwner
	mu      sync.Mutex
	batches [][]payments.PayableRef
}

func (l *lockingOwner) LockPayables(_ context.Context, tx orderTx, refs []payments.PayableRef) ([]payments.Payable, error) {
	l.mu.Lock()
	l.batches = append(l.batches, slices.Clone(refs))
	l.mu.Unlock()
	out := make([]payments.Payable, len(refs))
	for i, r := range refs {
		o, err := tx.Orders().lock(r.ID)
		if err != nil {
			return nil, err
		}
		out[i] = o
	}
	return out, nil
}

// An owner that locks many payables at once (PayableLocker) is asked once per unit of work of
// ChargeMany, for the payables in scope and id order: once to begin, once to apply.
func TestChargeManyLocksPayablesTogether(t *testing.T) {
	t.Parallel()
	w := newOrderWorld(t)
	lo := &lockingOwner{orderOwner: w.owner}
	kind, err := payments.BindKind[orderTx](orderKind, w.orders, lo)
	if err != nil {
		t.Fatal(err)
	}
	w.charger, err = payments.NewCharger(payments.ChargerDeps{
		Fees:       payments.NewFeeCalculator(payments.DefaultFeeSchedule(), nil),
		Processors: map[core.Environment]ports.Processor{core.EnvTest: w.proc},
		Attempts:   w.fake, Wall: w.wall, Kinds: []payments.Kind{kind},
	})
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{w.newOrder(), w.newOrder(), w.newOrder()}
	for i, r := range w.charger.ChargeMany(context.Background(), []payments.ChargeRequest{w.card(ids[0], cardOK), w.card(ids[1], cardOK), w.card(ids[2], cardOK)}) {
		if r.Err != nil || r.Charged == nil || !r.Charged.Applied || r.Charged.Outcome != ports.OutcomeSucceeded {
			t.Fatalf("charge %d: %+v %v", i, r.Charged, r.Err)
		}
	}
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	if len(lo.batches) != 2 {
		t.Fatalf("%d batches locked, want 2", len(lo.batches))
	}
	for _, b := range lo.batches {
		var got []string
		for _, r := range b {
			got = append(got, r.ID)
		}
		if !slices.Equal(got, sorted) {
			t.Fatalf("locked %v, want %v", got, sorted)
		}
	}
}
