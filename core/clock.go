package core

import "time"

// Clock tells the time. Modules never call time.Now directly so that tests and the sandbox
// test clock can move time.
type Clock interface {
	Now() time.Time
}

// SystemClock is the real wall clock, truncated to whole seconds because the merchant API
// speaks Unix seconds.
type SystemClock struct{}

func (SystemClock) Now() time.Time { return time.Now().UTC().Truncate(time.Second) }

// FixedClock always answers the same instant; handy in unit tests.
type FixedClock struct{ T time.Time }

func (c FixedClock) Now() time.Time { return c.T }
