package payments

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// RefundReceipt is what the payer's refund e-mail says.
type RefundReceipt struct {
	Scope         core.Scope
	To            string
	MerchantName  string
	RefundID      string
	Amount        int64
	Currency      core.Currency
	PaymentAmount int64
	Refunded      int64
	Reference     string
	Date          time.Time // when the refund was applied (the scope's time)
}

// RefundReceiptRenderer turns a refund receipt into a message (the e-mail adapter's template).
type RefundReceiptRenderer func(r RefundReceipt) (ports.Message, error)

// RefundReceiptComposer composes refund e-mails (the ports.MailComposer of MailRefundReceipt)
// when they are sent, from the refund and its payment as they are then.
type RefundReceiptComposer struct {
	refunds RefundStore
	source  ReceiptSource
	render  RefundReceiptRenderer
}

var _ ports.MailComposer = (*RefundReceiptComposer)(nil)

// NewRefundReceiptComposer returns the composer; every argument is required.
func NewRefundReceiptComposer(refunds RefundStore, source ReceiptSource, render RefundReceiptRenderer) (*RefundReceiptComposer, error) {
	if refunds == nil || source == nil || render == nil {
		return nil, errors.New("payments: refund receipt composer: every argument is required")
	}
	return &RefundReceiptComposer{refunds: refunds, source: source, render: render}, nil
}

// ComposeMail writes the refund e-mail m is about. A refund or payment that no longer exists,
// or a refund that did not succeed, drops the mail.
func (c *RefundReceiptComposer) ComposeMail(ctx context.Context, m core.Mail) (ports.Message, error) {
	if m.Kind != MailRefundReceipt {
		return ports.Message{}, ports.Permanent(fmt.Errorf("payments: %q is not a refund receipt", m.Kind))
	}
	r, err := c.refunds.Get(ctx, m.Scope, m.SubjectID)
	if errors.Is(err, ErrRefundUnknown) {
		return ports.Message{}, ports.Permanent(err)
	}
	if err != nil {
		return ports.Message{}, err
	}
	if r.Status() != RefundSucceeded {
		return ports.Message{}, ports.Permanent(fmt.Errorf("payments: refund %s is %s", r.ID(), r.Status()))
	}
	key := ReceiptKey{Scope: m.Scope, PaymentID: r.PaymentID()}
	facts, err := c.source.ReceiptRecords(ctx, []ReceiptKey{key})
	if err != nil {
		return ports.Message{}, err
	}
	f, ok := facts[key]
	if !ok {
		return ports.Message{}, ports.Permanent(core.NotFound("payment", "id", r.PaymentID()))
	}
	p := f.Record.Payment
	out := RefundReceipt{Scope: m.Scope, To: p.Customer().Email, MerchantName: f.MerchantName, RefundID: r.ID(),
		Amount: r.Amount(), Currency: r.Currency(), PaymentAmount: p.Amount(), Refunded: p.AmountRefunded(), Date: m.Created}
	if ref := p.Reference(); ref != nil {
		out.Reference = *ref
	}
	return c.render(out)
}
