package identity

import (
	"context"

	"github.com/kassa-pay/kassa/core"
)

// CreateKey issues a new secret key for the merchant. The secret is returned once; only its
// hash is kept.
func (s *Service) CreateKey(ctx context.Context, merchantID, name string, env core.Environment) (*APIKey, string, error) {
	k, secret, err := NewAPIKey(merchantID, name, env, s.clock.Now())
	if err != nil {
		return nil, "", err
	}
	if err := s.store.CreateKey(ctx, k); err != nil {
		return nil, "", notFound(err, ErrMerchantNotFound, "id", "merchant", merchantID)
	}
	return k, secret, nil
}
