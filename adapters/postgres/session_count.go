package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/checkout"
)

var _ checkout.Counter = (*SessionStore)(nil)

// CountOpen implements checkout.Counter: sessions stored open whose expires_at is after now
// (the index of the scope's due sessions answers it).
func (s *SessionStore) CountOpen(ctx context.Context, scope core.Scope, now time.Time) (int64, error) {
	var n int64
	if err := s.db.GetContext(ctx, &n, `SELECT count(*) FROM checkout_sessions
		WHERE merchant_id = $1 AND environment = $2 AND status = 'open' AND expires_at > $3`,
		scope.MerchantID, string(scope.Env), now); err != nil {
		return 0, fmt.Errorf("checkout_sessions: count: %w", err)
	}
	return n, nil
}
