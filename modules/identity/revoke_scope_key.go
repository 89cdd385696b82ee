package identity

import (
	"context"
	"errors"

	"github.com/kassa-pay/kassa/core"
)

// RevokeScopeKey revokes a key of the scope at once; a key of another merchant or environment
// is 404 api_key_not_found and stays untouched.
func (s *Service) RevokeScopeKey(ctx context.Context, scope core.Scope, keyID string) (*APIKey, error) {
	k, err := s.store.RevokeScopeKey(ctx, scope, keyID, s.clock.Now())
	if errors.Is(err, ErrNotFound) {
		return nil, ErrAPIKeyNotFound.At("id").Msg("No such API key: '%s'.", keyID)
	}
	return k, err
}
