package catalog

import (
	"context"
	"errors"

	"github.com/kassa-pay/kassa/core"
)

// FindPrice returns a price of any product of the scope (checkout and billing look prices up
// by id alone); price_not_found when unknown.
func (s *Service) FindPrice(ctx context.Context, scope core.Scope, priceID string) (*Price, error) {
	pr, err := s.store.GetPrice(ctx, scope, priceID)
	if errors.Is(err, ErrNotFound) {
		return nil, core.NotFound("price", "", priceID)
	}
	return pr, err
}
