package payments

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// attemptBatch is how many stale attempts one sweep pass reads.
const attemptBatch = 100

// AttemptSweeper resolves charge attempts left pending (a ports.DueProcessor): for each one
// older than AttemptGrace it asks the processor with no connection held, and applies the
// answer through the same protocol step as Charge, in a unit of work of the payable's owner,
// exactly once; an attempt the processor never received is abandoned, which frees the payable
// for a new attempt. So a payable never stays unpayable because an outcome failed to commit or
// the process died during the call.
type AttemptSweeper struct {
	charger *Charger
}

var _ ports.DueProcessor = (*AttemptSweeper)(nil)

// NewAttemptSweeper returns the sweeper over the charger's attempt store, kinds and wall clock.
func NewAttemptSweeper(charger *Charger) (*AttemptSweeper, error) {
	if charger == nil {
		return nil, errors.New("payments: attempt sweeper: the charger is required")
	}
	return &AttemptSweeper{charger: charger}, nil
}

// ProcessDue resolves the pending attempts recorded more than AttemptGrace ago (wall clock;
// until, a scope's time, does not move the grace: advancing a test clock never resolves a
// charge in flight). With a scope only that scope's. It returns how many attempts it resolved
// (applied or abandoned); the errors of single attempts are joined and returned after the
// pass, those attempts staying pending for the next one.
func (s *AttemptSweeper) ProcessDue(ctx context.Context, scope *core.Scope, _ time.Time) (int, error) {
	c := s.charger
	before := c.wall.Now().Add(-AttemptGrace)
	stale, err := c.attempts.Stale(ctx, scope, before, attemptBatch)
	if err != nil {
		return 0, err
	}
	n := 0
	var failures []error
	for _, a := range stale {
		done, err := s.resolve(ctx, a)
		if err != nil {
			failures = append(failures, fmt.Errorf("payments: resolve attempt %s: %w", a.IdempotencyKey(), err))
			continue
		}
		if done {
			n++
		}
		if err := ctx.Err(); err != nil {
			return n, err
		}
	}
	return n, errors.Join(failures...)
}

func (s *AttemptSweeper) resolve(ctx context.Context, a *ChargeAttempt) (bool, error) {
	k, err := s.charger.kinds.of(a.payableKind)
	if err != nil {
		return false, err
	}
	return s.charger.resolve(ctx, k, a)
}
