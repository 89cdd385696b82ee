package identity

import (
	"context"

	"github.com/kassa-pay/kassa/core"
)

// CreateKey issues a new secret key for the merchant. The secret is returned once; only its
// hash is kept.
func (s *Service) CreateKey(ctx context.Context, merchantID, name string, env core.Environment) (*APIKey, string, error) {
	name, err := checkKeyInput(name, env)
	if err != nil {
		return nil, "", err
	}
	rec, secret := newKeyRecord(merchantID, name, env, s.clock.Now())
	if err := s.store.CreateKey(ctx, rec); err != nil {
		return nil, "", notFound(err, ErrMerchantNotFound, "id", "merchant", merchantID)
	}
	k := rec.APIKey
	return &k, secret, nil
}
