package testclock

import (
	"context"
	"time"

	"github.com/kassa-pay/kassa/core"
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
		for _, p := range procs {
			if _, err := p.ProcessDue(ctx, &scope, target); err != nil {
				return time.Time{}, err
			}
		}
		return target, nil
	})
	if err != nil {
		return Clock{}, err
	}
	return s.clock(&target), nil
}
