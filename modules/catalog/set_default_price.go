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
	p, err := s.updateProduct(ctx, scope, productID, func(ctx context.Context, w Writer, p *Product) error {
		return setDefault(ctx, w, p, priceID, "price", now)
	})
	return p, productNotFound(err, productID)
}
