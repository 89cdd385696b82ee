package payments

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// invoice is a Payable that is not a session, as billing's invoices will be.
type invoice struct{ id string }

func (i invoice) ID() string                  { return i.id }
func (i invoice) Scope() core.Scope           { return dueScope }
func (i invoice) Amount() int64               { return 5000 }
func (i invoice) Currency() core.Currency     { return "EUR" }
func (i invoice) CustomerName() string        { return "Ada" }
func (i invoice) CustomerEmail() string       { return "ada@example.com" }
func (i invoice) Reference() *string          { return nil }
func (i invoice) Description() *string        { return nil }
func (i invoice) Metadata() map[string]string { return nil }

// memTx is a payments.Tx in memory: what a unit of work wrote, in order.
type memTx struct {
	payments []*Record
	attempts map[string]*ChargeAttempt
	events   []core.Event
	mail     []core.Mail
}

func newMemTx() *memTx { return &memTx{attempts: map[string]*ChargeAttempt{}} }

func (m *memTx) Payments() PaymentRepository       { return memPayments{m} }
func (m *memTx) ChargeAttempts() AttemptRepository { return memAttempts{m} }
func (m *memTx) Outbox() ports.Outbox              { return memOutbox{m} }
func (m *memTx) Mail() ports.MailQueue             { return memOutbox{m} }

type memPayments struct{ m *memTx }

func (r memPayments) Insert(_ context.Context, rec *Record) error {
	r.m.payments = append(r.m.payments, rec)
	return nil
}

func (r memPayments) LockDue(_ context.Context, recs []*Record) ([]*Record, error) {
	var out []*Record
	for _, want := range recs {
		for _, rec := range r.m.payments {
			if rec.Payment.ID() == want.Payment.ID() {
				out = append(out, copyRecord(rec))
			}
		}
	}
	return out, nil
}

func (r memPayments) SaveDue(_ context.Context, rec *Record, _ *Dispute) error {
	for i, stored := range r.m.payments {
		if stored.Payment.ID() == rec.Payment.ID() {
			r.m.payments[i] = copyRecord(rec)
			return nil
		}
	}
	return errors.New("save due: unknown payment")
}

type memAttempts struct{ m *memTx }

func (r memAttempts) Insert(_ context.Context, a *ChargeAttempt) error {
	for _, b := range r.m.attempts {
		if b.reference == a.reference && b.status == AttemptPending {
			return ErrChargeInProgress
		}
	}
	r.m.attempts[a.IdempotencyKey()] = RehydrateChargeAttempt(a.Snapshot())
	return nil
}

func (r memAttempts) Lock(_ context.Context, _ core.Scope, _, key string) (*ChargeAttempt, error) {
	a, ok := r.m.attempts[key]
	if !ok {
		return nil, core.NotFound("charge_attempt", "idempotency_key", key)
	}
	return RehydrateChargeAttempt(a.Snapshot()), nil
}

func (r memAttempts) Save(_ context.Context, a *ChargeAttempt) error {
	if b, ok := r.m.attempts[a.IdempotencyKey()]; !ok || b.status != AttemptPending {
		return errors.New("save: not a pending attempt")
	}
	r.m.attempts[a.IdempotencyKey()] = RehydrateChargeAttempt(a.Snapshot())
	return nil
}

type memOutbox struct{ m *memTx }

func (o memOutbox) Add(_ context.Context, evs ...core.Event) error {
	o.m.events = append(o.m.events, evs...)
	return nil
}

func (o memOutbox) Enqueue(_ context.Context, mails ...core.Mail) error {
	o.m.mail = append(o.m.mail, mails...)
	return nil
}

