package payments

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// MailReceipt is the kind of mail of a payment receipt; its subject is the payment.
const MailReceipt core.MailKind = "receipt"

// receiptOnSuccess is the mail a payment queues when it succeeds: its receipt, dated at (the
// scope's time when it succeeded). A payment that did not succeed queues nothing.
func receiptOnSuccess(p *Payment, at time.Time) []core.Mail {
	if p.Status() != StatusSucceeded {
		return nil
	}
	return []core.Mail{{Kind: MailReceipt, Scope: p.Scope(), SubjectID: p.ID(), Created: at}}
}

// MailOnCreate is the mail queued with a new payment, in the transaction that inserts it: the
// receipt of a payment that succeeds as it is created (a card), dated at its creation. A
// processing payment (SEPA) queues its receipt when it settles (Sweeper.ProcessDue).
func MailOnCreate(p *Payment) []core.Mail { return receiptOnSuccess(p, p.Created()) }

// Receipt is what a payment receipt e-mail says (interface 3.2, issue 3: amount, merchant,
// reference, last four digits of the card or IBAN). Only those facts ever reach it.
type Receipt struct {
	Scope        core.Scope
	To           string // the payment's customer e-mail
	MerchantName string
	PaymentID    string
	Amount       int64
	Currency     core.Currency
	Reference    string
	CardBrand    string // cards: brand and last four
	CardLast4    string
	IBANLast4    string // SEPA Direct Debit: the account's last four
	// Date is when the payment succeeded, in the scope's time.
	Date time.Time
}

// ReceiptRenderer renders a receipt as a message (the e-mail adapter's templates). An error
// that wraps ports.ErrPermanent drops the receipt.
type ReceiptRenderer func(Receipt) (ports.Message, error)

// ReceiptKey names the payment a receipt is about.
type ReceiptKey struct {
	Scope     core.Scope
	PaymentID string
}

// ReceiptFacts is what a receipt is composed from: the payment with its processor facts (the
// debited SEPA account) and the name of its merchant.
type ReceiptFacts struct {
	Record       *Record
	MerchantName string
}

// ReceiptSource reads what receipts are composed from.
type ReceiptSource interface {
	// ReceiptRecords reads the payments of keys, of any scopes, with one read. A payment that
	// does not exist is absent from the answer.
	ReceiptRecords(ctx context.Context, keys []ReceiptKey) (map[ReceiptKey]ReceiptFacts, error)
}

// ReceiptComposer composes receipts (the ports.MailComposer of MailReceipt) when they are
// sent: it reads the payments and renders what each receipt says.
type ReceiptComposer struct {
	source ReceiptSource
	render ReceiptRenderer
}

var _ ports.BatchMailComposer = (*ReceiptComposer)(nil)

// NewReceiptComposer returns the receipt composer; both arguments are required.
func NewReceiptComposer(source ReceiptSource, render ReceiptRenderer) (*ReceiptComposer, error) {
	if source == nil || render == nil {
		return nil, errors.New("payments: receipt composer: source and renderer are required")
	}
	return &ReceiptComposer{source: source, render: render}, nil
}

// ComposeMail writes the receipt of the payment m is about. A payment that no longer exists
// drops the receipt.
func (c *ReceiptComposer) ComposeMail(ctx context.Context, m core.Mail) (ports.Message, error) {
	msgs, errs := c.ComposeMails(ctx, []core.Mail{m})
	return msgs[0], errs[0]
}

// ComposeMails writes the receipts of ms, reading their payments with one read: a mail that
// is not a receipt, or whose payment no longer exists, is dropped (a permanent failure); a
// read that failed fails every mail of the batch, to be retried.
func (c *ReceiptComposer) ComposeMails(ctx context.Context, ms []core.Mail) ([]ports.Message, []error) {
	msgs, errs := make([]ports.Message, len(ms)), make([]error, len(ms))
	keys := make([]ReceiptKey, 0, len(ms))
	for i, m := range ms {
		if m.Kind != MailReceipt {
			errs[i] = ports.Permanent(fmt.Errorf("payments: %q is not a receipt", m.Kind))
			continue
		}
		keys = append(keys, ReceiptKey{Scope: m.Scope, PaymentID: m.SubjectID})
	}
	if len(keys) == 0 {
		return msgs, errs
	}
	facts, err := c.source.ReceiptRecords(ctx, keys)
	for i, m := range ms {
		if errs[i] != nil {
			continue
		}
		if err != nil {
			errs[i] = err
			continue
		}
		f, ok := facts[ReceiptKey{Scope: m.Scope, PaymentID: m.SubjectID}]
		if !ok {
			errs[i] = ports.Permanent(core.NotFound("payment", "id", m.SubjectID))
			continue
		}
		msgs[i], errs[i] = c.render(ReceiptOf(f.Record, f.MerchantName, m.Created))
	}
	return msgs, errs
}

// ReceiptOf is the receipt of a stored payment of the merchant named merchantName, dated at.
func ReceiptOf(rec *Record, merchantName string, at time.Time) Receipt {
	p := rec.Payment
	r := Receipt{
		Scope: p.Scope(), To: p.Customer().Email, MerchantName: merchantName, PaymentID: p.ID(),
		Amount: p.Amount(), Currency: p.Currency(), Date: at.UTC(),
	}
	if ref := p.Reference(); ref != nil {
		r.Reference = *ref
	}
	if c := p.Card(); c != nil {
		r.CardBrand, r.CardLast4 = c.Brand, c.Last4
	}
	if p.PaymentMethod() == MethodSEPADebit {
		r.IBANLast4 = rec.SEPALast4
	}
	return r
}
