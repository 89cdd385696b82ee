// Package testclock is the sandbox test clock (D12): each merchant's test environment has a
// clock that runs on real time until it is first advanced, and then stays frozen at the
// time it was advanced to. Advancing runs every module's due work up to the new time, in
// bounded batches in time order, before the clock moves; an advance that takes longer than
// the caller waits goes on in the background, survives a restart, and is observable (status
// advancing) until it is done. The live environment always runs on real time.
package testclock

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/scheduler"
	"github.com/kassa-pay/kassa/ports"
)

// Status is whether a clock is moving.
type Status string

const (
	// StatusReady: no advance is in progress.
	StatusReady Status = "ready"
	// StatusAdvancing: an advance is running its due work; the clock keeps its time until
	// every effect due up to AdvancingTo has happened.
	StatusAdvancing Status = "advancing"
)

// Clock is the state of one test clock: FrozenTime is nil until the first advance has
// finished; Now is the time the scope runs on. While an advance runs, Status is advancing and
// AdvancingTo its target.
type Clock struct {
	FrozenTime  *time.Time
	Now         time.Time
	Status      Status
	AdvancingTo *time.Time
}

// MaxAdvance is the longest single advance (D12: at most 2 years at a time).
const MaxAdvance int64 = 63_072_000

// DefaultWait is how long Advance waits for its due work before it answers that the clock is
// still advancing (D12: about 20 s; kept below the 20 s a transaction may stay idle, for a
// caller that waits inside one).
const DefaultWait = 15 * time.Second

// ErrClockAdvancing: another advance of the clock is in progress (409).
var ErrClockAdvancing = core.NewError(core.TypeResourceConflict, "clock_advancing", "",
	"The test clock is advancing. Retry once GET /v1/test_helpers/clock shows it ready.")

// Options are the service's settings; zero fields take the documented defaults.
type Options struct {
	// Wait is how long Advance waits for the due work before answering with the clock still
	// advancing (DefaultWait).
	Wait time.Duration
	// Log receives the background advances' failures and pauses (slog.Default()).
	Log *slog.Logger
}

// Service is the test clock use cases; it implements ports.Clocks for every module.
type Service struct {
	store Store
	real  core.Clock
	due   *scheduler.Registry
	wait  time.Duration
	log   *slog.Logger

	// bg is the context of the advances this process runs; Shutdown ends it.
	bg   context.Context
	stop context.CancelFunc
	wg   sync.WaitGroup
	mu   sync.Mutex
	runs map[core.Scope]*run // the advances this process runs, one per clock
}

// NewService builds the clocks. real is the wall clock; due holds the processors whose work
// an advance runs (the same registry the background scheduler runs).
func NewService(store Store, real core.Clock, due *scheduler.Registry, opt Options) (*Service, error) {
	if store == nil || real == nil || due == nil {
		return nil, errors.New("testclock: NewService needs a store, a clock and a registry")
	}
	if opt.Wait <= 0 {
		opt.Wait = DefaultWait
	}
	if opt.Log == nil {
		opt.Log = slog.Default()
	}
	bg, stop := context.WithCancel(context.Background())
	return &Service{store: store, real: real, due: due, wait: opt.Wait, log: opt.Log,
		bg: bg, stop: stop, runs: map[core.Scope]*run{}}, nil
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
	st, err := s.store.State(ctx, scope)
	if err != nil {
		return Clock{}, err
	}
	return s.clock(st), nil
}

func (s *Service) clock(st State) Clock {
	c := Clock{Now: s.real.Now(), Status: StatusReady}
	if st.Frozen != nil {
		t := *st.Frozen
		c.FrozenTime, c.Now = &t, t
	}
	if st.Advancing != nil {
		t := st.Advancing.To
		c.Status, c.AdvancingTo = StatusAdvancing, &t
	}
	return c
}
