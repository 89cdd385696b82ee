package payments_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/modules/payments/paymentstest"
	"github.com/kassa-pay/kassa/ports"
)

// A second payable kind, defined only here, charged through the same protocol as checkout
// sessions: the proof that the protocol is payments' and not checkout's. An order is paid
// once; it counts its attempts and declines, keeps a charge waiting for 3-D Secure, and is
// marked as needing its customer when an off-session charge needs them.

var orderKind = payments.KindSpec{Name: "test_order", Link: payments.LinkInvoice, Payments: payments.OnePaymentPerPayable}

type order struct {
	id       string
	scope    core.Scope
	amount   int64
	status   string // open, processing, paid, failed
	attempts int
	declines int
	charging string
	action   *payments.CustomerAction
	// needsCustomer: an off-session charge needed the customer (authentication_required).
	needsCustomer bool
}

func (o *order) ID() string                  { return o.id }
func (o *order) Scope() core.Scope           { return o.scope }
func (o *order) Amount() int64               { return o.amount }
func (o *order) Currency() core.Currency     { return "EUR" }
func (o *order) CustomerName() string        { return "Grace Hopper" }
func (o *order) CustomerEmail() string       { return "grace@example.com" }
func (o *order) Reference() *string          { return nil }
func (o *order) Description() *string        { return nil }
func (o *order) Metadata() map[string]string { return nil }

var errOrderNotOpen = errors.New("order: not open")

// orderTx is the order owner's Tx: payments' repositories and the orders.
type orderTx interface {
	payments.Tx
	Orders() *orderBook
}

type orderBook struct{ m map[string]order }

func (b *orderBook) lock(id string) (*order, error) {
	o, ok := b.m[id]
	if !ok {
		return nil, fmt.Errorf("order %s: not found", id)
	}
	return &o, nil
}

func (b *orderBook) save(o *order) { b.m[o.id] = *o }

// orderStore is the unit of work over the orders and the payments fake.
type orderStore struct {
	mu    sync.Mutex
	book  orderBook
	fake  *paymentstest.Fake
	owner *orderOwner
	// beforeDo runs before each unit of work (a test plays another transaction with it).
	beforeDo func()
}

type orderTxOf struct {
	payments.Tx
	book *orderBook
}

func (t orderTxOf) Orders() *orderBook { return t.book }

