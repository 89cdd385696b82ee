package identity

import (
	"context"

	"github.com/kassa-pay/kassa/core"
)

// Keys of one merchant environment, as the dashboard manages them: a key of another merchant
// or of the other environment is not there (404 api_key_not_found).

// ListScopeKeys returns the scope's keys, newest first, revoked ones included.
func (s *Service) ListScopeKeys(ctx context.Context, scope core.Scope) ([]*APIKey, error) {
	all, err := s.ListKeys(ctx, scope.MerchantID)
	if err != nil {
		return nil, err
	}
	out := make([]*APIKey, 0, len(all))
	for _, k := range all {
		if k.Env == scope.Env {
			out = append(out, k)
		}
	}
	return out, nil
}

// CreateScopeKey issues a new key of the scope's environment; the secret is returned once.
func (s *Service) CreateScopeKey(ctx context.Context, scope core.Scope, name string) (*APIKey, string, error) {
	return s.CreateKey(ctx, scope.MerchantID, name, scope.Env)
}

// RevokeScopeKey revokes a key of the scope at once; a key of another merchant or environment
// is 404 api_key_not_found and stays untouched.
func (s *Service) RevokeScopeKey(ctx context.Context, scope core.Scope, keyID string) (*APIKey, error) {
	keys, err := s.ListScopeKeys(ctx, scope)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		if k.ID == keyID {
			return s.RevokeKey(ctx, keyID)
		}
	}
	return nil, ErrAPIKeyNotFound.At("id").Msg("No such API key: '%s'.", keyID)
}
