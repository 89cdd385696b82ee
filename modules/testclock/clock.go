// Package testclock is the sandbox test clock (D12): each merchant's test environment has a
// clock that runs on real time until it is first advanced, and then stays frozen at the
// time it was advanced to. Advancing runs every module's due work up to the new time before
// it returns. The live environment always runs on real time.
package testclock

import (
	"context"
	"sync"
	"time"

	"github.com/kassa-pay/kassa/core"
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

// Store keeps the clocks. Scopes passed to it are always test scopes.
type Store interface {
	// FrozenTime returns the clock's frozen time, nil when the clock runs on real time (no
	// row, or a row without a frozen time).
	FrozenTime(ctx context.Context, scope core.Scope) (*time.Time, error)
	// Advance serialises advances of one clock: it locks the clock (creating it when absent)
	// for one transaction, calls fn with its current frozen time, and, when fn returns nil,
	// sets frozen_time to the target fn returned and commits. When fn fails the clock is left
	// as it was and fn's error is returned.
	Advance(ctx context.Context, scope core.Scope, fn func(frozen *time.Time) (time.Time, error)) error
}

// Service is the test clock use cases; it implements ports.Clocks for every module.
type Service struct {
	store Store
	real  core.Clock

	mu         sync.RWMutex
	processors []ports.DueProcessor
}

// NewService builds the clocks. real is the wall clock; processors are the modules whose
// due work an advance must run.
func NewService(store Store, real core.Clock, processors ...ports.DueProcessor) *Service {
	return &Service{store: store, real: real, processors: processors}
}

// AddProcessor registers one more module whose due work an advance runs. It exists for the
// wiring: checkout needs the clock and the clock needs checkout.
func (s *Service) AddProcessor(p ports.DueProcessor) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.processors = append(s.processors, p)
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
