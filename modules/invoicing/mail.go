package invoicing

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// SentMail is what the e-mail of a sent invoice says: the merchant, the number, the amount
// due, the due date and the link to the hosted page.
type SentMail struct {
	Scope        core.Scope
	To           string
	CustomerName string
	MerchantName string
	Number       string
	AmountDue    int64
	Currency     core.Currency
	DueDate      time.Time
	URL          string
	// PDF is the invoice as a PDF file, to be attached (empty Data: no PDF; see WithPDF).
	PDF ports.Attachment
}

// SentRenderer writes the message of a SentMail (the e-mail adapter's templates).
type SentRenderer func(SentMail) (ports.Message, error)

// SentComposer composes MailInvoiceSent from the invoice as it is when the mail is sent.
type SentComposer struct {
	svc    *Service
	render SentRenderer
	pdf    DocumentRenderer // nil: no attachment
}

// NewSentComposer needs the service (its store, merchants and base URL) and the renderer.
func NewSentComposer(svc *Service, render SentRenderer) (*SentComposer, error) {
	if svc == nil || render == nil {
		return nil, errors.New("invoicing: the sent-invoice composer needs the service and a renderer")
	}
	return &SentComposer{svc: svc, render: render}, nil
}

// ComposeMail writes the e-mail of sent invoice m.SubjectID. An invoice that no longer exists
// or was never sent is a permanent failure.
func (c *SentComposer) ComposeMail(ctx context.Context, m core.Mail) (ports.Message, error) {
	if m.Kind != MailInvoiceSent {
		return ports.Message{}, ports.Permanent(fmt.Errorf("invoicing: %q is not an invoice e-mail", m.Kind))
	}
	inv, err := c.svc.store.Get(ctx, m.Scope, m.SubjectID)
	if errors.Is(err, ErrNotFound) {
		return ports.Message{}, ports.Permanent(err)
	}
	if err != nil {
		return ports.Message{}, err
	}
	u := c.svc.HostedURL(inv)
	if u == nil || inv.Number() == nil || inv.DueDate() == nil {
		return ports.Message{}, ports.Permanent(fmt.Errorf("invoicing: %s was never sent", inv.ID()))
	}
	mer, err := c.svc.merchants.InvoiceMerchant(ctx, m.Scope.MerchantID)
	if err != nil {
		return ports.Message{}, err
	}
	pdf, err := c.attachPDF(&Hosted{Invoice: inv, Merchant: mer})
	if err != nil {
		return ports.Message{}, err
	}
	return c.render(SentMail{Scope: m.Scope, To: inv.CustomerEmail(), CustomerName: inv.CustomerName(),
		MerchantName: mer.Name, Number: *inv.Number(), AmountDue: inv.Total(), Currency: inv.Currency(),
		DueDate: *inv.DueDate(), URL: *u, PDF: pdf})
}
