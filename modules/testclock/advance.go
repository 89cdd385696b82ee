package testclock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// run is an advance this process runs.
type run struct {
	to   time.Time
	done chan struct{} // closed when it ended
	err  error         // why it ended without finishing (set before done closes)
}

// Advance moves the scope's clock forward (POST /v1/test_helpers/clock/advance) by `seconds`
// or to the Unix time `to`; exactly one must be given.
//
// The advance is recorded first (the clock's advance in progress), then every registered
// processor's due work up to the target runs in the background of this process, in bounded
// batches in time order (scheduler.Registry.RunScope: each batch its own unit of work), and
// only then does the clock move to the target. Advance waits for that at most the service's
// Wait: it returns the clock ready at the target when everything due has happened, else the
// clock still advancing (StatusAdvancing), and the work goes on. While a clock advances, an
// advance to another time answers ErrClockAdvancing at once; one to the same time joins it
// (waits as the first did) and, when the process running it died or gave it up, takes it over
// and runs it to its end. So an advance cut by a crash or a shutdown is resumed by the next
// one to the same time, or by the resumer of any process (ResumePending). A failure of the
// due work is returned and leaves the advance recorded, not running, for the next one.
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
	for range 5 {
		st, err := s.store.State(ctx, scope)
		if err != nil {
			return Clock{}, err
		}
		target, err := s.target(st, seconds, to)
		if err != nil {
			return Clock{}, err
		}
		if a := st.Advancing; a != nil && !a.To.Equal(target) {
			return Clock{}, ErrClockAdvancing
		}
		ok, err := s.start(ctx, scope, st, target)
		if err != nil {
			return Clock{}, err
		}
		if ok {
			return s.await(ctx, scope, target)
		}
		// The clock changed between the read and the record: read it again.
	}
	return Clock{}, ErrClockAdvancing
}

// target checks the request against the clock as read and returns the time to advance to.
func (s *Service) target(st State, seconds, to *int64) (time.Time, error) {
	return targetOf(s.clock(State{Frozen: st.Frozen}).Now, seconds, to)
}

// targetOf is the time an advance by seconds, or to the Unix time to, moves a clock that
// reads now to. The clock shows whole seconds: an advance from real time starts at its second.
func targetOf(now time.Time, seconds, to *int64) (time.Time, error) {
	now = now.Truncate(time.Second)
	if seconds != nil {
		return now.Add(time.Duration(*seconds) * time.Second), nil
	}
	if *to <= now.Unix() || *to-now.Unix() > MaxAdvance {
		return time.Time{}, core.InvalidField("to",
			"to must be after the clock's current time (%d) and at most %d seconds ahead.", now.Unix(), MaxAdvance)
	}
	return time.Unix(*to, 0).UTC(), nil
}

// start makes sure the advance of scope to target runs: it does when this process runs it or
// another live one does; otherwise it is recorded (or taken over) and run here. false: the
// clock changed since st was read.
func (s *Service) start(ctx context.Context, scope core.Scope, st State, target time.Time) (bool, error) {
	s.mu.Lock()
	if r := s.runs[scope]; r != nil {
		s.mu.Unlock()
		return r.to.Equal(target), nil
	}
	if a := st.Advancing; a != nil && a.Running && !a.Mine {
		s.mu.Unlock()
		return true, nil // another process runs it: wait for it
	}
	if s.bg.Err() != nil {
		s.mu.Unlock()
		return false, errors.New("testclock: shutting down")
	}
	r := &run{to: target, done: make(chan struct{})}
	s.runs[scope] = r // reserved: no second run of this clock in this process
	s.wg.Add(1)
	s.mu.Unlock()

	ok, err := s.store.Begin(ctx, scope, st.Frozen, target)
	if err != nil || !ok {
		s.end(scope, r, err)
		return false, err
	}
	go s.run(scope, r)
	return true, nil
}

