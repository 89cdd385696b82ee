package testclock

import (
	"context"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// Advance moves the scope's clock forward (POST /v1/test_helpers/clock/advance) by `seconds`
// or to the Unix time `to`; exactly one must be given. Advances of one merchant are
// serialised. Every processor's due work up to the target runs before the clock is set, so
// when Advance returns every due effect has happened with its events in the outbox. After
// it the clock stays frozen at the target.
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

	var target time.Time
	err := s.store.Advance(ctx, scope, func(frozen *time.Time) (time.Time, error) {
		now := s.clock(frozen).Now
		if seconds != nil {
			target = now.Add(time.Duration(*seconds) * time.Second)
		} else {
			if *to <= now.Unix() || *to-now.Unix() > MaxAdvance {
				return time.Time{}, core.InvalidField("to",
					"to must be after the clock's current time (%d) and at most %d seconds ahead.", now.Unix(), MaxAdvance)
			}
			target = time.Unix(*to, 0).UTC()
		}
		s.mu.RLock()
		procs := append(s.processors[:0:0], s.processors...)
		s.mu.RUnlock()
		if err := runInTimeOrder(ctx, procs, scope, target); err != nil {
			return time.Time{}, err
		}
		return target, nil
	})
	if err != nil {
		return Clock{}, err
	}
	return s.clock(&target), nil
}

// NextDuer is a ports.DueProcessor that can tell when its next work of a scope falls due. The
// advance steps through those moments so that the effects of different processors happen in
// time order (D12) rather than processor after processor.
type NextDuer interface {
	// NextDue returns the earliest due time ≤ until of the scope's pending work; ok is false
	// when nothing is due by until.
	NextDue(ctx context.Context, scope core.Scope, until time.Time) (at time.Time, ok bool, err error)
}

// maxSteps bounds the stepping of one advance; the rest is then done in one final pass.
const maxSteps = 10_000

// runInTimeOrder runs every processor's work up to target in time order: while some NextDuer
// has work due by target, every processor runs up to the earliest such moment (processors
// registered first go first within a moment), and finally every processor runs up to target.
// Work of processors without NextDue that falls between two moments thus runs at the later
// moment, before the work due then, which keeps the order. A moment that does not move forward
// (the work is held by a concurrent sweep) ends the stepping.
func runInTimeOrder(ctx context.Context, procs []ports.DueProcessor, scope core.Scope, target time.Time) error {
	var last time.Time
	for step := 0; step < maxSteps; step++ {
		next, found := time.Time{}, false
		for _, p := range procs {
			nd, ok := p.(NextDuer)
			if !ok {
				continue
			}
			at, ok, err := nd.NextDue(ctx, scope, target)
			if err != nil {
				return err
			}
			if ok && (!found || at.Before(next)) {
				next, found = at, true
			}
		}
		if !found || (step > 0 && !next.After(last)) {
			break
		}
		for _, p := range procs {
			if _, err := p.ProcessDue(ctx, &scope, next); err != nil {
				return err
			}
		}
		last = next
	}
	for _, p := range procs {
		if _, err := p.ProcessDue(ctx, &scope, target); err != nil {
			return err
		}
	}
	return nil
}