func (s *orderStore) Do(ctx context.Context, fn func(ctx context.Context, tx orderTx) error) error {
	if s.beforeDo != nil {
		s.beforeDo()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	saved := maps.Clone(s.book.m)
	err := s.fake.Hold(func(tx payments.Tx) error { return fn(ctx, orderTxOf{Tx: tx, book: &s.book}) })
	if err != nil {
		s.book.m = saved
	}
	return err
}

func (s *orderStore) get(id string) order {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.book.m[id]
}

// orderOwner is the PayableOwner of orders. failApply makes the next n ApplyOutcome fail, as
// a process dying between the attempt's commit and the outcome's would leave things.
type orderOwner struct {
	mu        sync.Mutex
	failApply int
	// failSettle makes ApplySettlement fail.
	failSettle error
}

var _ payments.PayableOwner[orderTx] = (*orderOwner)(nil)

func (*orderOwner) LockPayable(_ context.Context, tx orderTx, _ core.Scope, id string) (payments.Payable, error) {
	return tx.Orders().lock(id)
}

func (*orderOwner) BeginCharge(_ context.Context, tx orderTx, p payments.Payable, start payments.ChargeStart) (int, error) {
	o := p.(*order)
	if o.charging != "" {
		return 0, payments.ErrChargeInProgress
	}
	if o.status != "open" {
		return 0, errOrderNotOpen
	}
	if start.Kind == payments.AttemptCharge {
		o.action = nil
	}
	o.attempts++
	o.charging = payments.AttemptKey(o.id, o.attempts)
	tx.Orders().save(o)
	return o.attempts, nil
}

func (*orderOwner) KeptAction(p payments.Payable) *payments.CustomerAction { return p.(*order).action }

func (w *orderOwner) ApplyOutcome(_ context.Context, tx orderTx, p payments.Payable, a *payments.ChargeAttempt, out *payments.ChargeOutcome) ([]core.Event, error) {
	w.mu.Lock()
	fail := w.failApply > 0
	if fail {
		w.failApply--
	}
	w.mu.Unlock()
	if fail {
		return nil, errors.New("order: the process died")
	}
	o := p.(*order)
	if o.charging != a.IdempotencyKey() {
		return nil, fmt.Errorf("order %s: %s is not the charge in flight", o.id, a.IdempotencyKey())
	}
	o.charging, o.action = "", nil
	switch out.Result {
	case ports.OutcomeSucceeded:
		o.status = "paid"
	case ports.OutcomeProcessing:
		o.status = "processing"
	case ports.OutcomeFailed:
		o.declines++
		o.needsCustomer = out.CustomerActionRequired
	case ports.OutcomeRequiresAction: // KeepCustomerAction's, never here
		return nil, fmt.Errorf("order %s: a charge waiting for the customer is kept, not applied", o.id)
	}
	tx.Orders().save(o)
	return nil, nil
}

func (*orderOwner) KeepCustomerAction(_ context.Context, tx orderTx, p payments.Payable, _ *payments.ChargeAttempt, act payments.CustomerAction) error {
	o := p.(*order)
	o.charging, o.action = "", &act
	tx.Orders().save(o)
	return nil
}

func (*orderOwner) AbandonCharge(_ context.Context, tx orderTx, p payments.Payable, a *payments.ChargeAttempt) error {
	o := p.(*order)
	if o.charging == a.IdempotencyKey() {
		o.charging = ""
	}
	tx.Orders().save(o)
	return nil
}

// orderSettled is the order's own event of a settlement.
type orderSettled struct{ id string }

func (e orderSettled) EventObjectID() string { return e.id }

const eventOrderSettled core.EventType = "order.settled"

func (w *orderOwner) ApplySettlement(_ context.Context, tx orderTx, p payments.Payable, pay *payments.Payment, at time.Time) ([]core.Event, error) {
	if w.failSettle != nil {
		return nil, w.failSettle
	}
	o := p.(*order)
	if pay.Status() == payments.StatusSucceeded {
		o.status = "paid"
	} else {
		o.status = "failed"
	}
	tx.Orders().save(o)
	return []core.Event{core.NewEvent(eventOrderSettled, o.scope, at, orderSettled{id: o.id})}, nil
}

// wall is a settable wall clock.
type wall struct {
	mu sync.Mutex
	t  time.Time
}

func (w *wall) Now() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.t
}

func (w *wall) add(d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.t = w.t.Add(d)
}

// Test cards of the scripted processor.
const (
	cardOK        = "4242424242424242"
	cardDeclined  = "4000000000000002"
	card3DS       = "4000002760003184"
	ibanOK        = "DE89370400440532013000"
	chargedAtTest = "2026-11-20T10:00:00Z"
)

// scripted is a ports.Processor with the sandbox's test cards' behaviour, remembering its
// charges by idempotency key. failBefore fails the next n calls before the charge is made
// (the processor never receives it); failAfter fails them after it was made (the answer is
// lost on the way back).
type scripted struct {
	mu                    sync.Mutex
	byKey                 map[string]ports.ChargeResult
	byRef                 map[string]ports.ChargeResult
	failBefore, failAfter int
	calls                 int
}

func newScripted() *scripted {
	return &scripted{byKey: map[string]ports.ChargeResult{}, byRef: map[string]ports.ChargeResult{}}
}

var visa = &ports.CardInfo{Brand: "visa", Last4: "4242", Country: "DE", Funding: "credit", ExpMonth: 12, ExpYear: 2031}

