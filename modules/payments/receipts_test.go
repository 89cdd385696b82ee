package payments

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// receiptSourceFunc adapts a function reading one payment to ReceiptSource: a payment it
// answers core.NotFound for is absent, any other error fails the read.
type receiptSourceFunc func(scope core.Scope, id string) (*Record, string, error)

func (f receiptSourceFunc) ReceiptRecords(_ context.Context, keys []ReceiptKey) (map[ReceiptKey]ReceiptFacts, error) {
	out := map[ReceiptKey]ReceiptFacts{}
	for _, k := range keys {
		r, name, err := f(k.Scope, k.PaymentID)
		var de *core.Error
		if errors.As(err, &de) && de.Type == core.TypeNotFound {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[k] = ReceiptFacts{Record: r, MerchantName: name}
	}
	return out, nil
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

// A batch of receipts is composed with one read of their payments: each mail gets its own
// message or failure, in order; a read that failed fails the batch, to be retried.
func TestReceiptComposerBatch(t *testing.T) {
	t.Parallel()
	card := dueRecord(t, "c", StatusSucceeded, MethodCard)
	sepa := dueRecord(t, "s", StatusSucceeded, MethodSEPADebit)
	sepa.SEPALast4 = "3000"
	recs := map[string]*Record{card.Payment.ID(): card, sepa.Payment.ID(): sepa}
	reads := 0
	var fail error
	source := receiptSourceFunc(func(scope core.Scope, id string) (*Record, string, error) {
		if fail != nil {
			return nil, "", fail
		}
		if r, ok := recs[id]; ok && scope == dueScope {
			return r, "Shop", nil
		}
		return nil, "", core.NotFound("payment", "id", id)
	})
	counted := countingSource{source, &reads}
	c, err := NewReceiptComposer(counted, func(r Receipt) (ports.Message, error) {
		return ports.Message{Scope: r.Scope, To: "x@example.com", Subject: "Receipt", Text: r.PaymentID + " " + r.IBANLast4}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	at := dueT0.Add(time.Hour)
	mails := []core.Mail{
		{Kind: MailReceipt, Scope: dueScope, SubjectID: card.Payment.ID(), Created: at},
		{Kind: "newsletter", Scope: dueScope, SubjectID: card.Payment.ID(), Created: at},
		{Kind: MailReceipt, Scope: dueScope, SubjectID: "py_gone", Created: at},
		{Kind: MailReceipt, Scope: dueScope, SubjectID: sepa.Payment.ID(), Created: at},
		{Kind: MailReceipt, Scope: core.Scope{MerchantID: "mer_other", Env: core.EnvTest}, SubjectID: sepa.Payment.ID(), Created: at},
	}
	msgs, errs := c.ComposeMails(context.Background(), mails)
	if reads != 1 || len(msgs) != len(mails) || len(errs) != len(mails) {
		t.Fatalf("%d reads, %d messages, %d errors", reads, len(msgs), len(errs))
	}
	if errs[0] != nil || msgs[0].Text != card.Payment.ID()+" " {
		t.Errorf("card: %+v %v", msgs[0], errs[0])
	}
	if errs[3] != nil || msgs[3].Text != sepa.Payment.ID()+" 3000" {
		t.Errorf("sepa: %+v %v", msgs[3], errs[3])
	}
	for _, i := range []int{1, 2, 4} {
		if !ports.IsPermanent(errs[i]) {
			t.Errorf("mail %d: %v, want a permanent failure", i, errs[i])
		}
	}
	fail = errors.New("connection reset")
	_, errs = c.ComposeMails(context.Background(), mails)
	for _, i := range []int{0, 2, 3, 4} {
		if !errors.Is(errs[i], fail) || ports.IsPermanent(errs[i]) {
			t.Errorf("failed read, mail %d: %v, want it retried", i, errs[i])
		}
	}
	if !ports.IsPermanent(errs[1]) {
		t.Errorf("not a receipt: %v", errs[1])
	}
}

// countingSource counts the reads of a ReceiptSource.
type countingSource struct {
	ReceiptSource
	reads *int
}

func (s countingSource) ReceiptRecords(ctx context.Context, keys []ReceiptKey) (map[ReceiptKey]ReceiptFacts, error) {
	*s.reads++
	return s.ReceiptSource.ReceiptRecords(ctx, keys)
}
