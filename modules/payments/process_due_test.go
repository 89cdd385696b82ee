package payments_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/modules/payments/paymentstest"
	"github.com/kassa-pay/kassa/ports"
)

var dueT0 = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)

// dueRecord is a payment of a new order of w, for the sweeps, with processor reference ref.
func dueRecord(t *testing.T, w *orderWorld, ref string, status payments.Status, method payments.PaymentMethod) *payments.Record {
	t.Helper()
	return dueRecordIn(t, w, w.scope, ref, status, method)
}

func dueRecordIn(t *testing.T, w *orderWorld, scope core.Scope, ref string, status payments.Status, method payments.PaymentMethod) *payments.Record {
	t.Helper()
	id := w.newOrder()
	if scope != w.scope {
		w.orders.mu.Lock()
		o := w.orders.book.m[id]
		o.scope = scope
		w.orders.book.m[id] = o
		w.orders.mu.Unlock()
	}
	var card *payments.Card
	if method == payments.MethodCard {
		card = &payments.Card{Brand: "visa", Last4: "0259", Country: "US", Funding: "credit"}
	}
	p, err := payments.NewPayment(payments.NewPaymentParams{Scope: scope, PayableKind: orderKind.Name, InvoiceID: &id, Amount: 1000,
		Currency: "EUR", Status: status, Method: method, Card: card, Fee: payments.Fee{Currency: "EUR"}, Created: dueT0})
	if err != nil {
		t.Fatal(err)
	}
	return &payments.Record{Payment: p, ProcessorRef: ref, PayableKey: id}
}

// stored reads the stored state of rec.
func stored(w *orderWorld, rec *payments.Record) *payments.Record {
	for _, r := range w.fake.Records() {
		if r.Payment.ID() == rec.Payment.ID() {
			return r
		}
	}
	return nil
}

// settles sets the settlement time of a record being seeded.
func settles(r *payments.Record, at *time.Time) { r.WithDueFacts(payments.DueFacts{SettlesAt: at}) }

func at(m int) *time.Time { v := dueT0.Add(time.Duration(m) * time.Minute); return &v }

// scriptedSettlements answers Settle from a table by processor ref.
type scriptedSettlements map[string]ports.ChargeResult

func (s scriptedSettlements) Settle(_ context.Context, ref string, _ time.Time) (ports.ChargeResult, error) {
	res, ok := s[ref]
	if !ok {
		return ports.ChargeResult{}, ports.ErrProcessorRefUnknown
	}
	return res, nil
}

func sweeperOf(t *testing.T, w *orderWorld, store payments.DueStore, uow ports.UnitOfWorkOf[payments.Tx], settle map[core.Environment]payments.Settlements) *payments.Sweeper {
	t.Helper()
	sw, err := payments.NewSweeper(store, uow, settle, w.charger)
	if err != nil {
		t.Fatal(err)
	}
	return sw
}