func (s *scripted) Charge(_ context.Context, req ports.ChargeRequest, now time.Time) (ports.ChargeResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if s.failBefore > 0 {
		s.failBefore--
		return ports.ChargeResult{}, errors.New("processor: connection refused")
	}
	if res, ok := s.byKey[req.IdempotencyKey]; ok {
		return res, nil
	}
	ref := fmt.Sprintf("ch_%d", len(s.byKey)+1)
	var res ports.ChargeResult
	switch {
	case req.SEPA != nil:
		at := now.Add(72 * time.Hour)
		res = ports.ChargeResult{Outcome: ports.OutcomeProcessing, ProcessorRef: ref, SEPA: &ports.SEPAInfo{Country: "DE", Last4: "3000"}, SettlesAt: &at}
	case req.Card.Number == cardDeclined:
		res = ports.ChargeResult{Outcome: ports.OutcomeFailed, ProcessorRef: ref, Card: visa, DeclineCode: ports.DeclineGenericDecline, FailureMessage: "Your card was declined."}
	case req.Card.Number == card3DS:
		res = ports.ChargeResult{Outcome: ports.OutcomeRequiresAction, ProcessorRef: ref, Card: visa, Action: &ports.ChargeAction{Kind: ports.ActionThreeDSecure}}
	default:
		res = ports.ChargeResult{Outcome: ports.OutcomeSucceeded, ProcessorRef: ref, Card: visa}
	}
	s.byKey[req.IdempotencyKey], s.byRef[ref] = res, res
	if s.failAfter > 0 {
		s.failAfter--
		return ports.ChargeResult{}, errors.New("processor: connection reset")
	}
	return res, nil
}

func (s *scripted) CompleteAction(_ context.Context, ref string, approve bool, _ time.Time) (ports.ChargeResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byRef[ref]; !ok {
		return ports.ChargeResult{}, ports.ErrProcessorRefUnknown
	}
	if !approve {
		return ports.ChargeResult{Outcome: ports.OutcomeFailed, ProcessorRef: ref, DeclineCode: ports.DeclineAuthenticationFailed}, nil
	}
	return ports.ChargeResult{Outcome: ports.OutcomeSucceeded, ProcessorRef: ref}, nil // no card: the kept action's fills it in
}

func (s *scripted) Settle(_ context.Context, ref string, _ time.Time) (ports.ChargeResult, error) {
	return ports.ChargeResult{Outcome: ports.OutcomeSucceeded, ProcessorRef: ref}, nil
}

// Refund and LookupRefund: the orders of these tests are never refunded; a refund here is a
// bug of the test.
func (s *scripted) Refund(context.Context, ports.RefundRequest, time.Time) (ports.RefundResult, error) {
	return ports.RefundResult{}, errors.New("scripted: no refunds in these tests")
}

func (s *scripted) LookupRefund(context.Context, core.Scope, string, time.Time) (ports.RefundResult, error) {
	return ports.RefundResult{}, ports.ErrRefundUnknown
}

func (s *scripted) Lookup(_ context.Context, _ core.Scope, key string, _ time.Time) (ports.ChargeResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	res, ok := s.byKey[key]
	if !ok {
		return ports.ChargeResult{}, ports.ErrChargeUnknown
	}
	return res, nil
}

// orderWorld is a charger with the order kind, over the payments fake.
type orderWorld struct {
	fake    *paymentstest.Fake
	orders  *orderStore
	owner   *orderOwner
	proc    *scripted
	wall    *wall
	charger *payments.Charger
	sweeper *payments.AttemptSweeper
	settle  *payments.Sweeper
	scope   core.Scope
	now     time.Time
}

