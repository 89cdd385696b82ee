package checkout

import (
	"context"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
)

// Tx is what checkout needs inside a unit of work (ports.UnitOfWorkOf[Tx]): its sessions, and
// what the charge use case of payments writes beside them (payments.Tx: payments, charge
// attempts, the outbox, the mail queue). A confirmation's second transaction writes through
// all of them at once (charge_outcome.go). The Postgres adapter's transaction type satisfies
// it; checkout never sees how.
type Tx interface {
	payments.Tx
	Sessions() SessionRepository
}

// SessionRepository is the sessions inside a unit of work. It decides nothing: the use case
// changes the session through its transitions, and Save writes what they report changed.
type SessionRepository interface {
	// Lock reads one session of scope and locks it until the unit of work ends. Unknown ids,
	// and ids of another merchant or environment, answer ErrNotFound.
	Lock(ctx context.Context, scope core.Scope, id string) (*Session, error)
	// ClaimDue locks up to limit open sessions whose expires_at ≤ until (the projection of
	// Session.IsDue), oldest expiry first, skipping rows other transactions hold (FOR UPDATE
	// SKIP LOCKED), and returns them locked until the unit of work ends. With scope nil it
	// covers live sessions and test sessions of merchants whose test clock is not frozen; with
	// a scope only that scope. It changes nothing: the sweep expires and saves them.
	ClaimDue(ctx context.Context, scope *core.Scope, until time.Time, limit int) ([]*Session, error)
	// Insert saves a new session.
	Insert(ctx context.Context, s *Session) error
	// Save writes the parts of s that changed (Session.Changes) since Lock read it; nothing
	// when none did.
	Save(ctx context.Context, s *Session) error
}

// Store reads checkout sessions outside a unit of work. Every write goes through the unit of
// work (Tx.Sessions: insert; lock, change through the session's transitions, Save, events
// through Tx.Outbox). Every method is confined to one merchant environment (a scope). Unknown
// ids, and ids of another merchant or environment, answer ErrNotFound.
type Store interface {
	// Get reads one session without locking it.
	Get(ctx context.Context, scope core.Scope, id string) (*Session, error)
	// FindByClientSecretHash reads, without locking, the session whose client secret has
	// this SHA-256 hash, in whatever scope it lives: the buyer's side has no API key, only
	// the secret. No such session answers ErrNotFound. The caller still compares the id and
	// the secret itself. With the session it reads, in the same query, what the buyer's
	// request needs besides (SecretLookup): the scope's sandbox clock and the merchant's
	// buyer-facing fields, so that the request reads neither again.
	FindByClientSecretHash(ctx context.Context, hash [32]byte) (SecretLookup, error)
	// List returns one page of the scope's sessions, newest first, without writing anything,
	// optionally only those in status (empty = all) as they stand at now: a session stored
	// open that is due by now (Session.IsDue) counts as expired, not open. A cursor id that
	// names no session of the scope answers ErrUnknownCursor.
	List(ctx context.Context, scope core.Scope, q core.ListQuery, status Status, now time.Time) (core.Page[*Session], error)
	// NextDue returns the earliest expires_at ≤ until of the scope's sessions that
	// SessionRepository.ClaimDue would claim (the projection of Session.IsDue); ok is false
	// when none is due by until.
	NextDue(ctx context.Context, scope core.Scope, until time.Time) (at time.Time, ok bool, err error)
}

// SecretLookup is what Store.FindByClientSecretHash reads in one go.
type SecretLookup struct {
	Session *Session
	// Frozen is the session scope's sandbox clock (nil: real time; see
	// core.WithClockReading).
	Frozen *time.Time
	// Merchant is the buyer-facing part of the session's merchant (its name on the buyer's
	// pages, and whether live charges may run), as it stands when the session is read.
	Merchant BuyerMerchant
}

// PriceInfo is what checkout needs to know of a catalog price (subscription mode).
type PriceInfo struct {
	ID         string
	Active     bool
	Recurring  bool
	UnitAmount int64
	Currency   core.Currency
	ProductID  string
	// Interval, IntervalCount and TrialPeriodDays are a recurring price's terms (the hosted
	// page of a subscription session shows them); zero for a one-time price.
	Interval        string
	IntervalCount   int
	TrialPeriodDays int
}

// PriceLookup reads a price of the scope's catalog. It answers core.NotFound("price", …) when
// the price does not exist in the scope. The wiring adapts the catalog module to it, so that
// checkout does not depend on catalog.
type PriceLookup interface {
	LookupPrice(ctx context.Context, scope core.Scope, priceID string) (*PriceInfo, error)
}