func TestSweeperSettlesDisputesInTimeOrder(t *testing.T) {
	t.Parallel()
	w := newOrderWorld(t)
	good := dueRecord(t, w, "good", payments.StatusProcessing, payments.MethodSEPADebit)
	bad := dueRecord(t, w, "bad", payments.StatusProcessing, payments.MethodSEPADebit)
	later := dueRecord(t, w, "later", payments.StatusProcessing, payments.MethodSEPADebit)
	disputed := dueRecord(t, w, "card", payments.StatusSucceeded, payments.MethodCard)
	settles(good, at(3))
	settles(bad, at(2))
	settles(later, at(1))
	disputed.DisputeOpensAt, disputed.DisputeReason = at(4), "fraudulent"
	for _, r := range []*payments.Record{good, bad, later, disputed} {
		w.fake.Seed(r)
	}
	proc := scriptedSettlements{
		"good":  {Outcome: ports.OutcomeSucceeded, ProcessorRef: "good"},
		"bad":   {Outcome: ports.OutcomeFailed, ProcessorRef: "bad", DeclineCode: ports.DeclineInsufficientFunds, FailureMessage: "No funds."},
		"later": {Outcome: ports.OutcomeProcessing, ProcessorRef: "later", SettlesAt: at(90)},
	}
	sw := sweeperOf(t, w, w.fake, w.fake, map[core.Environment]payments.Settlements{w.scope.Env: proc})
	n, err := sw.ProcessDue(context.Background(), &w.scope, dueT0.Add(time.Hour))
	if err != nil || n != 3 {
		t.Fatalf("%d %v", n, err)
	}
	good, bad, later, disputed = stored(w, good), stored(w, bad), stored(w, later), stored(w, disputed)
	if good.Payment.Status() != payments.StatusSucceeded || bad.Payment.Status() != payments.StatusFailed ||
		later.Payment.Status() != payments.StatusProcessing || disputed.Payment.Status() != payments.StatusDisputed {
		t.Fatalf("states %s %s %s %s", good.Payment.Status(), bad.Payment.Status(), later.Payment.Status(), disputed.Payment.Status())
	}
	if *bad.Payment.FailureCode() != ports.DeclineInsufficientFunds || *bad.Payment.FailureMessage() != "No funds." {
		t.Errorf("failure %v %v", *bad.Payment.FailureCode(), *bad.Payment.FailureMessage())
	}
	if good.AvailableAt() == nil || !good.AvailableAt().Equal(at(3).Add(payments.FundsDelay)) || bad.AvailableAt() != nil || later.AvailableAt() != nil {
		t.Errorf("available at: good %v, bad %v, later %v", good.AvailableAt(), bad.AvailableAt(), later.AvailableAt())
	}
	if !later.SettlesAt().Equal(*at(90)) {
		t.Errorf("still processing: settles at %s", later.SettlesAt())
	}
	// The owners saw their settlements.
	if o := w.orders.get(*good.Payment.InvoiceID()); o.status != "paid" {
		t.Errorf("good order %+v", o)
	}
	if o := w.orders.get(*bad.Payment.InvoiceID()); o.status != "failed" {
		t.Errorf("bad order %+v", o)
	}
	// The payment that succeeded queues its receipt, dated when it succeeded; nothing else does.
	if m := w.fake.Mail(); len(m) != 1 || m[0] != (core.Mail{Kind: payments.MailReceipt, Scope: w.scope, SubjectID: good.Payment.ID(), Created: *at(3)}) {
		t.Errorf("mail %+v", m)
	}
	ds := w.fake.Disputes()
	if disputed.Payment.StatusBeforeDispute() != payments.StatusSucceeded || len(ds) != 1 {
		t.Fatalf("dispute: %s %d", disputed.Payment.StatusBeforeDispute(), len(ds))
	}
	d := ds[0]
	if d.PaymentID() != disputed.Payment.ID() || d.Amount() != 1000 || d.Reason() != "fraudulent" ||
		d.Status() != payments.DisputeNeedsResponse || !d.Created().Equal(*at(4)) || !d.EvidenceDueBy().Equal(at(4).Add(payments.EvidenceWindow)) ||
		!core.HasIDShape(d.ID(), payments.DisputePrefix) {
		t.Errorf("dispute %+v", d.Snapshot())
	}
	want := []struct {
		typ core.EventType
		at  *time.Time
	}{
		{payments.EventPaymentIntentPaymentFailed, at(2)}, {eventOrderSettled, at(2)},
		{payments.EventPaymentIntentSucceeded, at(3)}, {eventOrderSettled, at(3)},
		{payments.EventChargeDisputeCreated, at(4)},
	}
	// The dispute is written with the round's payments-only decisions, the settlements each in
	// their owner's unit of work after it; each group keeps its time order.
	evs := w.fake.Events()
	if len(evs) != len(want) {
		t.Fatalf("%d events", len(evs))
	}
	byType := map[core.EventType][]time.Time{}
	for _, e := range evs {
		byType[e.Type] = append(byType[e.Type], e.Created)
	}
	for _, x := range want {
		if len(byType[x.typ]) == 0 {
			t.Fatalf("no %s", x.typ)
		}
	}
	if s := byType[eventOrderSettled]; !s[0].Equal(*at(2)) || !s[1].Equal(*at(3)) {
		t.Errorf("owner events at %v", s)
	}
	// Nothing is due twice.
	if n, err := sw.ProcessDue(context.Background(), &w.scope, dueT0.Add(time.Hour)); err != nil || n != 0 {
		t.Fatalf("again: %d %v", n, err)
	}
}