func newOrderWorld(t *testing.T) *orderWorld {
	t.Helper()
	now, _ := time.Parse(time.RFC3339, chargedAtTest)
	w := &orderWorld{fake: paymentstest.NewFake(), owner: &orderOwner{}, proc: newScripted(),
		wall: &wall{t: time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)}, now: now,
		scope: core.Scope{MerchantID: core.NewID(core.PrefixMerchant), Env: core.EnvTest}}
	w.orders = &orderStore{book: orderBook{m: map[string]order{}}, fake: w.fake, owner: w.owner}
	kind, err := payments.BindKind[orderTx](orderKind, w.orders, w.owner)
	if err != nil {
		t.Fatal(err)
	}
	w.charger, err = payments.NewCharger(payments.ChargerDeps{
		Fees:       payments.NewFeeCalculator(payments.DefaultFeeSchedule(), nil),
		Processors: map[core.Environment]ports.Processor{core.EnvTest: w.proc},
		Attempts:   w.fake, Wall: w.wall, Kinds: []payments.Kind{kind}, ChargeWait: 100 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if w.sweeper, err = payments.NewAttemptSweeper(w.charger); err != nil {
		t.Fatal(err)
	}
	if w.settle, err = payments.NewSweeper(w.fake, w.fake, map[core.Environment]payments.Settlements{core.EnvTest: w.proc}, w.charger); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *orderWorld) newOrder() string {
	id := core.NewID("ord_")
	w.orders.mu.Lock()
	defer w.orders.mu.Unlock()
	w.orders.book.m[id] = order{id: id, scope: w.scope, amount: 4200, status: "open"}
	return id
}

func (w *orderWorld) card(id, number string) payments.ChargeRequest {
	return payments.ChargeRequest{Kind: orderKind.Name, Scope: w.scope, PayableID: id, Now: w.now, Method: ports.MethodCard,
		Source: payments.Source{Card: &ports.CardDetails{Number: number, ExpMonth: 12, ExpYear: 2031, CVC: "123"}}}
}

func (w *orderWorld) types() []core.EventType {
	var out []core.EventType
	for _, e := range w.fake.Events() {
		out = append(out, e.Type)
	}
	return out
}

func (w *orderWorld) paymentsOf(id string) []*payments.Record {
	var out []*payments.Record
	for _, r := range w.fake.Records() {
		if r.Payment.PayableID() == id {
			out = append(out, r)
		}
	}
	return out
}

func sameTypes(got []core.EventType, want ...core.EventType) bool {
	return fmt.Sprint(got) == fmt.Sprint(want)
}

func TestOrderKindCardSucceeds(t *testing.T) {
	t.Parallel()
	w := newOrderWorld(t)
	id := w.newOrder()
	r, err := w.charger.Charge(context.Background(), w.card(id, cardOK))
	if err != nil || !r.Applied || r.Outcome != ports.OutcomeSucceeded || r.Payment == nil {
		t.Fatalf("%+v %v", r, err)
	}
	p := r.Payment
	if p.PayableKind() != orderKind.Name || p.InvoiceID() == nil || *p.InvoiceID() != id || p.SessionID() != nil ||
		p.Status() != payments.StatusSucceeded || p.Amount() != 4200 || p.Fee().ServiceFeeEUR <= 0 || !p.Created().Equal(w.now) {
		t.Fatalf("payment %+v", p.Snapshot())
	}
	if o := w.orders.get(id); o.status != "paid" || o.charging != "" || o.attempts != 1 {
		t.Fatalf("order %+v", o)
	}
	if !sameTypes(w.types(), payments.EventPaymentIntentSucceeded) {
		t.Fatalf("events %v", w.types())
	}
	if m := w.fake.Mail(); len(m) != 1 || m[0].SubjectID != p.ID() {
		t.Fatalf("mail %+v", m)
	}
	if a := w.fake.Attempt(id + ":1"); a.Status != payments.AttemptApplied || a.PayableKind != orderKind.Name || a.StartedAt.IsZero() || a.ResolvedAt.IsZero() {
		t.Fatalf("attempt %+v", a)
	}
	// The order refuses a second charge; nothing more is written.
	if _, err := w.charger.Charge(context.Background(), w.card(id, cardOK)); !errors.Is(err, errOrderNotOpen) {
		t.Fatalf("second charge: %v", err)
	}
	if len(w.paymentsOf(id)) != 1 {
		t.Fatal("a second payment")
	}
}

func TestOrderKindDeclineThenSuccess(t *testing.T) {
	t.Parallel()
	w := newOrderWorld(t)
	id := w.newOrder()
	r, err := w.charger.Charge(context.Background(), w.card(id, cardDeclined))
	if err != nil || !r.Applied || r.Decline == nil || r.Decline.Code != ports.DeclineGenericDecline || r.Payment != nil {
		t.Fatalf("%+v %v", r, err)
	}
	evs := w.fake.Events()
	if len(evs) != 1 || evs[0].Type != payments.EventPaymentIntentPaymentFailed {
		t.Fatalf("events %v", w.types())
	}
	if d, ok := evs[0].Subject.(payments.ChargeDeclined); !ok || d.InvoiceID != id || d.SessionID != "" || d.Amount != 4200 {
		t.Fatalf("declined subject %+v", evs[0].Subject)
	}
	if o := w.orders.get(id); o.declines != 1 || o.status != "open" || o.charging != "" {
		t.Fatalf("order %+v", o)
	}
	if r, err := w.charger.Charge(context.Background(), w.card(id, cardOK)); err != nil || r.Outcome != ports.OutcomeSucceeded {
		t.Fatalf("retry: %+v %v", r, err)
	}
	if o := w.orders.get(id); o.status != "paid" || o.attempts != 2 {
		t.Fatalf("order %+v", o)
	}
}

func TestOrderKindThreeDSecure(t *testing.T) {
	t.Parallel()
	w := newOrderWorld(t)
	id := w.newOrder()
	r, err := w.charger.Charge(context.Background(), w.card(id, card3DS))
	if err != nil || r.Outcome != ports.OutcomeRequiresAction || r.Action == nil || r.Action.Kind != ports.ActionThreeDSecure {
		t.Fatalf("%+v %v", r, err)
	}
	if o := w.orders.get(id); o.action == nil || o.action.ProcessorRef == "" || o.action.Card == nil || o.charging != "" {
		t.Fatalf("order %+v", o)
	}
	answer := payments.ChargeRequest{Kind: orderKind.Name, Scope: w.scope, PayableID: id, Now: w.now.Add(time.Minute),
		Answer: &payments.ActionAnswer{Approve: true}}
	r, err = w.charger.Charge(context.Background(), answer)
	if err != nil || r.Outcome != ports.OutcomeSucceeded || r.Payment == nil || r.Payment.Card() == nil || r.Payment.Card().Last4 != "4242" {
		t.Fatalf("answer: %+v %v", r, err)
	}
	if a := w.fake.Attempt(id + ":2"); a.Kind != payments.AttemptAction || !a.Approve || a.Status != payments.AttemptApplied {
		t.Fatalf("attempt %+v", a)
	}
	if !sameTypes(w.types(), payments.EventPaymentIntentRequiresAction, payments.EventPaymentIntentSucceeded) {
		t.Fatalf("events %v", w.types())
	}
	// No action is kept any more.
	if _, err := w.charger.Charge(context.Background(), answer); !errors.Is(err, errOrderNotOpen) {
		t.Fatalf("a second answer: %v", err)
	}
	other := w.newOrder()
	answer.PayableID = other
	if _, err := w.charger.Charge(context.Background(), answer); !errors.Is(err, payments.ErrNoCustomerAction) {
		t.Fatalf("an answer without an action: %v", err)
	}
}

// An off-session charge of a card that needs 3-D Secure fails with authentication_required,
// and the owner learns that the customer must pay themselves.
func TestOrderKindOffSessionNeedsTheCustomer(t *testing.T) {
	t.Parallel()
	w := newOrderWorld(t)
	id := w.newOrder()
	req := w.card(id, card3DS)
	req.Source.OffSession = true
	r, err := w.charger.Charge(context.Background(), req)
	if err != nil || r.Outcome != ports.OutcomeFailed || r.Decline == nil || r.Decline.Code != ports.DeclineAuthenticationRequired {
		t.Fatalf("%+v %v", r, err)
	}
	if o := w.orders.get(id); !o.needsCustomer || o.action != nil || o.declines != 1 {
		t.Fatalf("order %+v", o)
	}
	if a := w.fake.Attempt(id + ":1"); !a.OffSession || a.Outcome != ports.OutcomeFailed {
		t.Fatalf("attempt %+v", a)
	}
	evs := w.fake.Events()
	if d, ok := evs[0].Subject.(payments.ChargeDeclined); !ok || d.DeclineCode != ports.DeclineAuthenticationRequired {
		t.Fatalf("declined subject %+v", evs[0].Subject)
	}
}

// SEPA: processing, then the settlement sweep settles the payment and calls the order's owner
// in the same unit of work.
func TestOrderKindSEPASettles(t *testing.T) {
	t.Parallel()
	w := newOrderWorld(t)
	id := w.newOrder()
	req := payments.ChargeRequest{Kind: orderKind.Name, Scope: w.scope, PayableID: id, Now: w.now, Method: ports.MethodSEPADebit,
		Source: payments.Source{SEPA: &ports.SEPADetails{IBAN: ibanOK, AccountHolder: "Grace Hopper"}}}
	r, err := w.charger.Charge(context.Background(), req)
	if err != nil || r.Outcome != ports.OutcomeProcessing || r.Payment.Status() != payments.StatusProcessing {
		t.Fatalf("%+v %v", r, err)
	}
	if o := w.orders.get(id); o.status != "processing" {
		t.Fatalf("order %+v", o)
	}
	if n, err := w.settle.ProcessDue(context.Background(), &w.scope, w.now.Add(71*time.Hour)); err != nil || n != 0 {
		t.Fatalf("before its time: %d %v", n, err)
	}
	n, err := w.settle.ProcessDue(context.Background(), &w.scope, w.now.Add(73*time.Hour))
	if err != nil || n != 1 {
		t.Fatalf("settle: %d %v", n, err)
	}
	if o := w.orders.get(id); o.status != "paid" {
		t.Fatalf("order %+v", o)
	}
	recs := w.paymentsOf(id)
	if len(recs) != 1 || recs[0].Payment.Status() != payments.StatusSucceeded || recs[0].AvailableAt() == nil {
		t.Fatalf("payment %+v", recs)
	}
	if !sameTypes(w.types(), payments.EventPaymentIntentSucceeded, eventOrderSettled) || len(w.fake.Mail()) != 1 {
		t.Fatalf("events %v, mail %v", w.types(), w.fake.Mail())
	}
	if n, err := w.settle.ProcessDue(context.Background(), &w.scope, w.now.Add(73*time.Hour)); err != nil || n != 0 {
		t.Fatalf("again: %d %v", n, err)
	}
}

// A crash between the attempt's commit and the outcome's: the order stays charging with its
// attempt pending. A charge meanwhile waits and answers ErrChargeInProgress; once the attempt
// is older than AttemptGrace the sweeper resolves it by lookup, once.
func TestOrderKindCrashBetweenStepsIsResolvedOnceBySweeper(t *testing.T) {
	t.Parallel()
	w := newOrderWorld(t)
	id := w.newOrder()
	w.owner.failApply = 1
	if _, err := w.charger.Charge(context.Background(), w.card(id, cardOK)); err == nil {
		t.Fatal("the failed outcome was answered")
	}
	if o := w.orders.get(id); o.charging != id+":1" || o.status != "open" {
		t.Fatalf("order after the crash %+v", o)
	}
	if len(w.paymentsOf(id)) != 0 || len(w.fake.Events()) != 0 {
		t.Fatal("the failed unit of work left writes")
	}
	if _, err := w.charger.Charge(context.Background(), w.card(id, cardOK)); !errors.Is(err, payments.ErrChargeInProgress) {
		t.Fatalf("a charge while the first is young: %v", err)
	}
	if n, err := w.sweeper.ProcessDue(context.Background(), nil, w.now); err != nil || n != 0 {
		t.Fatalf("sweep within the grace: %d %v", n, err)
	}
	w.wall.add(payments.AttemptGrace + time.Second)
	var wg sync.WaitGroup
	counts := make([]int, 3)
	for i := range counts {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			n, err := w.sweeper.ProcessDue(context.Background(), nil, w.now)
			if err != nil {
				t.Error(err)
			}
			counts[i] = n
		}(i)
	}
	wg.Wait()
	if counts[0]+counts[1]+counts[2] != 1 {
		t.Fatalf("resolved %v times", counts)
	}
	if o := w.orders.get(id); o.status != "paid" || o.charging != "" {
		t.Fatalf("order %+v", o)
	}
	if len(w.paymentsOf(id)) != 1 || !sameTypes(w.types(), payments.EventPaymentIntentSucceeded) || w.proc.calls != 1 {
		t.Fatalf("payments %d, events %v, processor calls %d", len(w.paymentsOf(id)), w.types(), w.proc.calls)
	}
}

