package payments

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// receiptSourceFunc adapts a function to ReceiptSource.
type receiptSourceFunc func(scope core.Scope, id string) (*Record, string, error)

func (f receiptSourceFunc) ReceiptRecord(_ context.Context, scope core.Scope, id string) (*Record, string, error) {
	return f(scope, id)
}

// A new payment queues its receipt only when it succeeds as it is created.
func TestMailOnCreate(t *testing.T) {
	t.Parallel()
	card := dueRecord(t, "c", StatusSucceeded, MethodCard).Payment
	if got := MailOnCreate(card); len(got) != 1 ||
		got[0] != (core.Mail{Kind: MailReceipt, Scope: dueScope, SubjectID: card.ID(), Created: dueT0}) {
		t.Fatalf("succeeded card: %+v", got)
	}
	if got := MailOnCreate(dueRecord(t, "s", StatusProcessing, MethodSEPADebit).Payment); got != nil {
		t.Fatalf("processing SEPA: %+v", got)
	}
}

// The receipt composer reads the payment when the receipt is sent and says only what a receipt
// says; a payment that is gone drops the receipt, a read that failed is retried.
func TestReceiptComposer(t *testing.T) {
	t.Parallel()
	card := dueRecord(t, "c", StatusSucceeded, MethodCard)
	sepa := dueRecord(t, "s", StatusSucceeded, MethodSEPADebit)
	sepa.SEPALast4 = "3000"
	boom := errors.New("connection reset")
	recs := map[string]*Record{card.Payment.ID(): card, sepa.Payment.ID(): sepa}
	source := receiptSourceFunc(func(scope core.Scope, id string) (*Record, string, error) {
		if id == "py_down" {
			return nil, "", boom
		}
		if r, ok := recs[id]; ok && scope == dueScope {
			return r, "Shop", nil
		}
		return nil, "", core.NotFound("payment", "id", id)
	})
	var got []Receipt
	c, err := NewReceiptComposer(source, func(r Receipt) (ports.Message, error) {
		got = append(got, r)
		return ports.Message{Scope: r.Scope, To: "x@example.com", Subject: "Receipt", Text: r.PaymentID}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	at := dueT0.Add(time.Hour)
	for _, r := range []*Record{card, sepa} {
		if _, err := c.ComposeMail(ctx, core.Mail{Kind: MailReceipt, Scope: dueScope, SubjectID: r.Payment.ID(), Created: at}); err != nil {
			t.Fatal(err)
		}
	}
	want := []Receipt{
		{Scope: dueScope, MerchantName: "Shop", PaymentID: card.Payment.ID(), Amount: 1000, Currency: "EUR",
			CardBrand: "visa", CardLast4: "0259", Date: at},
		{Scope: dueScope, MerchantName: "Shop", PaymentID: sepa.Payment.ID(), Amount: 1000, Currency: "EUR",
			IBANLast4: "3000", Date: at},
	}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("receipts\n got %+v\nwant %+v", got, want)
	}
	gone := core.Mail{Kind: MailReceipt, Scope: dueScope, SubjectID: "py_gone", Created: at}
	if _, err := c.ComposeMail(ctx, gone); !ports.IsPermanent(err) {
		t.Errorf("a payment that is gone: %v, want a permanent failure", err)
	}
	down := core.Mail{Kind: MailReceipt, Scope: dueScope, SubjectID: "py_down", Created: at}
	if _, err := c.ComposeMail(ctx, down); !errors.Is(err, boom) || ports.IsPermanent(err) {
		t.Errorf("a failed read: %v, want it retried", err)
	}
	if _, err := NewReceiptComposer(nil, nil); err == nil {
		t.Error("a composer without its source")
	}
}
