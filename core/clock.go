package core

import (
	"context"
	"time"
)

// Clock tells the time. Modules never call time.Now directly so that tests and the sandbox
// test clock can move time.
type Clock interface {
	Now() time.Time
}

// SystemClock is the real wall clock, truncated to whole seconds because the merchant API
// speaks Unix seconds.
type SystemClock struct{}

func (SystemClock) Now() time.Time { return time.Now().UTC().Truncate(time.Second) }

// RecordClock is the real wall clock at the database's precision (microseconds), for the
// times a module records to order and age its own rows (a charge attempt's start): whole
// seconds would tie two attempts made within one second.
type RecordClock struct{}

func (RecordClock) Now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// FixedClock always answers the same instant; handy in unit tests.
type FixedClock struct{ T time.Time }

func (c FixedClock) Now() time.Time { return c.T }

// clockReading is a scope's sandbox clock as read once at the start of a request.
type clockReading struct {
	scope  Scope
	frozen *time.Time
}

type clockReadingKey struct{}

// WithClockReading carries the sandbox clock of scope, read together with the caller's API key
// (frozen nil = the clock runs on real time), so that the rest of the request asks no second
// query for it. An advance during the request does not change the reading; it is of the same
// age as the authentication that accompanied it.
func WithClockReading(ctx context.Context, scope Scope, frozen *time.Time) context.Context {
	return context.WithValue(ctx, clockReadingKey{}, clockReading{scope: scope, frozen: frozen})
}

// ClockReading returns the reading of scope carried by ctx, if any.
func ClockReading(ctx context.Context, scope Scope) (frozen *time.Time, ok bool) {
	r, found := ctx.Value(clockReadingKey{}).(clockReading)
	if !found || r.scope != scope {
		return nil, false
	}
	return r.frozen, true
}