// run runs the due work of the advance r and moves the clock, on the service's background
// context: the request that started it may be gone long before.
func (s *Service) run(scope core.Scope, r *run) {
	err := s.due.RunScope(s.bg, scope, r.to)
	if err == nil {
		_, err = s.store.Finish(s.bg, scope, r.to) // false: another process finished it
	}
	if err != nil {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(s.bg), 10*time.Second)
		if rerr := s.store.Release(rctx, scope, r.to); rerr != nil {
			err = errors.Join(err, rerr)
		}
		cancel()
		if s.bg.Err() != nil {
			s.log.Warn("testclock: advance paused by the shutdown; the next process, or the next advance to the same time, resumes it",
				"merchant", scope.MerchantID, "to", r.to.Unix())
		} else {
			s.log.Error("testclock: advance failed; the next advance to the same time, or the resumer, takes it over",
				"merchant", scope.MerchantID, "to", r.to.Unix(), "error", err.Error())
		}
		err = fmt.Errorf("testclock: advance to %d: %w", r.to.Unix(), err)
	}
	s.end(scope, r, err)
}

// end forgets the run r and wakes its waiters.
func (s *Service) end(scope core.Scope, r *run, err error) {
	s.mu.Lock()
	if s.runs[scope] == r {
		delete(s.runs, scope)
	}
	s.mu.Unlock()
	r.err = err
	close(r.done)
	s.wg.Done()
}

// pollEvery is how often a wait for an advance another process runs reads the clock.
const pollEvery = 100 * time.Millisecond

// await waits, at most the service's Wait, for the advance of scope to target to finish, and
// returns the clock: ready, or still advancing. An advance run here that fails returns its
// error. One that a process gave up (it died, or failed) is taken over.
func (s *Service) await(ctx context.Context, scope core.Scope, target time.Time) (Clock, error) {
	deadline := time.NewTimer(s.wait)
	defer deadline.Stop()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		s.mu.Lock()
		r := s.runs[scope]
		s.mu.Unlock()
		var done <-chan struct{}
		var poll <-chan time.Time
		if r != nil && r.to.Equal(target) {
			done = r.done
		} else {
			poll = tick.C
		}
		timeout := false
		select {
		case <-ctx.Done():
			return Clock{}, ctx.Err()
		case <-deadline.C:
			timeout = true
		case <-done:
			if r.err != nil {
				return Clock{}, r.err
			}
		case <-poll:
		}
		st, err := s.store.State(ctx, scope)
		if err != nil {
			return Clock{}, err
		}
		a := st.Advancing
		if a == nil || !a.To.Equal(target) {
			if st.Frozen != nil && !st.Frozen.Before(target) {
				// Done; another advance may have begun since: this one's answer is the clock
				// as it finished, ready at its target.
				return s.clock(State{Frozen: st.Frozen}), nil
			}
			return s.clock(st), nil
		}
		if timeout {
			return s.clock(st), nil // not yet: it goes on in the background
		}
		if !a.Running || a.Mine {
			if _, err := s.start(ctx, scope, st, target); err != nil {
				return Clock{}, err
			}
		}
	}
}

// ResumePending takes over the advances that no live process runs (their process died, was
// stopped, or gave them up after a failure) and runs them here to their end. The background
// scheduler calls it every round; it returns how many it took.
func (s *Service) ResumePending(ctx context.Context, _ time.Time) (int64, error) {
	if s.bg.Err() != nil {
		return 0, nil // shutting down: the next process resumes them
	}
	pending, err := s.store.Pending(ctx, 100)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, p := range pending {
		st, err := s.store.State(ctx, p.Scope)
		if err != nil {
			return n, err
		}
		if st.Advancing == nil || !st.Advancing.To.Equal(p.To) || (st.Advancing.Running && !st.Advancing.Mine) {
			continue
		}
		s.mu.Lock()
		busy := s.runs[p.Scope] != nil
		s.mu.Unlock()
		if busy {
			continue
		}
		ok, err := s.start(ctx, p.Scope, st, p.To)
		if err != nil {
			return n, err
		}
		if ok {
			s.log.Info("testclock: resuming an advance left unfinished", "merchant", p.Scope.MerchantID, "to", p.To.Unix())
			n++
		}
	}
	return n, nil
}

// Shutdown stops the advances this process runs at their next batch (what each batch wrote is
// committed whole or not at all) and gives them up, recorded, for the next process or the next
// advance to the same time to resume. It waits for that until ctx ends.
func (s *Service) Shutdown(ctx context.Context) error {
	s.stop()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
