package catalog

import (
	"context"

	"github.com/kassa-pay/kassa/core"
)

// ArchiveProduct sets the product and all its prices inactive in one transaction
// (DELETE /v1/products/{id}). Archiving twice is not an error.
func (s *Service) ArchiveProduct(ctx context.Context, scope core.Scope, id string) (*Product, error) {
	now, err := s.now(ctx, scope)
	if err != nil {
		return nil, err
	}
	p, err := s.updateProduct(ctx, scope, id, func(ctx context.Context, w Writer, p *Product) error {
		p.Archive(now)
		return nil
	})
	return p, productNotFound(err, id)
}
