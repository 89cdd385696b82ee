package identity

import (
	"context"

	"github.com/kassa-pay/kassa/core"
)

// CreateScopeKey issues a new key of the scope's environment; the secret is returned once.
func (s *Service) CreateScopeKey(ctx context.Context, scope core.Scope, name string) (*APIKey, string, error) {
	return s.CreateKey(ctx, scope.MerchantID, name, scope.Env)
}
