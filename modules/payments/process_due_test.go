package payments

import (
	"context"
	"errors"
	"sort"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

var dueT0 = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)

// memDueStore is an in-memory DueStore: it claims records by the same due rule as storage
// (settlement while processing, an announced dispute while disputable and not yet opened)
// and keeps what the handler wrote.
type memDueStore struct {
	recs     []*Record
	opened   map[string]bool // payment id → dispute opened
	events   []core.Event
	mail     []core.Mail
	disputes []*Dispute
}

func (m *memDueStore) dueAt(r *Record) *time.Time {
	switch st := r.Payment.Status(); {
	case st == StatusProcessing:
		return r.SettlesAt
	case (st == StatusSucceeded || st == StatusPartiallyRefunded) && !m.opened[r.Payment.ID()]:
		return r.DisputeOpensAt
	}
	return nil
}

func (m *memDueStore) ClaimDue(_ context.Context, _ *core.Scope, until time.Time, limit int, fn DueFunc) (int, error) {
	var due []*Record
	for _, r := range m.recs {
		if at := m.dueAt(r); at != nil && !at.After(until) {
			due = append(due, r)
		}
	}
	sort.SliceStable(due, func(i, j int) bool { return m.dueAt(due[i]).Before(*m.dueAt(due[j])) })
	if len(due) > limit {
		due = due[:limit]
	}
	// One transaction: work on copies, keep them only when every handler succeeded.
	type result struct {
		orig, cp *Record
		ch       DueChange
	}
	var results []result
	for _, r := range due {
		cp := *r
		cp.Payment = RehydratePayment(r.Payment.Snapshot())
		ch, err := fn(&cp)
		if err != nil {
			return 0, err
		}
		results = append(results, result{r, &cp, ch})
	}
	for _, res := range results {
		*res.orig = *res.cp
		if res.ch.Dispute != nil {
			m.opened[res.orig.Payment.ID()] = true
			m.disputes = append(m.disputes, res.ch.Dispute)
		}
		m.events = append(m.events, res.ch.Events...)
		m.mail = append(m.mail, res.ch.Mail...)
	}
	return len(due), nil
}

func (m *memDueStore) NextDue(_ context.Context, _ core.Scope, until time.Time) (time.Time, bool, error) {
	var next *time.Time
	for _, r := range m.recs {
		if at := m.dueAt(r); at != nil && !at.After(until) && (next == nil || at.Before(*next)) {
			next = at
		}
	}
	if next == nil {
		return time.Time{}, false, nil
	}
	return *next, true, nil
}

// scriptedSettlements answers Settle from a table by processor ref.
type scriptedSettlements map[string]ports.ChargeResult

func (s scriptedSettlements) Settle(_ context.Context, ref string, _ time.Time) (ports.ChargeResult, error) {
	res, ok := s[ref]
	if !ok {
		return ports.ChargeResult{}, ports.ErrProcessorRefUnknown
	}
	return res, nil
}

type fakeSessions struct{ err error }

// sessionSubject is the session event fakeSessions gives: the session id and the payment.
type sessionSubject struct {
	id string
	p  *Payment
}

func (s sessionSubject) EventObjectID() string { return s.id }

func (f fakeSessions) SessionEventWithPayment(_ context.Context, _ core.Scope, id string, p *Payment) (core.DomainEvent, error) {
	if f.err != nil {
		return nil, f.err
	}
	return sessionSubject{id: id, p: p}, nil
}

var dueScope = core.Scope{MerchantID: "mer_due", Env: core.EnvTest}

func dueRecord(t *testing.T, ref string, status Status, method PaymentMethod) *Record {
	t.Helper()
	sid := core.NewID(core.PrefixSession)
	var card *Card
	if method == MethodCard {
		card = &Card{Brand: "visa", Last4: "0259", Country: "US", Funding: "credit"}
	}
	p, err := NewPayment(NewPaymentParams{Scope: dueScope, SessionID: &sid, Amount: 1000, Currency: "EUR",
		Status: status, Method: method, Card: card, Fee: Fee{Currency: "EUR"}, Created: dueT0})
	if err != nil {
		t.Fatal(err)
	}
	return &Record{Payment: p, ProcessorRef: ref}
}

