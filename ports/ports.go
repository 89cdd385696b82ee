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

// IdempotencyRecord is the outcome stored under a key: the request's canonical hash and the
// response to replay, dated on the scope's clock.
type IdempotencyRecord struct {
	RequestHash []byte
	Status      int
	ContentType string
	Body        []byte
	CreatedAt   time.Time
}

// IdempotencyStore keeps request outcomes for 24 h (D4). Lock, Get and Put work inside a unit
// of work (the ctx of UnitOfWork.Do) and refuse to run outside one: the key's lock lasts as
// long as that transaction, and the record is written by the same commit as the change it
// describes. So after a crash at any point there is either the change and its record, or
// neither; no claim outlives its transaction, and none is ever taken over.
type IdempotencyStore interface {
	// Lock takes the key's lock until the unit of work ends, without waiting: false when
	// another unit of work holds it (the same key is still executing).
	Lock(ctx context.Context, k IdempotencyKey) (bool, error)
	// Get returns the record stored under k that is dated at or after notBefore (on the
	// scope's clock), or nil.
	Get(ctx context.Context, k IdempotencyKey, notBefore time.Time) (*IdempotencyRecord, error)
	// Put stores rec under k, replacing an expired record. The caller holds the key's lock.
	Put(ctx context.Context, k IdempotencyKey, rec IdempotencyRecord) error
	// Purge deletes the records older than retention on the clock of their own scope (the
	// sandbox test clock of a test environment, real time otherwise) and returns how many
	// went.
	Purge(ctx context.Context, now time.Time, retention time.Duration) (int64, error)
}

// RateLimiter decides whether one more request of a scope may run now (D5). The in-process
// token bucket implements it; a shared store can replace it when there are several processes.
type RateLimiter interface {
	Allow(scope core.Scope) (ok bool, retryAfter time.Duration)
}
