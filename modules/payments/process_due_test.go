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

// memDueStore is an in-memory DueStore: it lists records by the module's due rule and keeps
// what the sweep wrote.
type memDueStore struct {
	recs     []*Record
	events   []core.Event
	mail     []core.Mail
	disputes []*Dispute
}

func copyRecord(r *Record) *Record {
	cp := *r
	cp.Payment = RehydratePayment(r.Payment.Snapshot())
	return &cp
}

func (m *memDueStore) due(until time.Time) []*Record {
	var due []*Record
	for _, r := range m.recs {
		if r.IsDue(until) {
			due = append(due, r)
		}
	}
	sort.SliceStable(due, func(i, j int) bool { return due[i].DueAt().Before(*due[j].DueAt()) })
	return due
}

func (m *memDueStore) ListDue(_ context.Context, _ *core.Scope, until time.Time, limit int) ([]*Record, error) {
	due := m.due(until)
	if len(due) > limit {
		due = due[:limit]
	}
	out := make([]*Record, len(due))
	for i, r := range due {
		out[i] = copyRecord(r)
	}
	return out, nil
}

// Do is the unit of work over memDueStore (ports.UnitOfWorkOf[Tx]): a failing fn restores
// every record, event, mail and dispute it wrote.
func (m *memDueStore) Do(ctx context.Context, fn func(ctx context.Context, tx Tx) error) error {
	saved := make([]Record, len(m.recs))
	for i, r := range m.recs {
		saved[i] = *copyRecord(r)
	}
	nr, ne, nm, nd := len(m.recs), len(m.events), len(m.mail), len(m.disputes)
	if err := fn(ctx, memDueTx{m}); err != nil {
		m.recs = m.recs[:nr]
		for i := range saved {
			*m.recs[i] = saved[i]
		}
		m.events, m.mail, m.disputes = m.events[:ne], m.mail[:nm], m.disputes[:nd]
		return err
	}
	return nil
}

// memDueTx is payments.Tx over memDueStore; the sweep writes through Payments, Outbox and
// Mail, never through ChargeAttempts (an empty repository here).
type memDueTx struct{ m *memDueStore }

func (t memDueTx) Payments() PaymentRepository       { return memDuePayments(t) }
func (t memDueTx) ChargeAttempts() AttemptRepository { return memAttempts{newMemTx()} }
func (t memDueTx) Outbox() ports.Outbox              { return memDueOutbox(t) }
func (t memDueTx) Mail() ports.MailQueue             { return memDueOutbox(t) }

type memDuePayments struct{ m *memDueStore }

func (r memDuePayments) Insert(_ context.Context, rec *Record) error {
	r.m.recs = append(r.m.recs, copyRecord(rec))
	return nil
}

func (r memDuePayments) LockDue(_ context.Context, recs []*Record) ([]*Record, error) {
	var out []*Record
	for _, want := range recs {
		for _, rec := range r.m.recs {
			if rec.Payment.ID() == want.Payment.ID() {
				out = append(out, copyRecord(rec))
			}
		}
	}
	return out, nil
}

func (r memDuePayments) SaveDue(_ context.Context, rec *Record, opened *Dispute) error {
	for _, stored := range r.m.recs {
		if stored.Payment.ID() == rec.Payment.ID() {
			*stored = *copyRecord(rec)
			if opened != nil {
				r.m.disputes = append(r.m.disputes, opened)
			}
			return nil
		}
	}
	return errors.New("save due: unknown payment")
}

type memDueOutbox struct{ m *memDueStore }

func (o memDueOutbox) Add(_ context.Context, evs ...core.Event) error {
	o.m.events = append(o.m.events, evs...)
	return nil
}

func (o memDueOutbox) Enqueue(_ context.Context, mails ...core.Mail) error {
	o.m.mail = append(o.m.mail, mails...)
	return nil
}

func (m *memDueStore) NextDue(_ context.Context, _ core.Scope, until time.Time) (time.Time, bool, error) {
	due := m.due(until)
	if len(due) == 0 {
		return time.Time{}, false, nil
	}
	return *due[0].DueAt(), true, nil
}

