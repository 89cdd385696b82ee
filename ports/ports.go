// Package ports holds the interfaces that more than one module, or the transport layer, needs
// from the outside world. A store that speaks one module's entities is declared beside that
// module (modules/<name>/store.go) instead, so that ports never imports a module; adapters
// implement both kinds.
package ports

import (
	"context"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// Clocks tells the current time of a scope: the wall clock for live, and the merchant's
// sandbox test clock (D12) for test.
type Clocks interface {
	Now(ctx context.Context, scope core.Scope) (time.Time, error)
}

// DueProcessor performs the background work of one module that is due at or before `until`
// ("process what is due at time T", architecture: Background work). With a scope it handles
// only that merchant environment (the test clock); without one it handles every live scope
// and every test scope whose clock is not frozen.
type DueProcessor interface {
	ProcessDue(ctx context.Context, scope *core.Scope, until time.Time) (int, error)
}

// IdempotencyKey identifies a stored request (D4): merchant, environment, method, path, key.
type IdempotencyKey struct {
	Scope  core.Scope
	Method string
	Path   string
	Key    string
}

// IdempotencyRecord is what is stored under a key.
type IdempotencyRecord struct {
	RequestHash []byte
	InFlight    bool
	Status      int
	ContentType string
	Body        []byte
	CreatedAt   time.Time
}

// IdempotencyStore keeps request outcomes for 24 h.
type IdempotencyStore interface {
	// Claim records key as in flight with the request's canonical hash. It returns nil when the
	// caller now owns the key, or the existing record when another request has it (in flight or
	// finished). Records created before `expiredBefore`, and in-flight records whose lease
	// started before `staleBefore` (the owner died), are replaced.
	Claim(ctx context.Context, k IdempotencyKey, hash []byte, now, expiredBefore, staleBefore time.Time) (*IdempotencyRecord, error)
	// Complete stores the outcome for replay.
	Complete(ctx context.Context, k IdempotencyKey, status int, contentType string, body []byte) error
	// Release forgets a claim whose outcome must not be stored (401, 429, 5xx).
	Release(ctx context.Context, k IdempotencyKey) error
	// Purge deletes records created before `before` and returns how many went.
	Purge(ctx context.Context, before time.Time) (int64, error)
}

// RateLimiter decides whether one more request of a scope may run now (D5). The in-process
// token bucket implements it; a shared store can replace it when there are several processes.
type RateLimiter interface {
	Allow(scope core.Scope) (ok bool, retryAfter time.Duration)
}