func TestSweeperSettlesDisputesInTimeOrder(t *testing.T) {
	t.Parallel()
	good := dueRecord(t, "good", StatusProcessing, MethodSEPADebit)
	bad := dueRecord(t, "bad", StatusProcessing, MethodSEPADebit)
	later := dueRecord(t, "later", StatusProcessing, MethodSEPADebit)
	disputed := dueRecord(t, "card", StatusSucceeded, MethodCard)
	at := func(m int) *time.Time { v := dueT0.Add(time.Duration(m) * time.Minute); return &v }
	good.SettlesAt, bad.SettlesAt, later.SettlesAt = at(3), at(2), at(1)
	disputed.DisputeOpensAt, disputed.DisputeReason = at(4), "fraudulent"
	store := &memDueStore{recs: []*Record{good, bad, later, disputed}, opened: map[string]bool{}}
	proc := scriptedSettlements{
		"good":  {Outcome: ports.OutcomeSucceeded, ProcessorRef: "good"},
		"bad":   {Outcome: ports.OutcomeFailed, ProcessorRef: "bad", DeclineCode: ports.DeclineInsufficientFunds, FailureMessage: "No funds."},
		"later": {Outcome: ports.OutcomeProcessing, ProcessorRef: "later", SettlesAt: at(90)},
	}
	sw := NewSweeper(store, proc, fakeSessions{})
	n, err := sw.ProcessDue(context.Background(), &dueScope, dueT0.Add(time.Hour))
	if err != nil || n != 3 {
		t.Fatalf("%d %v", n, err)
	}
	if good.Payment.Status() != StatusSucceeded || bad.Payment.Status() != StatusFailed ||
		later.Payment.Status() != StatusProcessing || disputed.Payment.Status() != StatusDisputed {
		t.Fatalf("states %s %s %s %s", good.Payment.Status(), bad.Payment.Status(), later.Payment.Status(), disputed.Payment.Status())
	}
	if *bad.Payment.FailureCode() != ports.DeclineInsufficientFunds || *bad.Payment.FailureMessage() != "No funds." {
		t.Errorf("failure %v %v", *bad.Payment.FailureCode(), *bad.Payment.FailureMessage())
	}
	if !later.SettlesAt.Equal(*at(90)) {
		t.Errorf("still processing: settles at %s", later.SettlesAt)
	}
	// The payment that succeeded queues its receipt, dated when it succeeded; nothing else does.
	if len(store.mail) != 1 || store.mail[0] != (core.Mail{Kind: MailReceipt, Scope: dueScope, SubjectID: good.Payment.ID(), Created: *at(3)}) {
		t.Errorf("mail %+v", store.mail)
	}
	if disputed.Payment.StatusBeforeDispute() != StatusSucceeded || len(store.disputes) != 1 {
		t.Fatalf("dispute: %s %d", disputed.Payment.StatusBeforeDispute(), len(store.disputes))
	}
	d := store.disputes[0]
	if d.PaymentID() != disputed.Payment.ID() || d.Amount() != 1000 || d.Reason() != "fraudulent" ||
		d.Status() != DisputeNeedsResponse || !d.Created().Equal(*at(4)) || !d.EvidenceDueBy().Equal(at(4).Add(EvidenceWindow)) ||
		!core.HasIDShape(d.ID(), DisputePrefix) {
		t.Errorf("dispute %+v", d.Snapshot())
	}
	want := []struct {
		typ core.EventType
		at  *time.Time
	}{
		{EventPaymentIntentPaymentFailed, at(2)}, {EventCheckoutSessionAsyncPaymentFailed, at(2)},
		{EventPaymentIntentSucceeded, at(3)}, {EventCheckoutSessionAsyncPaymentSucceeded, at(3)},
		{EventChargeDisputeCreated, at(4)},
	}
	if len(store.events) != len(want) {
		t.Fatalf("%d events", len(store.events))
	}
	for i, w := range want {
		if e := store.events[i]; e.Type != w.typ || !e.Created.Equal(*w.at) || e.Scope != dueScope {
			t.Errorf("event %d: %s at %s, want %s at %s", i, e.Type, e.Created, w.typ, w.at)
		}
	}
	if sub, ok := store.events[3].Subject.(sessionSubject); !ok || sub.p.Status() != StatusSucceeded ||
		sub.p.ID() != good.Payment.ID() || store.events[3].ObjectID != *good.Payment.SessionID() {
		t.Errorf("session subject %+v", store.events[3].Subject)
	}
	if sub, ok := store.events[4].Subject.(DisputeEvent); !ok || sub.Dispute.PaymentID() != disputed.Payment.ID() ||
		store.events[4].ObjectID != sub.Dispute.ID() {
		t.Errorf("dispute subject %+v", store.events[4].Subject)
	}
	// Nothing is due twice.
	if n, err := sw.ProcessDue(context.Background(), &dueScope, dueT0.Add(time.Hour)); err != nil || n != 0 {
		t.Fatalf("again: %d %v", n, err)
	}
}

