package invoicing

import (
	"context"

	"github.com/kassa-pay/kassa/core"
)

// Update edits a draft: the fields given replace the draft's (line_items replaces every line;
// a catalog line given again as it was keeps its lock). Anything but a draft: 422
// invoice_not_draft. The body is applied to the draft as locked in the unit of work, so two
// concurrent updates apply one after the other, each to what the other left.
func (s *Service) Update(ctx context.Context, scope core.Scope, id string, in Input) (*Invoice, error) {
	now, err := s.clocks.Now(ctx, scope)
	if err != nil {
		return nil, err
	}
	return s.change(ctx, scope, id, func(ctx context.Context, _ Tx, inv *Invoice) ([]core.Event, error) {
		if inv.Status() != StatusDraft {
			return nil, ErrNotDraft
		}
		d, err := s.draftOf(ctx, scope, inv.Content(), in, false) // prices are read on the pool
		if err != nil {
			return nil, err
		}
		return nil, inv.Edit(d, now)
	})
}

// Delete removes a draft. Anything but a draft: 422 invoice_not_draft.
func (s *Service) Delete(ctx context.Context, scope core.Scope, id string) (*Invoice, error) {
	var out *Invoice
	err := s.uow.Do(ctx, func(ctx context.Context, tx Tx) error {
		out = nil
		inv, err := tx.Invoices().Lock(ctx, scope, id)
		if err != nil {
			return notFound(err)
		}
		if err := inv.CheckDeletable(); err != nil {
			return err
		}
		out = inv
		return tx.Invoices().Delete(ctx, scope, id)
	})
	return out, err
}