// newSweeper is NewSweeper with the store as its own unit of work.
func newSweeper(t *testing.T, store interface {
	DueStore
	ports.UnitOfWorkOf[Tx]
}, settle map[core.Environment]Settlements, sessions SessionEvents) *Sweeper {
	t.Helper()
	sw, err := NewSweeper(store, store, settle, sessions)
	if err != nil {
		t.Fatal(err)
	}
	return sw
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
	store := &memDueStore{recs: []*Record{good, bad, later, disputed}}
	proc := scriptedSettlements{
		"good":  {Outcome: ports.OutcomeSucceeded, ProcessorRef: "good"},
		"bad":   {Outcome: ports.OutcomeFailed, ProcessorRef: "bad", DeclineCode: ports.DeclineInsufficientFunds, FailureMessage: "No funds."},
		"later": {Outcome: ports.OutcomeProcessing, ProcessorRef: "later", SettlesAt: at(90)},
	}
	sw := newSweeper(t, store, map[core.Environment]Settlements{dueScope.Env: proc}, fakeSessions{})
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
	if good.AvailableAt == nil || !good.AvailableAt.Equal(at(3).Add(FundsDelay)) || bad.AvailableAt != nil || later.AvailableAt != nil {
		t.Errorf("available at: good %v, bad %v, later %v", good.AvailableAt, bad.AvailableAt, later.AvailableAt)
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
	store := &memDueStore{recs: []*Record{r}}
	sw := newSweeper(t, store, map[core.Environment]Settlements{dueScope.Env: scriptedSettlements{}}, fakeSessions{})
	until := dueT0.Add(time.Hour)
	n, err := sw.ProcessDue(context.Background(), &dueScope, until)
	if n != 0 || !errors.Is(err, ports.ErrProcessorRefUnknown) {
		t.Fatalf("%d %v", n, err)
	}
	if r.Payment.Status() != StatusProcessing || !r.SettlesAt.Equal(until.Add(SettleRetryDelay)) || len(store.events) != 0 {
		t.Fatalf("%s %s %d", r.Payment.Status(), r.SettlesAt, len(store.events))
	}
}

// Settlement goes to the processor of the payment's environment: a live payment is never
// settled by the test environment's (sandbox) processor; without a live processor it waits.
func TestSweeperRoutesSettlementByEnvironment(t *testing.T) {
	t.Parallel()
	r := dueRecord(t, "good", StatusProcessing, MethodSEPADebit)
	live := core.Scope{MerchantID: dueScope.MerchantID, Env: core.EnvLive}
	sid := core.NewID(core.PrefixSession)
	p, err := NewPayment(NewPaymentParams{Scope: live, SessionID: &sid, Amount: 1000, Currency: "EUR",
		Status: StatusProcessing, Method: MethodSEPADebit, Fee: Fee{Currency: "EUR"}, Created: dueT0})
	if err != nil {
		t.Fatal(err)
	}
	lr := &Record{Payment: p, ProcessorRef: "good"}
	at := dueT0.Add(time.Minute)
	r.SettlesAt, lr.SettlesAt = &at, &at
	store := &memDueStore{recs: []*Record{r, lr}}
	sw := newSweeper(t, store, map[core.Environment]Settlements{
		core.EnvTest: scriptedSettlements{"good": {Outcome: ports.OutcomeSucceeded, ProcessorRef: "good"}},
	}, fakeSessions{})
	until := dueT0.Add(time.Hour)
	n, err := sw.ProcessDue(context.Background(), nil, until)
	if n != 1 || !errors.Is(err, ErrNoSettlements) {
		t.Fatalf("%d %v", n, err)
	}
	if r.Payment.Status() != StatusSucceeded || lr.Payment.Status() != StatusProcessing || !lr.SettlesAt.Equal(until.Add(SettleRetryDelay)) {
		t.Fatalf("test %s, live %s settles %s", r.Payment.Status(), lr.Payment.Status(), lr.SettlesAt)
	}
}

// A session that cannot be read fails the batch: no transition is written without its
// events.
func TestSweeperWritesNothingWhenTheSessionCannotBeRendered(t *testing.T) {
	t.Parallel()
	r := dueRecord(t, "good", StatusProcessing, MethodSEPADebit)
	at := dueT0.Add(time.Minute)
	r.SettlesAt = &at
	store := &memDueStore{recs: []*Record{r}}
	boom := errors.New("database down")
	sw := newSweeper(t, store, map[core.Environment]Settlements{dueScope.Env: scriptedSettlements{"good": {Outcome: ports.OutcomeSucceeded}}},
		fakeSessions{err: boom})
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

// lyingStore lists a full batch of payments that are not due by the module's rule, as a store
// whose due_at disagreed with the rule would, and applies nothing.
type lyingStore struct {
	memDueStore
	lists int
}

func (l *lyingStore) ListDue(_ context.Context, _ *core.Scope, _ time.Time, limit int) ([]*Record, error) {
	l.lists++
	out := make([]*Record, limit)
	for i := range out {
		out[i] = copyRecord(l.recs[0])
	}
	return out, nil
}

// A sweep whose storage lists payments the rule does not find due stops with an error instead
// of reading the same batch forever.
func TestSweeperStopsWhenStorageAndRuleDisagree(t *testing.T) {
	t.Parallel()
	r := dueRecord(t, "x", StatusSucceeded, MethodSEPADebit)
	at := dueT0
	r.SettlesAt = &at // succeeded: its settlement time is no due work
	store := &lyingStore{memDueStore: memDueStore{recs: []*Record{r}}}
	sw := newSweeper(t, store, map[core.Environment]Settlements{dueScope.Env: scriptedSettlements{}}, fakeSessions{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := sw.ProcessDue(ctx, &dueScope, dueT0.Add(time.Hour)); err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%v", err)
	}
	if store.lists != 1 {
		t.Fatalf("listed %d times", store.lists)
	}
}

// racingStore changes each payment after the sweep read it, as another sweep would.
type racingStore struct{ memDueStore }

func (r *racingStore) Do(ctx context.Context, fn func(ctx context.Context, tx Tx) error) error {
	for _, rec := range r.recs {
		next := rec.SettlesAt.Add(time.Hour)
		rec.SettlesAt = &next
	}
	return r.memDueStore.Do(ctx, fn)
}

// A decision taken on a state the payment no longer has is dropped, and a round that writes
// nothing ends the sweep.
func TestSweeperDropsDecisionsOnChangedPayments(t *testing.T) {
	t.Parallel()
	r := dueRecord(t, "good", StatusProcessing, MethodSEPADebit)
	at := dueT0
	r.SettlesAt = &at
	store := &racingStore{memDueStore{recs: []*Record{r}}}
	sw := newSweeper(t, store, map[core.Environment]Settlements{dueScope.Env: scriptedSettlements{"good": {Outcome: ports.OutcomeSucceeded}}}, fakeSessions{})
	if n, err := sw.ProcessDue(context.Background(), &dueScope, dueT0.Add(time.Minute)); err != nil || n != 0 {
		t.Fatalf("%d %v", n, err)
	}
	if r.Payment.Status() != StatusProcessing || len(store.events) != 0 {
		t.Fatalf("%s, %d events", r.Payment.Status(), len(store.events))
	}
}