func testCharger(t *testing.T) *Charger {
	t.Helper()
	c, err := NewCharger(NewFeeCalculator(DefaultFeeSchedule(), &fakeRates{}), nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The charge use case serves any payable: an invoice's payment carries invoice_id, its
// events name the invoice, and the attempt's key is "<id>:<n>". Applying twice is refused.
func TestChargerOutcomesForAnInvoice(t *testing.T) {
	t.Parallel()
	c := testCharger(t)
	ctx := context.Background()
	tx := newMemTx()
	at := dueT0
	inv := invoice{id: "in_test1"}
	a, err := c.Begin(ctx, tx, inv, 3, ports.MethodCard, at)
	if err != nil || a.IdempotencyKey() != "in_test1:3" || a.Status() != AttemptPending {
		t.Fatalf("begin: %+v %v", a, err)
	}
	if ref, n, err := ParseAttemptKey(a.IdempotencyKey()); err != nil || ref != "in_test1" || n != 3 {
		t.Fatalf("parse: %s %d %v", ref, n, err)
	}
	card := &ports.CardInfo{Brand: "visa", Last4: "0077", Country: "DE", Funding: "credit", ExpMonth: 1, ExpYear: 2030}
	out, err := c.Outcome(context.Background(), inv, a, ports.ChargeResult{Outcome: ports.OutcomeSucceeded,
		ProcessorRef: "ref", Card: card, FundsAvailableNow: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := out.Payment.Payment
	if p.InvoiceID() == nil || *p.InvoiceID() != "in_test1" || p.SessionID() != nil || p.Status() != StatusSucceeded ||
		out.Payment.AvailableAt == nil || !out.Payment.AvailableAt.Equal(at) || p.Fee().ServiceFeeEUR != 115 {
		t.Fatalf("payment %+v, record %+v", p.Snapshot(), out.Payment)
	}
	if len(out.Events) != 1 || out.Events[0].Type != EventPaymentIntentSucceeded || !out.Events[0].Created.Equal(at) ||
		out.Events[0].ObjectID != p.ID() {
		t.Fatalf("events %+v", out.Events)
	}
	if ev, ok := out.Events[0].Subject.(PaymentEvent); !ok || ev.Payment != p {
		t.Fatalf("payment_intent.succeeded subject %+v", out.Events[0].Subject)
	}
	// The payment succeeded as it was created: its receipt goes with it.
	receipt := core.Mail{Kind: MailReceipt, Scope: dueScope, SubjectID: p.ID(), Created: at}
	if m := out.Mail; len(m) != 1 || m[0] != receipt {
		t.Fatalf("mail %+v", m)
	}
	// A second pending attempt of the payable is refused while the first is in flight.
	if _, err := c.Begin(ctx, tx, inv, 4, ports.MethodCard, at); !errors.Is(err, ErrChargeInProgress) {
		t.Fatalf("second attempt in flight: %v", err)
	}
	// Apply writes the payment, the attempt, the event and the receipt in the caller's unit of
	// work; the attempt is then no longer pending, and a second application writes nothing.
	locked, pending, err := c.LockAttempt(ctx, tx, dueScope, inv.ID(), a.IdempotencyKey())
	if err != nil || !pending {
		t.Fatalf("lock: %v %v", pending, err)
	}
	if err := c.Apply(ctx, tx, locked, out); err != nil || locked.Status() != AttemptApplied || locked.Outcome() != ports.OutcomeSucceeded {
		t.Fatalf("apply: %v %+v", err, locked.Snapshot())
	}
	if len(tx.payments) != 1 || tx.payments[0] != out.Payment || len(tx.events) != 1 || len(tx.mail) != 1 || tx.mail[0] != receipt ||
		tx.attempts[a.IdempotencyKey()].Status() != AttemptApplied {
		t.Fatalf("written: %+v", tx)
	}
	if err := c.Apply(ctx, tx, locked, out); !errors.Is(err, ErrAttemptNotPending) || len(tx.payments) != 1 {
		t.Fatalf("second apply: %v", err)
	}
	if _, pending, err := c.LockAttempt(ctx, tx, dueScope, inv.ID(), a.IdempotencyKey()); err != nil || pending {
		t.Fatalf("lock after apply: %v %v", pending, err)
	}

	b, _ := c.Begin(ctx, tx, inv, 4, ports.MethodCard, at)
	out, err = c.Outcome(context.Background(), inv, b, ports.ChargeResult{Outcome: ports.OutcomeFailed, ProcessorRef: "r2",
		Card: card, DeclineCode: ports.DeclineIncorrectCVC}, nil)
	if err != nil || out.Decline == nil || out.Decline.Code != ports.DeclineIncorrectCVC || out.Decline.Param != "card.cvc" || out.Payment != nil {
		t.Fatalf("decline %+v %v", out, err)
	}
	want := ChargeDeclined{InvoiceID: "in_test1", Amount: 5000, Currency: "EUR", Method: ports.MethodCard,
		FailureCode: FailureCardDeclined, DeclineCode: ports.DeclineIncorrectCVC, Card: card, At: at}
	if got := out.Events[0].Subject; got != want || out.Events[0].ObjectID != "" {
		t.Fatalf("payment_failed subject %+v, want %+v", got, want)
	}
	// A card payment with its funds two days later; SEPA processing with none yet.
	if err := c.Abandon(ctx, tx, b); err != nil || tx.attempts[b.IdempotencyKey()].Status() != AttemptAbandoned {
		t.Fatalf("abandon: %v", err)
	}
	d, _ := c.Begin(ctx, tx, inv, 5, ports.MethodSEPADebit, at)
	settles := at.Add(time.Hour)
	out, err = c.Outcome(context.Background(), inv, d, ports.ChargeResult{Outcome: ports.OutcomeProcessing, ProcessorRef: "r3",
		SEPA: &ports.SEPAInfo{Country: "DE", Last4: "3000"}, SettlesAt: &settles}, nil)
	if err != nil || out.Payment.AvailableAt != nil || out.Payment.SettlesAt == nil || len(out.Events) != 0 || out.Mail != nil {
		t.Fatalf("processing %+v %v", out, err) // its receipt goes when it settles
	}
	// An attempt of another payable is refused.
	if _, err := c.Outcome(context.Background(), invoice{id: "in_other"}, d, ports.ChargeResult{}, nil); err == nil {
		t.Fatal("outcome for another payable")
	}
	if _, err := c.Call(context.Background(), a, Source{}); err == nil {
		t.Fatal("a charge without a processor for the environment")
	}
}
