package invoicing

import (
	"context"

	"github.com/kassa-pay/kassa/core"
)

// Create starts a draft invoice (400 naming the field for any broken rule).
func (s *Service) Create(ctx context.Context, scope core.Scope, in Input) (*Invoice, error) {
	d, err := s.draftOf(ctx, scope, Draft{}, in, true)
	if err != nil {
		return nil, err
	}
	now, err := s.clocks.Now(ctx, scope)
	if err != nil {
		return nil, err
	}
	inv := NewDraft(scope, d, now)
	err = s.uow.Do(ctx, func(ctx context.Context, tx Tx) error {
		return tx.Invoices().Insert(ctx, inv)
	})
	if err != nil {
		return nil, err
	}
	return inv, nil
}
