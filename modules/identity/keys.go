package identity

import (
	"context"
	"time"

	"github.com/kassa-pay/kassa/core"
)

func newKeyRecord(merchantID, name string, env core.Environment, now time.Time) (*KeyRecord, string) {
	secret, display, hash := newSecret(env)
	return &KeyRecord{
		APIKey: APIKey{
			ID: core.NewID(core.PrefixAPIKey), MerchantID: merchantID, Name: name, Display: display,
			Env: env, Created: now,
		},
		SecretHash: hash,
	}, secret
}

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

// ListKeys returns the merchant's keys, newest first (revoked ones included).
func (s *Service) ListKeys(ctx context.Context, merchantID string) ([]*APIKey, error) {
	if _, err := s.GetMerchant(ctx, merchantID); err != nil {
		return nil, err
	}
	return s.store.ListKeys(ctx, merchantID)
}

// RevokeKey revokes the key at once: the next request made with it gets 401. Revoking an
// already revoked key keeps its first revoked_at.
func (s *Service) RevokeKey(ctx context.Context, keyID string) (*APIKey, error) {
	k, err := s.store.RevokeKey(ctx, keyID, s.clock.Now())
	if err != nil {
		return nil, notFound(err, ErrAPIKeyNotFound, "id", "API key", keyID)
	}
	return k, nil
}
