package checkout

import (
	"context"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// sweepBatch is how many due sessions one sweep transaction claims.
const sweepBatch = 100

// ProcessDue expires every open session whose expires_at ≤ until, each with its
// checkout.session.expired event, in batches claimed with FOR UPDATE SKIP LOCKED so that
// several processes can sweep together. With scope nil it covers live sessions and test
// sessions of merchants whose test clock is not frozen; with a scope, only that scope (the
// test clock advance). It returns how many sessions it expired. It implements
// ports.DueProcessor.
func (svc *Service) ProcessDue(ctx context.Context, scope *core.Scope, until time.Time) (int, error) {
	total := 0
	for {
		expired := 0
		claimed, err := svc.store.ClaimDue(ctx, scope, until, sweepBatch, func(s *Session) ([]core.Event, error) {
			if !s.IsDue(until) {
				return nil, nil
			}
			evs, err := svc.expiredEvent(s, expiryTime(s))
			if err == nil {
				expired++
			}
			return evs, err
		})
		if err != nil {
			return total, err
		}
		total += expired
		// A short batch means nothing due is left unlocked; a batch that changed nothing
		// cannot make progress by repeating itself.
		if claimed < sweepBatch || expired == 0 {
			return total, nil
		}
		if err := ctx.Err(); err != nil {
			return total, err
		}
	}
}

var _ ports.DueProcessor = (*Service)(nil)