func TestSweeperPostponesOnProcessorErrors(t *testing.T) {
	t.Parallel()
	r := dueRecord(t, "unknown", StatusProcessing, MethodSEPADebit)
	at := dueT0.Add(time.Minute)
	r.SettlesAt = &at
	store := &memDueStore{recs: []*Record{r}, opened: map[string]bool{}}
	sw := NewSweeper(store, scriptedSettlements{}, fakeSessions{})
	until := dueT0.Add(time.Hour)
	n, err := sw.ProcessDue(context.Background(), &dueScope, until)
	if n != 0 || !errors.Is(err, ports.ErrProcessorRefUnknown) {
		t.Fatalf("%d %v", n, err)
	}
	if r.Payment.Status() != StatusProcessing || !r.SettlesAt.Equal(until.Add(SettleRetryDelay)) || len(store.events) != 0 {
		t.Fatalf("%s %s %d", r.Payment.Status(), r.SettlesAt, len(store.events))
	}
}

// A session that cannot be rendered fails the batch: no transition is written without its
// events.
func TestSweeperWritesNothingWhenTheSessionCannotBeRendered(t *testing.T) {
	t.Parallel()
	r := dueRecord(t, "good", StatusProcessing, MethodSEPADebit)
	at := dueT0.Add(time.Minute)
	r.SettlesAt = &at
	store := &memDueStore{recs: []*Record{r}, opened: map[string]bool{}}
	boom := errors.New("database down")
	sw := NewSweeper(store, scriptedSettlements{"good": {Outcome: ports.OutcomeSucceeded}}, fakeSessions{err: boom})
	if _, err := sw.ProcessDue(context.Background(), &dueScope, dueT0.Add(time.Hour)); !errors.Is(err, boom) {
		t.Fatalf("%v", err)
	}
	if r.Payment.Status() != StatusProcessing || len(store.events) != 0 {
		t.Fatalf("%s, %d events", r.Payment.Status(), len(store.events))
	}
}

func TestOpenDisputeOnRefusesUndisputable(t *testing.T) {
	t.Parallel()
	r := dueRecord(t, "x", StatusProcessing, MethodSEPADebit)
	if _, err := OpenDisputeOn(r.Payment, "fraudulent", dueT0); !errors.Is(err, ErrChargeNotDisputable) {
		t.Fatalf("%v", err)
	}
	ok := dueRecord(t, "y", StatusSucceeded, MethodCard)
	if _, err := OpenDisputeOn(ok.Payment, "", dueT0); err == nil {
		t.Fatal("a dispute without a reason")
	}
	if ok.Payment.Status() != StatusSucceeded {
		t.Fatal("a refused dispute changed the payment")
	}
}
