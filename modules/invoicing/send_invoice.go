package invoicing

import (
	"context"

	"github.com/kassa-pay/kassa/core"
)

// MailInvoiceSent is the e-mail to the customer with the link to the hosted invoice page.
const MailInvoiceSent core.MailKind = "invoice_sent"

// Send finalises a draft (interface 3.3): the total must be at least the minimum charge, the
// next number of the merchant, environment and year of the environment's clock is taken, the
// public token minted, invoice.finalized written and the customer's e-mail queued, all in one
// unit of work. The number is taken last, so a refused send consumes none, and a send that
// rolls back gives its number back: numbers are gap-free.
func (s *Service) Send(ctx context.Context, scope core.Scope, id string) (*Invoice, error) {
	now, err := s.clocks.Now(ctx, scope)
	if err != nil {
		return nil, err
	}
	return s.change(ctx, scope, id, func(ctx context.Context, tx Tx, inv *Invoice) ([]core.Event, error) {
		if err := inv.CheckSendable(); err != nil {
			return nil, err
		}
		prefix, err := numberPrefix(ctx, tx, scope.MerchantID)
		if err != nil {
			return nil, err
		}
		n, err := tx.Invoices().NextNumber(ctx, scope, now.Year())
		if err != nil {
			return nil, err
		}
		if err := inv.Finalize(prefix, n, core.NewSecretPart(), now); err != nil {
			return nil, err
		}
		if err := tx.Mail().Enqueue(ctx, core.Mail{Kind: MailInvoiceSent, Scope: scope, SubjectID: inv.ID(), Created: now}); err != nil {
			return nil, err
		}
		return []core.Event{event(s.base, EventFinalized, inv, now)}, nil
	})
}

// Void voids an open or uncollectible invoice: invoice.voided.
func (s *Service) Void(ctx context.Context, scope core.Scope, id string) (*Invoice, error) {
	now, err := s.clocks.Now(ctx, scope)
	if err != nil {
		return nil, err
	}
	return s.change(ctx, scope, id, func(_ context.Context, _ Tx, inv *Invoice) ([]core.Event, error) {
		if err := inv.Void(now); err != nil {
			return nil, err
		}
		return []core.Event{event(s.base, EventVoided, inv, now)}, nil
	})
}

// MarkUncollectible marks an open invoice uncollectible: invoice.marked_uncollectible.
func (s *Service) MarkUncollectible(ctx context.Context, scope core.Scope, id string) (*Invoice, error) {
	now, err := s.clocks.Now(ctx, scope)
	if err != nil {
		return nil, err
	}
	return s.change(ctx, scope, id, func(_ context.Context, _ Tx, inv *Invoice) ([]core.Event, error) {
		if err := inv.MarkUncollectible(now); err != nil {
			return nil, err
		}
		return []core.Event{event(s.base, EventMarkedUncollectible, inv, now)}, nil
	})
}
