package catalog

import (
	"context"

	"github.com/kassa-pay/kassa/core"
)

// GetProduct returns a product of the scope with all its prices.
func (s *Service) GetProduct(ctx context.Context, scope core.Scope, id string) (*Product, error) {
	p, err := s.store.GetProduct(ctx, scope, id)
	if err != nil {
		return nil, productNotFound(err, id)
	}
	return p, nil
}
