package postgres

import (
	"context"
	"fmt"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/checkout"
)

var _ checkout.Counter = (*SessionStore)(nil)

// CountSessions implements checkout.Counter.
func (s *SessionStore) CountSessions(ctx context.Context, scope core.Scope, status checkout.Status) (int64, error) {
	var n int64
	if err := s.db.GetContext(ctx, &n, `SELECT count(*) FROM checkout_sessions
		WHERE merchant_id = $1 AND environment = $2 AND status = $3`, scope.MerchantID, string(scope.Env), string(status)); err != nil {
		return 0, fmt.Errorf("checkout_sessions: count: %w", err)
	}
	return n, nil
}
