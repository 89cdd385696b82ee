package payments

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// AttemptStore finds the charge attempts left pending, for the sweep. Attempts are written
// with their payable, in the payable owner's units of work, through AttemptRepository
// (Charger.Begin, Apply, Abandon).
type AttemptStore interface {
	// Stale returns up to limit attempts still pending that were recorded before
	// startedBefore on the wall clock, oldest first. With scope nil it covers every scope.
	Stale(ctx context.Context, scope *core.Scope, startedBefore time.Time, limit int) ([]*ChargeAttempt, error)
}

// OutcomeApplier applies the outcome of an attempt resolved by the sweep to its payable,
// exactly as the confirmation that started it would have (checkout for cs_ sessions). known is
// false when the processor never received the charge: the attempt is then abandoned and the
// payable freed for a new one. An attempt that is no longer pending is left alone: applied
// reports whether this call applied or abandoned it.
type OutcomeApplier interface {
	ApplyResolved(ctx context.Context, a *ChargeAttempt, res ports.ChargeResult, known bool) (applied bool, err error)
}

// AttemptGrace is how long an attempt may stay pending before the sweep resolves it: longer
// than any processor call may take (the request deadline), so that the sweep never races a
// confirmation still waiting for its answer. It is measured on the wall clock, never a test
// clock.
const AttemptGrace = 2 * time.Minute

// attemptBatch is how many stale attempts one sweep pass reads.
const attemptBatch = 100

// AttemptSweeper resolves charge attempts left pending (a ports.DueProcessor): for each one
// older than AttemptGrace it asks the processor (Charger.Resolve) with no connection held, and
// the payable's owner applies the answer exactly once; an attempt the processor never received
// is abandoned, which frees the payable for a new attempt. So a session never stays unpayable
// because an outcome failed to commit.
type AttemptSweeper struct {
	store    AttemptStore
	charger  *Charger
	appliers map[string]OutcomeApplier
	wall     core.Clock
}

var _ ports.DueProcessor = (*AttemptSweeper)(nil)

// NewAttemptSweeper returns the sweeper. appliers maps an id prefix (core.PrefixSession) to the
// owner of such payables; wall is the wall clock the grace is measured on.
func NewAttemptSweeper(store AttemptStore, charger *Charger, appliers map[string]OutcomeApplier, wall core.Clock) (*AttemptSweeper, error) {
	if store == nil || charger == nil || wall == nil || len(appliers) == 0 {
		return nil, errors.New("payments: attempt sweeper: store, charger, clock and appliers are required")
	}
	return &AttemptSweeper{store: store, charger: charger, appliers: appliers, wall: wall}, nil
}

// ProcessDue resolves the pending attempts recorded more than AttemptGrace ago (wall clock;
// until, a scope's time, does not move the grace: advancing a test clock never resolves a
// charge in flight). With a scope only that scope's. It returns how many attempts it resolved
// (applied or abandoned); the errors of single attempts are joined and returned after the
// pass, those attempts staying pending for the next one.
func (s *AttemptSweeper) ProcessDue(ctx context.Context, scope *core.Scope, _ time.Time) (int, error) {
	before := s.wall.Now().Add(-AttemptGrace)
	stale, err := s.store.Stale(ctx, scope, before, attemptBatch)
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
	applier, err := s.applierOf(a.Reference())
	if err != nil {
		return false, err
	}
	res, err := s.charger.Resolve(ctx, a, s.wall.Now())
	known := !errors.Is(err, ports.ErrChargeUnknown)
	if err != nil && known {
		return false, err
	}
	return applier.ApplyResolved(ctx, a, res, known)
}

func (s *AttemptSweeper) applierOf(reference string) (OutcomeApplier, error) {
	for prefix, a := range s.appliers {
		if strings.HasPrefix(reference, prefix) {
			return a, nil
		}
	}
	return nil, fmt.Errorf("no owner for payables like %q", reference)
}
