package identity

import (
	"context"

	"github.com/kassa-pay/kassa/core"
)

// Keys of one merchant environment, as the dashboard manages them: a key of another merchant
// or of the other environment is not there (404 api_key_not_found).

// ListScopeKeys returns the scope's keys, newest first, revoked ones included. The caller's
// session vouches for the merchant, so nothing else is read.
func (s *Service) ListScopeKeys(ctx context.Context, scope core.Scope) ([]*APIKey, error) {
	return s.store.ListScopeKeys(ctx, scope)
}
