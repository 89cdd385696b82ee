package checkout

import (
	"context"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// sweepBatch is how many due sessions one sweep transaction claims.
const sweepBatch = 100

// DuePrecision is the precision at which storage keeps expiry times (PostgreSQL timestamps:
// microseconds). The sweep hands storage its horizon at this precision, so that storage's
// projection of Session.IsDue (status open and expires_at ≤ until) and the rule agree on
// every instant.
const DuePrecision = time.Microsecond

// ProcessDue expires every session that is due by until (Session.IsDue: open and
// expires_at ≤ until, the one definition storage's claim projects), each with its
// checkout.session.expired event, in batches, one unit of work each, claimed with FOR UPDATE SKIP LOCKED so that
// several processes can sweep together. With scope nil it covers live sessions and test
// sessions of merchants whose test clock is not frozen; with a scope, only that scope (the
// test clock advance). It returns how many sessions it expired. It implements
// ports.DueProcessor. Every round either expires sessions or ends the sweep: a claimed
// session the rule does not find due is left alone, and a round that expired nothing stops.
func (svc *Service) ProcessDue(ctx context.Context, scope *core.Scope, until time.Time) (int, error) {
	until = until.Truncate(DuePrecision)
	total := 0
	for {
		claimed, expired := 0, 0
		err := svc.uow.Do(ctx, func(ctx context.Context, tx Tx) error {
			claimed, expired = 0, 0 // Do may run this again
			due, err := tx.Sessions().ClaimDue(ctx, scope, until, sweepBatch)
			if err != nil {
				return err
			}
			claimed = len(due)
			for _, s := range due {
				if !s.IsDue(until) {
					continue
				}
				if err := expire(ctx, tx, s, expiryTime(s)); err != nil {
					return err
				}
				expired++
			}
			return nil
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

// NextDue returns when the scope's next session falls due (at most until), so that a test
// clock advance interleaves session expiry in time order with other modules' work (D12).
func (svc *Service) NextDue(ctx context.Context, scope core.Scope, until time.Time) (time.Time, bool, error) {
	return svc.store.NextDue(ctx, scope, until.Truncate(DuePrecision))
}

var _ ports.DueProcessor = (*Service)(nil)

// asOf returns s as it stands at now without writing anything: a due session is shown expired
// (a copy), any other as it is.
func (s *Session) asOf(now time.Time) *Session {
	if !s.IsDue(now) {
		return s
	}
	view := RehydrateSession(s.Snapshot())
	view.status = StatusExpired
	return view
}
