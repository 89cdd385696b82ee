package catalog

import (
	"context"

	"github.com/kassa-pay/kassa/core"
)

// SetDefaultPrice links an active price of the product as its default
// (POST /v1/products/{id}/default_price, body field `price`).
func (s *Service) SetDefaultPrice(ctx context.Context, scope core.Scope, productID, priceID string) (*Product, error) {
	if priceID == "" {
		return nil, core.MissingField("price")
	}
	now, err := s.now(ctx, scope)
	if err != nil {
		return nil, err
	}
	p, err := s.store.UpdateProduct(ctx, scope, productID, func(p *Product) error {
		return s.setDefault(ctx, p, priceID, "price", now)
	})
	return p, productNotFound(err, productID)
}
