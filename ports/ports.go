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

// IdempotencyRecord is what is stored under a key: the request's canonical hash and either
// the response to replay (a completed key: Status set) or, for an operation of the phased
// shape that has not finished, the recovery point it reached (a started key: Status 0). It is
// dated on the wall clock: a key expires 24 h after its first request in real time, whatever
// a sandbox test clock says.
type IdempotencyRecord struct {
	RequestHash []byte
	Status      int
	ContentType string
	Body        []byte
	CreatedAt   time.Time
	// RecoveryPoint is the last point a started key's phases committed ("" right after
	// phase 1, which records the key as started). Empty for a completed key.
	RecoveryPoint string
}

// Completed reports whether the record holds a response to replay.
func (r *IdempotencyRecord) Completed() bool { return r.Status != 0 }

// IdempotencyStore keeps request outcomes for 24 h of wall-clock time (D4). An operation uses
// one of two shapes, chosen per operation (the gate reads it from the spec):
//
//   - One transaction (operations that only write the database): Lock, Get and Put run inside
//     the unit of work of the request (the ctx of UnitOfWork.Do): the key's lock lasts as long
//     as that transaction, and the record is written by the same commit as the change. After a
//     crash there is either the change and its record, or neither.
//   - Phases (operations that call out of the process): Hold takes the key's lock for the
//     whole request outside any transaction; Start (phase 1), Reach and Finish each commit at
//     once. A crash leaves a started key at its recovery point, which the retry resumes from.
//
// The store runs on the pool; the one-transaction shape's lock, read and record are
// IdempotencyRecords, the repository of the unit of work (IdempotencyTx). The store's Get reads
// the committed record without any lock, which is how a completed key is replayed.
type IdempotencyStore interface {
	// Get returns the committed record stored under k that is dated at or after notBefore
	// (wall clock), completed or started, or nil.
	Get(ctx context.Context, k IdempotencyKey, notBefore time.Time) (*IdempotencyRecord, error)
	// Hold takes the key's lock for a request of the phased shape, outside any transaction,
	// without waiting: ok is false when a live request holds it. The lock lasts until release
	// is called, or until the process holding it dies (its database session ends with it), so
	// a key whose owner died is free at once: there is no lease to wait out.
	Hold(ctx context.Context, k IdempotencyKey) (release func(), ok bool, err error)
	// Start records k as started with the request's hash, dated createdAt, at recovery point
	// "" (phase 1), committed at once; it replaces an expired record. The caller holds k.
	Start(ctx context.Context, k IdempotencyKey, hash []byte, createdAt time.Time) error
	// Reach moves a started key to point, committed at once: a phase whose only change is
	// the point. A phase with a change of its own moves the point in its unit of work
	// (RecoveryPoints).
	Reach(ctx context.Context, k IdempotencyKey, point string) error
	// Finish stores the response of a started key (the last phase), committed at once.
	Finish(ctx context.Context, k IdempotencyKey, rec IdempotencyRecord) error
	// Purge deletes the records dated before now - retention (wall clock) and returns how
	// many went.
	Purge(ctx context.Context, now time.Time, retention time.Duration) (int64, error)
}

// IdempotencyRecords is the idempotency record of a key inside the unit of work of a keyed
// request of the one-transaction shape: the key's lock lasts as long as that transaction, and
// the record is written by the same commit as the change.
type IdempotencyRecords interface {
	// Lock takes the key's lock until the unit of work ends, without waiting: false when
	// another request holds it (the same key is still executing).
	Lock(ctx context.Context, k IdempotencyKey) (bool, error)
	// Get is IdempotencyStore.Get on the transaction: after Lock, it sees the record the
	// previous holder committed.
	Get(ctx context.Context, k IdempotencyKey, notBefore time.Time) (*IdempotencyRecord, error)
	// Put stores the completed rec under k, replacing an expired record. The caller holds
	// the key's lock.
	Put(ctx context.Context, k IdempotencyKey, rec IdempotencyRecord) error
}

// IdempotencyTx is the transaction the idempotency gate's unit of work hands its function.
type IdempotencyTx interface {
	IdempotencyKeys() IdempotencyRecords
}

// KeyPhases is what an operation of the phased shape sees of its request's Idempotency-Key
// (the gate hands it in ctx: KeyPhasesFrom). The operation runs as a sequence of phases, each
// its own unit of work or call out of the process; after each phase that must not run twice
// it records a recovery point, and a retry after a crash starts from Point instead of from
// the beginning.
type KeyPhases interface {
	// Key is the request's key, for RecoveryPoints.Reach inside a unit of work.
	Key() IdempotencyKey
	// Point is the recovery point to resume from: "" when no phase after the first recorded
	// one (a fresh request, or a retry of one that died before its first point).
	Point() string
	// Reach records point, committed at once: for a phase whose only change is the point.
	Reach(ctx context.Context, point string) error
}

// RecoveryPoints moves a started key's recovery point inside a unit of work, so that a
// phase's change and its point commit together or not at all. A module whose phase needs it
// declares it in its Tx (RecoveryPoints() ports.RecoveryPoints).
type RecoveryPoints interface {
	// Reach sets k's recovery point to point; k must be started (an error otherwise).
	Reach(ctx context.Context, k IdempotencyKey, point string) error
}

type keyPhasesKey struct{}

// WithKeyPhases returns ctx carrying the key of a request of the phased shape (the gate).
func WithKeyPhases(ctx context.Context, p KeyPhases) context.Context {
	return context.WithValue(ctx, keyPhasesKey{}, p)
}

// KeyPhasesFrom returns the key of the phased request ctx belongs to, nil when there is none
// (no Idempotency-Key, or an operation of the one-transaction shape).
func KeyPhasesFrom(ctx context.Context) KeyPhases {
	p, _ := ctx.Value(keyPhasesKey{}).(KeyPhases)
	return p
}

// RateLimiter decides whether one more request of a scope may run now (D5). The in-process
// token bucket implements it; a shared store can replace it when there are several processes.
type RateLimiter interface {
	Allow(scope core.Scope) (ok bool, retryAfter time.Duration)
}