func TestSweeperPostponesOnProcessorErrors(t *testing.T) {
	t.Parallel()
	w := newOrderWorld(t)
	r := dueRecord(t, w, "unknown", payments.StatusProcessing, payments.MethodSEPADebit)
	settles(r, at(1))
	w.fake.Seed(r)
	sw := sweeperOf(t, w, w.fake, w.fake, map[core.Environment]payments.Settlements{w.scope.Env: scriptedSettlements{}})
	until := dueT0.Add(time.Hour)
	n, err := sw.ProcessDue(context.Background(), &w.scope, until)
	if n != 0 || !errors.Is(err, ports.ErrProcessorRefUnknown) {
		t.Fatalf("%d %v", n, err)
	}
	r = stored(w, r)
	if r.Payment.Status() != payments.StatusProcessing || !r.SettlesAt().Equal(until.Add(payments.SettleRetryDelay)) || len(w.fake.Events()) != 0 {
		t.Fatalf("%s %s %d", r.Payment.Status(), r.SettlesAt(), len(w.fake.Events()))
	}
}

// Settlement goes to the processor of the payment's environment: a live payment is never
// settled by the test environment's (sandbox) processor; without a live processor it waits.
func TestSweeperRoutesSettlementByEnvironment(t *testing.T) {
	t.Parallel()
	w := newOrderWorld(t)
	r := dueRecord(t, w, "good", payments.StatusProcessing, payments.MethodSEPADebit)
	lr := dueRecordIn(t, w, core.Scope{MerchantID: w.scope.MerchantID, Env: core.EnvLive}, "good", payments.StatusProcessing, payments.MethodSEPADebit)
	settles(r, at(1))
	settles(lr, at(1))
	w.fake.Seed(r)
	w.fake.Seed(lr)
	sw := sweeperOf(t, w, w.fake, w.fake, map[core.Environment]payments.Settlements{
		core.EnvTest: scriptedSettlements{"good": {Outcome: ports.OutcomeSucceeded, ProcessorRef: "good"}},
	})
	until := dueT0.Add(time.Hour)
	n, err := sw.ProcessDue(context.Background(), nil, until)
	if n != 1 || !errors.Is(err, payments.ErrNoSettlements) {
		t.Fatalf("%d %v", n, err)
	}
	r, lr = stored(w, r), stored(w, lr)
	if r.Payment.Status() != payments.StatusSucceeded || lr.Payment.Status() != payments.StatusProcessing || !lr.SettlesAt().Equal(until.Add(payments.SettleRetryDelay)) {
		t.Fatalf("test %s, live %s settles %s", r.Payment.Status(), lr.Payment.Status(), lr.SettlesAt())
	}
}

// An owner that fails fails the settlement's unit of work: no transition is written without
// the owner's side and its events.
func TestSweeperWritesNothingWhenTheOwnerFails(t *testing.T) {
	t.Parallel()
	w := newOrderWorld(t)
	r := dueRecord(t, w, "good", payments.StatusProcessing, payments.MethodSEPADebit)
	settles(r, at(1))
	w.fake.Seed(r)
	boom := errors.New("database down")
	w.owner.failSettle = boom
	sw := sweeperOf(t, w, w.fake, w.fake, map[core.Environment]payments.Settlements{w.scope.Env: scriptedSettlements{"good": {Outcome: ports.OutcomeSucceeded}}})
	if _, err := sw.ProcessDue(context.Background(), &w.scope, dueT0.Add(time.Hour)); !errors.Is(err, boom) {
		t.Fatalf("%v", err)
	}
	if s := stored(w, r); s.Payment.Status() != payments.StatusProcessing || len(w.fake.Events()) != 0 || len(w.fake.Mail()) != 0 {
		t.Fatalf("%s, %d events", s.Payment.Status(), len(w.fake.Events()))
	}
}

