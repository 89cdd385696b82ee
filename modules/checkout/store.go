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
	// List returns one page of the scope's sessions, newest first, optionally only those in
	// status (empty = all). A cursor id unknown in the scope answers 400
	// starting_after_invalid / ending_before_invalid, as every list does.
	List(ctx context.Context, scope core.Scope, q core.ListQuery, status Status) (core.Page[*Session], error)
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
	// UpdateWithPayment is Update for the completion of a session: it locks the session row,
	// calls fn, and when fn returns nil writes, in that one transaction, the payment fn
	// returned (if any), the session's new state and the events. When any write fails nothing
	// is written. A session has at most one payment: a second one is refused by storage.
	UpdateWithPayment(ctx context.Context, scope core.Scope, id string, fn PaymentUpdateFunc) (*Session, error)
}

// PaymentUpdateFunc changes a locked session and returns the payment to insert with the
// change (nil: none) and the events that report it.
type PaymentUpdateFunc func(s *Session) (*payments.Record, []core.Event, error)

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
