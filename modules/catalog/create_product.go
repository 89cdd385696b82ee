package catalog

import (
	"context"

	"github.com/kassa-pay/kassa/core"
)

// CreateProduct creates a product (POST /v1/products). With price, the inline price is created
// too and becomes the default price, all in one transaction; its errors carry `price.` params.
func (s *Service) CreateProduct(ctx context.Context, scope core.Scope, in ProductInput, price *PriceInput) (*Product, error) {
	now, err := s.now(ctx, scope)
	if err != nil {
		return nil, err
	}
	p, err := NewProduct(scope, in, now)
	if err != nil {
		return nil, err
	}
	if price != nil {
		pr, err := NewPrice(scope, p.ID(), *price, "price", now)
		if err != nil {
			return nil, err
		}
		if !p.Active() {
			// An archived product may still be created with its price; attach directly.
			p.prices = append(p.prices, pr)
		} else if err := p.AddPrice(pr); err != nil {
			return nil, err
		}
		if err := p.SetDefaultPrice(pr.ID(), "price", now); err != nil {
			return nil, err
		}
	}
	if err := s.uow.Do(ctx, func(ctx context.Context, tx Tx) error { return tx.Catalog().CreateProduct(ctx, p) }); err != nil {
		return nil, lookupKeyTaken(err, "price.lookup_key")
	}
	return p, nil
}
