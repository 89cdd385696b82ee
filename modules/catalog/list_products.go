package catalog

import (
	"context"

	"github.com/kassa-pay/kassa/core"
)

// ListProducts pages the scope's products, newest first, each with its prices; active filters
// on the active flag when set.
func (s *Service) ListProducts(ctx context.Context, scope core.Scope, q core.ListQuery, active *bool) (core.Page[*Product], error) {
	q, err := q.Normalize()
	if err != nil {
		return core.Page[*Product]{}, err
	}
	page, err := s.store.ListProducts(ctx, scope, q, active)
	if err != nil {
		return core.Page[*Product]{}, unknownCursor(err, q)
	}
	return page, nil
}
