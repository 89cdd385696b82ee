package checkout

import (
	"context"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
)

// Store keeps checkout sessions. Every method is confined to one merchant environment (a
// scope), except ClaimDue without a scope, which is the background sweep. Unknown ids, and ids
// of another merchant or environment, answer core.NotFound("session", …).
type Store interface {
	// Insert saves a new session.
	Insert(ctx context.Context, s *Session) error
	// Get reads one session without locking it.
	Get(ctx context.Context, scope core.Scope, id string) (*Session, error)
	// FindByClientSecretHash reads, without locking, the session whose client secret has
	// this SHA-256 hash, in whatever scope it lives: the buyer's side has no API key, only
	// the secret. No such session answers core.NotFound("session", …). The caller still
	// compares the id and the secret itself. frozen is the session scope's sandbox clock,
	// read with it (nil: real time; see core.WithClockReading), so that the buyer's request
	// does not read the clock again.
	FindByClientSecretHash(ctx context.Context, hash [32]byte) (s *Session, frozen *time.Time, err error)
	// List returns one page of the scope's sessions, newest first, without writing anything,
	// optionally only those in status (empty = all) as they stand at now: a session stored
	// open that is due by now (Session.IsDue) counts as expired, not open. A cursor id unknown
	// in the scope answers 400 starting_after_invalid / ending_before_invalid, as every list
	// does.
	List(ctx context.Context, scope core.Scope, q core.ListQuery, status Status, now time.Time) (core.Page[*Session], error)
	// Update locks the session row for the length of one transaction and calls fn with it.
	// When fn returns nil, the session's new state and the returned events are written in that
	// transaction; when fn fails nothing is written and its error is returned.
	Update(ctx context.Context, scope core.Scope, id string, fn UpdateFunc) (*Session, error)
	// ClaimDue locks up to limit open sessions whose expires_at ≤ until, oldest expiry first,
	// skipping rows other transactions hold (FOR UPDATE SKIP LOCKED), and calls fn for each in
	// one transaction, writing each session's new state and events as Update does. With scope
	// nil it covers live sessions and test sessions of merchants whose test clock is not
	// frozen; with a scope only that scope. It returns how many sessions it claimed.
	ClaimDue(ctx context.Context, scope *core.Scope, until time.Time, limit int, fn UpdateFunc) (int, error)
	// BeginCharge is the first transaction of a charge (issue 10 §2): it locks the session
	// row and calls fn; when fn returns an attempt, the attempt is inserted with the session's
	// new state and the events, in that one transaction, which commits before the processor is
	// called. A second pending attempt of the session is refused by storage with
	// payments.ErrChargeInProgress (nothing written). When fn fails nothing is written.
	BeginCharge(ctx context.Context, scope core.Scope, id string, fn BeginChargeFunc) (*Session, error)
	// ApplyCharge is the second transaction of a charge: it locks the session row and the
	// attempt key of that session. An attempt that is no longer pending (applied or abandoned
	// already) is left alone: fn is not called, nothing is written, and applied is false.
	// Otherwise fn changes the session and the attempt (payments.Apply, or Abandon) and returns
	// the payment to insert (nil: none) and the events, written with the session's new state and
	// the attempt's in that one transaction. A session has at most one payment: a second one
	// is refused by storage. An unknown attempt answers core.NotFound("charge_attempt", …).
	ApplyCharge(ctx context.Context, scope core.Scope, id, key string, fn ApplyChargeFunc) (s *Session, applied bool, err error)
}

// BeginChargeFunc changes a locked session and returns the charge attempt to record (nil:
// none, the session lapsed) and the events.
type BeginChargeFunc func(s *Session) (*payments.ChargeAttempt, []core.Event, error)

// ApplyChargeFunc applies the outcome of the pending attempt a to the locked session s: it
// changes both and returns the payment to insert (nil: none) and the events.
type ApplyChargeFunc func(s *Session, a *payments.ChargeAttempt) (*payments.Record, []core.Event, error)

// UpdateFunc changes a locked session and returns the events that report the change.
type UpdateFunc func(s *Session) ([]core.Event, error)

// PriceInfo is what checkout needs to know of a catalog price (subscription mode).
type PriceInfo struct {
	ID         string
	Active     bool
	Recurring  bool
	UnitAmount int64
	Currency   core.Currency
	ProductID  string
}

// PriceLookup reads a price of the scope's catalog. It answers core.NotFound("price", …) when
// the price does not exist in the scope. The wiring adapts the catalog module to it, so that
// checkout does not depend on catalog.
type PriceLookup interface {
	LookupPrice(ctx context.Context, scope core.Scope, priceID string) (*PriceInfo, error)
}
