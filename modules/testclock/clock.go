// Package testclock is the sandbox test clock (D12): each merchant's test environment has a
// clock that runs on real time until it is first advanced, and then stays frozen at the
// time it was advanced to. Advancing runs every module's due work up to the new time before
// it returns. The live environment always runs on real time.
package testclock

import (
	"context"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/scheduler"
	"github.com/kassa-pay/kassa/ports"
)

// Clock is the state of one test clock: FrozenTime is nil until the first advance; Now is the
// time the scope runs on.
type Clock struct {
	FrozenTime *time.Time
	Now        time.Time
}

// MaxAdvance is the longest single advance (D12: at most 2 years at a time).
const MaxAdvance int64 = 63_072_000

// Store keeps the clocks. Scopes passed to it are always test scopes. No method holds a
// database connection after it returns: an advance claims the clock, runs the due work with
// no connection of its own, and then sets the clock.
type Store interface {
	// FrozenTime returns the clock's frozen time, nil when the clock runs on real time (no
	// row, or a row without a frozen time).
	FrozenTime(ctx context.Context, scope core.Scope) (*time.Time, error)
	// ClaimAdvance claims the clock for one advance under token (creating the clock when
	// absent), for at most lease of wall-clock time, and returns its frozen time. ok is false
	// when another advance holds an unexpired claim; the clock is then left as it was.
	ClaimAdvance(ctx context.Context, scope core.Scope, token string, lease time.Duration) (frozen *time.Time, ok bool, err error)
	// FinishAdvance sets the clock to target and releases the claim, when token still holds
	// it; ok is false when the claim was lost (its lease ran out and another advance took
	// it), and then nothing is changed.
	FinishAdvance(ctx context.Context, scope core.Scope, token string, target time.Time) (ok bool, err error)
	// ReleaseAdvance gives up the claim of token without moving the clock; a clock that was
	// created by the claim and never frozen is removed again.
	ReleaseAdvance(ctx context.Context, scope core.Scope, token string) error
}

// Service is the test clock use cases; it implements ports.Clocks for every module.
type Service struct {
	store Store
	real  core.Clock
	due   *scheduler.Registry
}

// NewService builds the clocks. real is the wall clock; due holds the processors whose work
// an advance runs (the same registry the background scheduler runs).
func NewService(store Store, real core.Clock, due *scheduler.Registry) *Service {
	if store == nil || real == nil || due == nil {
		panic("testclock: NewService needs a store, a clock and a registry")
	}
	return &Service{store: store, real: real, due: due}
}

var _ ports.Clocks = (*Service)(nil)

// Now is the time of scope: real time for live; for test the frozen time when the clock has
// been advanced, else real time.
func (s *Service) Now(ctx context.Context, scope core.Scope) (time.Time, error) {
	if scope.Env != core.EnvTest {
		return s.real.Now(), nil
	}
	if frozen, ok := core.ClockReading(ctx, scope); ok {
		if frozen != nil {
			return *frozen, nil
		}
		return s.real.Now(), nil
	}
	frozen, err := s.store.FrozenTime(ctx, scope)
	if err != nil {
		return time.Time{}, err
	}
	if frozen != nil {
		return *frozen, nil
	}
	return s.real.Now(), nil
}

// Get returns the scope's clock (GET /v1/test_helpers/clock). Live scopes get
// core.ErrTestModeOnly.
func (s *Service) Get(ctx context.Context, scope core.Scope) (Clock, error) {
	if scope.Env != core.EnvTest {
		return Clock{}, core.ErrTestModeOnly
	}
	frozen, err := s.store.FrozenTime(ctx, scope)
	if err != nil {
		return Clock{}, err
	}
	return s.clock(frozen), nil
}

func (s *Service) clock(frozen *time.Time) Clock {
	if frozen != nil {
		t := *frozen
		return Clock{FrozenTime: &t, Now: t}
	}
	return Clock{Now: s.real.Now()}
}
