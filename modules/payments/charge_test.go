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
	at := dueT0
	inv := invoice{id: "in_test1"}
	a, err := c.Begin(inv, 3, ports.MethodCard, at)
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
	if m := out.Payment.Mail; len(m) != 1 || m[0] != (core.Mail{Kind: MailReceipt, Scope: dueScope, SubjectID: p.ID(), Created: at}) {
		t.Fatalf("mail %+v", m)
	}
	if err := Apply(a, out); err != nil || a.Status() != AttemptApplied || a.Outcome() != ports.OutcomeSucceeded {
		t.Fatalf("apply: %v %+v", err, a.Snapshot())
	}
	if err := Apply(a, out); !errors.Is(err, ErrAttemptNotPending) {
		t.Fatalf("second apply: %v", err)
	}

	b, _ := c.Begin(inv, 4, ports.MethodCard, at)
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
	d, _ := c.Begin(inv, 5, ports.MethodSEPADebit, at)
	settles := at.Add(time.Hour)
	out, err = c.Outcome(context.Background(), inv, d, ports.ChargeResult{Outcome: ports.OutcomeProcessing, ProcessorRef: "r3",
		SEPA: &ports.SEPAInfo{Country: "DE", Last4: "3000"}, SettlesAt: &settles}, nil)
	if err != nil || out.Payment.AvailableAt != nil || out.Payment.SettlesAt == nil || len(out.Events) != 0 || out.Payment.Mail != nil {
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
