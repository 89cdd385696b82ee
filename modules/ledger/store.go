package ledger

import (
	"context"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// Tx is what the ledger needs inside a unit of work: its repository. A module that posts
// (payments) embeds it in its own Tx, so that its postings commit with its change.
type Tx interface {
	Ledger() Repository
}

// Entry is the postings of one journal entry: a new transaction ("post"), a release
// ("release") or a payout paid ("paid"), named by the transaction it belongs to.
type Entry struct {
	TransactionID string
	Kind          EntryKind
	Postings      []Posting
}

// EntryKind names what an entry records.
type EntryKind string

const (
	EntryPost    EntryKind = "post"
	EntryRelease EntryKind = "release"
	EntryPaid    EntryKind = "paid"
)

// Journal is everything one posting writes in a unit of work: new transactions (the pending
// ones also join the release queue), the entries with their postings, the releases taken off
// the queue, and the new value of every balance it changed (each locked by LockBalances).
type Journal struct {
	Scope        core.Scope
	At           time.Time
	Transactions []*Transaction
	Entries      []Entry
	Released     []Due
	Balances     map[BalanceKey]int64
	// AvailableChanged: an available balance changed (not by a payout); the scope's payout
	// mark keeps the earliest such time not yet paid out.
	AvailableChanged bool
	// ChangedAt is when the available balance first changed (At, or the earliest release).
	ChangedAt time.Time
}

// Repository keeps the ledger inside a unit of work. It only writes: every rule is the
// module's.
type Repository interface {
	// LockBalances locks the balance rows of keys (sorted by BalanceKey.Less; missing rows are
	// created at zero) in that order, and answers their balances.
	LockBalances(ctx context.Context, keys []BalanceKey) (map[BalanceKey]int64, error)
	// Append writes j: its transactions (a second one of the same source and type is
	// ErrTransactionExists, wrapped), its postings, the pending transactions into the
	// release queue, the releases out of it, and the balances.
	Append(ctx context.Context, j Journal) error
	// ClaimDue locks up to limit releases due at or before until (FOR UPDATE SKIP LOCKED),
	// earliest first; a nil scope claims across every scope whose clock is not frozen.
	ClaimDue(ctx context.Context, scope *core.Scope, until time.Time, limit int) ([]Due, error)
	// ClaimPayoutDue locks up to limit payout marks of envs changed before `before` (FOR UPDATE
	// SKIP LOCKED), earliest first; a nil scope claims across scopes whose clock is not frozen.
	ClaimPayoutDue(ctx context.Context, scope *core.Scope, envs []core.Environment, before time.Time, limit int) ([]PayoutDue, error)
	// ClearPayoutDue deletes scope's payout mark.
	ClearPayoutDue(ctx context.Context, scope core.Scope) error
	// Currencies lists the currencies of scope's balances, sorted.
	Currencies(ctx context.Context, scope core.Scope) ([]core.Currency, error)
	// Settle links to payoutID every available transaction of scope in currency (not a
	// payout, not pending, not settled yet) and answers the sum of their nets.
	Settle(ctx context.Context, scope core.Scope, currency core.Currency, payoutID string) (int64, error)
}

// Balance is one currency of a scope's balance.
type Balance struct {
	Currency  core.Currency
	Available int64
	Pending   int64
}

// Filter narrows a list of balance transactions.
type Filter struct {
	Type      Type
	PayoutID  string
	SourceID  string
	PaymentID string
}

// Store reads the ledger outside units of work.
type Store interface {
	// Balances reads the available and pending balance of every currency of scope that has
	// one, by currency.
	Balances(ctx context.Context, scope core.Scope) ([]Balance, error)
	// List reads a page of scope's transactions, newest first (ErrUnknownCursor for a cursor
	// that is not one of them).
	List(ctx context.Context, scope core.Scope, q core.ListQuery, f Filter) (core.Page[*Transaction], error)
	// Get reads one transaction (ErrNotFound).
	Get(ctx context.Context, scope core.Scope, id string) (*Transaction, error)
	// NextDue is the earliest available_on ≤ until of scope's pending transactions.
	NextDue(ctx context.Context, scope core.Scope, until time.Time) (time.Time, bool, error)
	// PayoutChangedAt is the change time of scope's payout mark, if it has one.
	PayoutChangedAt(ctx context.Context, scope core.Scope) (time.Time, bool, error)
}
