package catalog

import (
	"context"

	"github.com/kassa-pay/kassa/core"
)

// ListPrices pages a product's prices, newest first; product_not_found when the product is
// unknown, and a cursor must be a price of this product.
func (s *Service) ListPrices(ctx context.Context, scope core.Scope, productID string, q core.ListQuery, active *bool) (core.Page[*Price], error) {
	q, err := q.Normalize()
	if err != nil {
		return core.Page[*Price]{}, err
	}
	page, err := s.store.ListPrices(ctx, scope, productID, q, active)
	if err != nil {
		return core.Page[*Price]{}, unknownCursor(productNotFound(err, productID), q)
	}
	return page, nil
}
