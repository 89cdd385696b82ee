package catalog

import (
	"context"
	"errors"

	"github.com/kassa-pay/kassa/core"
)

// GetPrice returns a price of the product: product_not_found when the product is unknown,
// price_not_found (param `price_id`, the path parameter) when the price is unknown or belongs to
// another product.
func (s *Service) GetPrice(ctx context.Context, scope core.Scope, productID, priceID string) (*Price, error) {
	pr, err := s.store.GetPrice(ctx, scope, priceID)
	if err == nil && pr.ProductID() == productID {
		return pr, nil
	}
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	if _, err := s.store.GetProduct(ctx, scope, productID); err != nil {
		return nil, productNotFound(err, productID)
	}
	return nil, core.NotFound("price", "price_id", priceID)
}
