package testclock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// AdvanceLease is how long (wall clock) an advance may hold its claim on a clock. An advance
// still running after it may lose the clock to the next one, and then fails without moving
// it (the due work it did stays done).
const AdvanceLease = 5 * time.Minute

// claimRetry is the longest wait between two attempts to claim a clock another advance holds.
const claimRetry = 200 * time.Millisecond

// ErrAdvanceLost reports an advance whose claim ran out before it finished.
var ErrAdvanceLost = errors.New("testclock: the advance outlived its claim on the clock; another advance took it")

// Advance moves the scope's clock forward (POST /v1/test_helpers/clock/advance) by `seconds`
// or to the Unix time `to`; exactly one must be given. Advances of one merchant are
// serialised by a claim on its clock (a concurrent one waits for it). Every registered
// processor's due work up to the target runs, in time order, before the clock is set, so
// when Advance returns every due effect has happened with its events in the outbox. After it
// the clock stays frozen at the target. While the work runs the advance holds no database
// connection: each processor takes and returns its own. A failed advance leaves the clock
// where it was.
func (s *Service) Advance(ctx context.Context, scope core.Scope, seconds, to *int64) (Clock, error) {
	if scope.Env != core.EnvTest {
		return Clock{}, core.ErrTestModeOnly
	}
	switch {
	case seconds == nil && to == nil:
		return Clock{}, core.MissingField("seconds").Msg("Pass one of seconds or to.")
	case seconds != nil && to != nil:
		return Clock{}, core.InvalidField("to", "Pass either seconds or to, not both.")
	case seconds != nil && (*seconds < 1 || *seconds > MaxAdvance):
		return Clock{}, core.InvalidField("seconds", "seconds must be between 1 and %d (2 years).", MaxAdvance)
	}
	if p := ports.KeyPhasesFrom(ctx); p != nil {
		return s.advanceInPhases(ctx, scope, seconds, to, p)
	}

	token := core.RandomBase62(24)
	frozen, err := s.claim(ctx, scope, token)
	if err != nil {
		return Clock{}, err
	}
	target, err := s.run(ctx, scope, frozen, seconds, to)
	if err != nil {
		// The claim is released even when ctx has ended, so the next advance need not wait
		// for the lease.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		return Clock{}, errors.Join(err, s.store.ReleaseAdvance(rctx, scope, token))
	}
	ok, err := s.store.FinishAdvance(ctx, scope, token, target)
	if err != nil {
		return Clock{}, err
	}
	if !ok {
		return Clock{}, ErrAdvanceLost
	}
	return s.clock(&target), nil
}

// claim waits until the scope's clock is free and claims it, returning its frozen time.
func (s *Service) claim(ctx context.Context, scope core.Scope, token string) (*time.Time, error) {
	wait := 5 * time.Millisecond
	for {
		frozen, ok, err := s.store.ClaimAdvance(ctx, scope, token, AdvanceLease)
		if err != nil {
			return nil, err
		}
		if ok {
			return frozen, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("testclock: waiting for another advance of the clock: %w", ctx.Err())
		case <-time.After(wait):
		}
		wait = min(2*wait, claimRetry)
	}
}

// run checks the target against the claimed clock and runs the due work up to it.
func (s *Service) run(ctx context.Context, scope core.Scope, frozen *time.Time, seconds, to *int64) (time.Time, error) {
	target, err := targetOf(s.clock(frozen).Now, seconds, to)
	if err != nil {
		return time.Time{}, err
	}
	if err := s.due.RunScope(ctx, scope, target); err != nil {
		return time.Time{}, err
	}
	return target, nil
}

// targetOf is the time an advance by seconds, or to the Unix time to, moves a clock that
// reads now to.
func targetOf(now time.Time, seconds, to *int64) (time.Time, error) {
	if seconds != nil {
		return now.Add(time.Duration(*seconds) * time.Second), nil
	}
	if *to <= now.Unix() || *to-now.Unix() > MaxAdvance {
		return time.Time{}, core.InvalidField("to",
			"to must be after the clock's current time (%d) and at most %d seconds ahead.", now.Unix(), MaxAdvance)
	}
	return time.Unix(*to, 0).UTC(), nil
}
