package catalog

import (
	"context"

	"github.com/kassa-pay/kassa/core"
)

// CreatePrice adds a price to an active product (POST /v1/products/{id}/prices). With
// setAsDefault the product's default_price is switched to it in the same transaction.
func (s *Service) CreatePrice(ctx context.Context, scope core.Scope, productID string, in PriceInput, setAsDefault bool) (*Price, error) {
	now, err := s.now(ctx, scope)
	if err != nil {
		return nil, err
	}
	pr, err := NewPrice(scope, productID, in, "", now)
	if err != nil {
		return nil, err
	}
	_, err = s.updateProduct(ctx, scope, productID, func(ctx context.Context, w Writer, p *Product) error {
		if err := p.AddPrice(pr); err != nil {
			return err
		}
		if setAsDefault {
			return p.SetDefaultPrice(pr.ID(), "set_as_default", now)
		}
		return nil
	})
	if err != nil {
		return nil, lookupKeyTaken(productNotFound(err, productID), "lookup_key")
	}
	return pr, nil
}
