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
	w.bindOwner(t, lo)
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

// batchOwner is the order owner with PayableBatchOwner: it counts the batches it began and
// applied, and the charges begun and applied one by one; each outcome it applies adds its
// own event.
type batchOwner struct {
	*orderOwner
	mu                 sync.Mutex
	begun, applied     []int // the batches' sizes
	oneBegun, oneApply int
}

const eventOrderApplied core.EventType = "order.applied"

func (b *batchOwner) BeginCharge(ctx context.Context, tx orderTx, p payments.Payable, start payments.ChargeStart) (int, error) {
	b.mu.Lock()
	b.oneBegun++
	b.mu.Unlock()
	return b.orderOwner.BeginCharge(ctx, tx, p, start)
}

func (b *batchOwner) ApplyOutcome(ctx context.Context, tx orderTx, p payments.Payable, a *payments.ChargeAttempt, out *payments.ChargeOutcome) ([]core.Event, error) {
	b.mu.Lock()
	b.oneApply++
	b.mu.Unlock()
	return b.applied1(ctx, tx, p, a, out)
}

func (b *batchOwner) applied1(ctx context.Context, tx orderTx, p payments.Payable, a *payments.ChargeAttempt, out *payments.ChargeOutcome) ([]core.Event, error) {
	if _, err := b.orderOwner.ApplyOutcome(ctx, tx, p, a, out); err != nil {
		return nil, err
	}
	return []core.Event{core.NewEvent(eventOrderApplied, p.Scope(), a.ChargedAt(), orderSettled{id: p.ID()})}, nil
}

func (b *batchOwner) BeginCharges(ctx context.Context, tx orderTx, ps []payments.Payable, starts []payments.ChargeStart) ([]int, error) {
	b.mu.Lock()
	b.begun = append(b.begun, len(ps))
	b.mu.Unlock()
	ns := make([]int, len(ps))
	for i, p := range ps {
		n, err := b.orderOwner.BeginCharge(ctx, tx, p, starts[i])
		if err != nil {
			return nil, err
		}
		ns[i] = n
	}
	return ns, nil
}

func (b *batchOwner) ApplyOutcomes(ctx context.Context, tx orderTx, outs []payments.PayableOutcome) ([][]core.Event, error) {
	b.mu.Lock()
	b.applied = append(b.applied, len(outs))
	b.mu.Unlock()
	evs := make([][]core.Event, len(outs))
	for i, o := range outs {
		var err error
		if evs[i], err = b.applied1(ctx, tx, o.P, o.A, o.O); err != nil {
			return nil, err
		}
	}
	return evs, nil
}

func (w *orderWorld) bindOwner(t *testing.T, o payments.PayableOwner[orderTx]) {
	t.Helper()
	kind, err := payments.BindKind[orderTx](orderKind, w.orders, o)
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
}

// An owner with batch steps (PayableBatchOwner) begins the batch's charges with one call and
// applies their outcomes with one, never payable by payable; each outcome's events are its
// own, then the owner's, in the order of the payables. When the batch's outcomes cannot be
// applied together, each is applied on its own, once.
func TestChargeManyOwnerBatchSteps(t *testing.T) {
	t.Parallel()
	w := newOrderWorld(t)
	bo := &batchOwner{orderOwner: w.owner}
	w.bindOwner(t, bo)
	ids := []string{w.newOrder(), w.newOrder(), w.newOrder()}
	for i, r := range w.charger.ChargeMany(context.Background(), []payments.ChargeRequest{w.card(ids[0], cardOK), w.card(ids[1], cardDeclined), w.card(ids[2], cardOK)}) {
		if r.Err != nil || r.Charged == nil || !r.Charged.Applied {
			t.Fatalf("charge %d: %+v %v", i, r.Charged, r.Err)
		}
	}
	if !slices.Equal(bo.begun, []int{3}) || !slices.Equal(bo.applied, []int{3}) || bo.oneBegun != 0 || bo.oneApply != 0 {
		t.Fatalf("batches begun %v, applied %v; one by one %d begun, %d applied: want one batch of 3 each, none alone",
			bo.begun, bo.applied, bo.oneBegun, bo.oneApply)
	}
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	var want []core.EventType
	for _, id := range sorted {
		if id == ids[1] {
			want = append(want, payments.EventPaymentIntentPaymentFailed, eventOrderApplied)
		} else {
			want = append(want, payments.EventPaymentIntentSucceeded, eventOrderApplied)
		}
	}
	if !sameTypes(w.types(), want...) {
		t.Fatalf("events %v, want %v", w.types(), want)
	}

	// The owner's batch fails (its first outcome): each outcome is applied on its own, once.
	w2 := newOrderWorld(t)
	bo2 := &batchOwner{orderOwner: w2.owner}
	w2.bindOwner(t, bo2)
	w2.owner.failApply = 1
	ids2 := []string{w2.newOrder(), w2.newOrder()}
	for i, r := range w2.charger.ChargeMany(context.Background(), []payments.ChargeRequest{w2.card(ids2[0], cardOK), w2.card(ids2[1], cardOK)}) {
		if r.Err != nil || r.Charged == nil || !r.Charged.Applied || r.Charged.Outcome != ports.OutcomeSucceeded {
			t.Fatalf("fallback charge %d: %+v %v", i, r.Charged, r.Err)
		}
		if p := w2.paymentsOf(ids2[i]); len(p) != 1 {
			t.Fatalf("order %d: %d payments", i, len(p))
		}
	}
	if !slices.Equal(bo2.applied, []int{2}) || bo2.oneApply != 2 {
		t.Fatalf("batches applied %v, one by one %d: want the batch of 2 tried, then each alone", bo2.applied, bo2.oneApply)
	}
}
