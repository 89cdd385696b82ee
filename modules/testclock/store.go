package testclock

import (
	"context"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// State is a clock as stored.
type State struct {
	// Frozen is the clock's time; nil while it follows real time.
	Frozen *time.Time
	// Advancing is the advance in progress; nil when none is.
	Advancing *Advancing
}

// Advancing is an advance in progress: the clock is moving to To.
type Advancing struct {
	To time.Time
	// Running: a live process runs it (this one when Mine). An advance whose process died,
	// or gave it up (after an error, or at shutdown), is not running: the next advance to
	// the same time, or the resumer of any process, takes it over.
	Running bool
	// Mine: this process took it (and has not given it up).
	Mine bool
}

// Pending is an advance in progress that no other live process runs.
type Pending struct {
	Scope core.Scope
	To    time.Time
}

// Store keeps the clocks and their advances. A store stands for one process (the Postgres one
// knows it by its presence): "this process" below. Scopes passed to it are always test
// scopes. Every method is one short statement; none joins a transaction or holds a
// connection after it returns.
type Store interface {
	// FrozenTime returns the clock's frozen time, nil when the clock runs on real time (no
	// row, or a row without a frozen time).
	FrozenTime(ctx context.Context, scope core.Scope) (*time.Time, error)
	// State returns the clock with the advance in progress, if any.
	State(ctx context.Context, scope core.Scope) (State, error)
	// Begin records that this process runs an advance of the clock to target (creating the
	// clock when absent), when the clock is still as read (frozen at from; nil: following
	// real time) and no advance is running on it: none is recorded, or the one recorded goes
	// to target and no live process other than this one runs it. ok is false otherwise, and
	// nothing is written.
	Begin(ctx context.Context, scope core.Scope, from *time.Time, target time.Time) (ok bool, err error)
	// Finish sets the clock to target and ends the advance to target, whoever runs it. ok is
	// false when the clock is not advancing to target (it finished already); nothing is
	// written then.
	Finish(ctx context.Context, scope core.Scope, target time.Time) (ok bool, err error)
	// Release gives up this process's run of the advance to target: it stays recorded, not
	// running, for another to take over.
	Release(ctx context.Context, scope core.Scope, target time.Time) error
	// Pending lists up to limit advances that no live process other than this one runs
	// (this process's own are listed too: the caller knows which it runs).
	Pending(ctx context.Context, limit int) ([]Pending, error)
}
