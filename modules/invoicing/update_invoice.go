package invoicing

import (
	"context"

	"github.com/kassa-pay/kassa/core"
)

// Update edits a draft: the fields given replace the draft's (line_items replaces every line;
// a catalog line given again as it was keeps its lock). Anything but a draft: 422
// invoice_not_draft.
func (s *Service) Update(ctx context.Context, scope core.Scope, id string, in Input) (*Invoice, error) {
	cur, err := s.store.Get(ctx, scope, id)
	if err != nil {
		return nil, notFound(err)
	}
	if cur.Status() != StatusDraft {
		return nil, ErrNotDraft
	}
	d, err := s.draftOf(ctx, scope, cur.Content(), in, false)
	if err != nil {
		return nil, err
	}
	now, err := s.clocks.Now(ctx, scope)
	if err != nil {
		return nil, err
	}
	return s.change(ctx, scope, id, func(_ context.Context, _ Tx, inv *Invoice) ([]core.Event, error) {
		if !inv.Updated().Equal(cur.Updated()) {
			// Edited since it was read: the lines were checked against another version.
			return nil, ErrEditedConcurrently
		}
		return nil, inv.Edit(d, now)
	})
}

// ErrEditedConcurrently: the draft changed between the read and the write of an update.
var ErrEditedConcurrently = core.NewError(core.TypeResourceConflict, "invoice_edited_concurrently", "",
	"The draft was changed by another request; reload it and apply your change again.")

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
