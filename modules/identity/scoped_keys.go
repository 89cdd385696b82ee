package identity

import (
	"context"
	"errors"

	"github.com/kassa-pay/kassa/core"
)

// Keys of one merchant environment, as the dashboard manages them: a key of another merchant
// or of the other environment is not there (404 api_key_not_found).

// ListScopeKeys returns the scope's keys, newest first, revoked ones included. The caller's
// session vouches for the merchant, so nothing else is read.
func (s *Service) ListScopeKeys(ctx context.Context, scope core.Scope) ([]*APIKey, error) {
	return s.store.ListScopeKeys(ctx, scope)
}

// CreateScopeKey issues a new key of the scope's environment; the secret is returned once.
func (s *Service) CreateScopeKey(ctx context.Context, scope core.Scope, name string) (*APIKey, string, error) {
	return s.CreateKey(ctx, scope.MerchantID, name, scope.Env)
}

// RevokeScopeKey revokes a key of the scope at once; a key of another merchant or environment
// is 404 api_key_not_found and stays untouched.
func (s *Service) RevokeScopeKey(ctx context.Context, scope core.Scope, keyID string) (*APIKey, error) {
	k, err := s.store.RevokeScopeKey(ctx, scope, keyID, s.clock.Now())
	if errors.Is(err, ErrNotFound) {
		return nil, ErrAPIKeyNotFound.At("id").Msg("No such API key: '%s'.", keyID)
	}
	return k, err
}