func TestOpenDisputeOnRefusesUndisputable(t *testing.T) {
	t.Parallel()
	w := newOrderWorld(t)
	r := dueRecord(t, w, "x", payments.StatusProcessing, payments.MethodSEPADebit)
	if _, err := payments.OpenDisputeOn(r.Payment, "fraudulent", dueT0); !errors.Is(err, payments.ErrChargeNotDisputable) {
		t.Fatalf("%v", err)
	}
	ok := dueRecord(t, w, "y", payments.StatusSucceeded, payments.MethodCard)
	if _, err := payments.OpenDisputeOn(ok.Payment, "", dueT0); err == nil {
		t.Fatal("a dispute without a reason")
	}
	if ok.Payment.Status() != payments.StatusSucceeded {
		t.Fatal("a refused dispute changed the payment")
	}
}

// lyingStore lists a full batch of payments that are not due by the module's rule, as a store
// whose due_at disagreed with the rule would.
type lyingStore struct {
	*paymentstest.Fake
	rec   *payments.Record
	lists int
}

func (l *lyingStore) ListDue(_ context.Context, _ *core.Scope, _ time.Time, limit int) ([]*payments.Record, error) {
	l.lists++
	out := make([]*payments.Record, limit)
	for i := range out {
		out[i] = l.rec
	}
	return out, nil
}

// A sweep whose storage lists payments the rule does not find due stops with an error instead
// of reading the same batch forever.
func TestSweeperStopsWhenStorageAndRuleDisagree(t *testing.T) {
	t.Parallel()
	w := newOrderWorld(t)
	r := dueRecord(t, w, "x", payments.StatusSucceeded, payments.MethodSEPADebit)
	settles(r, at(0)) // succeeded: its settlement time is no due work
	store := &lyingStore{Fake: w.fake, rec: r}
	sw := sweeperOf(t, w, store, w.fake, map[core.Environment]payments.Settlements{w.scope.Env: scriptedSettlements{}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := sw.ProcessDue(ctx, &w.scope, dueT0.Add(time.Hour)); err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%v", err)
	}
	if store.lists != 1 {
		t.Fatalf("listed %d times", store.lists)
	}
}

// A decision taken on a state the payment no longer has is dropped (another sweep changed it
// after it was read), and a round that writes nothing ends the sweep.
func TestSweeperDropsDecisionsOnChangedPayments(t *testing.T) {
	t.Parallel()
	w := newOrderWorld(t)
	r := dueRecord(t, w, "good", payments.StatusProcessing, payments.MethodSEPADebit)
	settles(r, at(0))
	w.fake.Seed(r)
	w.orders.beforeDo = func() {
		w.fake.Mutate(r.Payment.ID(), func(rec *payments.Record) {
			if err := rec.Postpone(rec.SettlesAt().Add(time.Hour)); err != nil {
				t.Error(err)
			}
		})
	}
	sw := sweeperOf(t, w, w.fake, w.fake, map[core.Environment]payments.Settlements{w.scope.Env: scriptedSettlements{"good": {Outcome: ports.OutcomeSucceeded}}})
	if n, err := sw.ProcessDue(context.Background(), &w.scope, dueT0.Add(time.Minute)); err != nil || n != 0 {
		t.Fatalf("%d %v", n, err)
	}
	if s := stored(w, r); s.Payment.Status() != payments.StatusProcessing || len(w.fake.Events()) != 0 {
		t.Fatalf("%s, %d events", s.Payment.Status(), len(w.fake.Events()))
	}
}
