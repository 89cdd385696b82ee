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

// ReceiptSource reads what a receipt is composed from. An unknown payment answers
// core.NotFound.
type ReceiptSource interface {
	// ReceiptRecord reads the payment with its processor facts (the debited SEPA account)
	// and the name of its merchant.
	ReceiptRecord(ctx context.Context, scope core.Scope, paymentID string) (rec *Record, merchantName string, err error)
}

// ReceiptComposer composes receipts (the ports.MailComposer of MailReceipt) when they are
// sent: it reads the payment and renders what the receipt says.
type ReceiptComposer struct {
	source ReceiptSource
	render ReceiptRenderer
}

var _ ports.MailComposer = (*ReceiptComposer)(nil)

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
	if m.Kind != MailReceipt {
		return ports.Message{}, ports.Permanent(fmt.Errorf("payments: %q is not a receipt", m.Kind))
	}
	rec, merchant, err := c.source.ReceiptRecord(ctx, m.Scope, m.SubjectID)
	if err != nil {
		var de *core.Error
		if errors.As(err, &de) && de.Type == core.TypeNotFound {
			return ports.Message{}, ports.Permanent(err)
		}
		return ports.Message{}, err
	}
	return c.render(ReceiptOf(rec, merchant, m.Created))
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