// The next charge that meets an attempt older than AttemptGrace resolves it at once by lookup
// instead of waiting for the sweep (issue: a confirm in flight when the process died blocked
// its payable for two minutes).
func TestOrderKindStaleAttemptIsResolvedByTheNextCharge(t *testing.T) {
	t.Parallel()
	w := newOrderWorld(t)
	id := w.newOrder()
	w.owner.failApply = 1
	if _, err := w.charger.Charge(context.Background(), w.card(id, cardDeclined)); err == nil {
		t.Fatal("the failed outcome was answered")
	}
	w.wall.add(payments.AttemptGrace + time.Second)
	began := time.Now()
	r, err := w.charger.Charge(context.Background(), w.card(id, cardOK))
	if err != nil || r.Outcome != ports.OutcomeSucceeded || time.Since(began) > time.Second {
		t.Fatalf("%+v %v after %v", r, err, time.Since(began))
	}
	o := w.orders.get(id)
	if o.declines != 1 || o.status != "paid" || o.attempts != 2 {
		t.Fatalf("order %+v", o)
	}
	if !sameTypes(w.types(), payments.EventPaymentIntentPaymentFailed, payments.EventPaymentIntentSucceeded) {
		t.Fatalf("events %v", w.types())
	}
}

// A processor call that fails: a charge the processor made is looked up and applied; one it
// never received is abandoned and the order freed at once.
func TestOrderKindCallFailures(t *testing.T) {
	t.Parallel()
	w := newOrderWorld(t)
	id := w.newOrder()
	w.proc.failBefore = 1
	if _, err := w.charger.Charge(context.Background(), w.card(id, cardOK)); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("never received: %v", err)
	}
	if a := w.fake.Attempt(id + ":1"); a.Status != payments.AttemptAbandoned {
		t.Fatalf("attempt %+v", a)
	}
	if o := w.orders.get(id); o.charging != "" || o.status != "open" {
		t.Fatalf("order %+v", o)
	}
	w.proc.failAfter = 1
	r, err := w.charger.Charge(context.Background(), w.card(id, cardOK))
	if err != nil || !r.Applied || r.Outcome != ports.OutcomeSucceeded {
		t.Fatalf("answer lost: %+v %v", r, err)
	}
	if len(w.paymentsOf(id)) != 1 {
		t.Fatal("payments")
	}
}

// Two charges of one order at the same time: one charges, the other waits for it and is then
// refused by the order (paid); one payment.
func TestOrderKindConcurrentCharges(t *testing.T) {
	t.Parallel()
	w := newOrderWorld(t)
	id := w.newOrder()
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, errs[i] = w.charger.Charge(context.Background(), w.card(id, cardOK))
		}(i)
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, errOrderNotOpen), errors.Is(err, payments.ErrChargeInProgress):
		default:
			t.Error(err)
		}
	}
	if ok != 1 || len(w.paymentsOf(id)) != 1 {
		t.Fatalf("%d charged, %d payments", ok, len(w.paymentsOf(id)))
	}
}
