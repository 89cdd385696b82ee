package payouts

import (
	"context"
	"errors"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/ledger"
	"github.com/kassa-pay/kassa/ports"
)

// Tx is what a payout run writes in one unit of work: the ledger, the payouts, the outbox.
type Tx interface {
	ledger.Tx
	Payouts() Repository
	Outbox() ports.Outbox
}

// Repository keeps payouts inside a unit of work.
type Repository interface {
	// Insert writes a new payout.
	Insert(ctx context.Context, p *Payout) error
	// Lock reads a payout FOR UPDATE (ErrNotFound).
	Lock(ctx context.Context, scope core.Scope, id string) (*Payout, error)
	// Save writes a changed payout (its rail reference, its status).
	Save(ctx context.Context, p *Payout) error
	// ClaimArrived locks up to limit sent pending payouts with arrival_date ≤ until (FOR UPDATE
	// SKIP LOCKED), earliest first; a nil scope claims across unfrozen scopes.
	ClaimArrived(ctx context.Context, scope *core.Scope, until time.Time, limit int) ([]*Payout, error)
}

// Store reads payouts outside units of work.
type Store interface {
	Get(ctx context.Context, scope core.Scope, id string) (*Payout, error)
	List(ctx context.Context, scope core.Scope, q core.ListQuery) (core.Page[*Payout], error)
	// Unsent lists up to limit payouts of envs not yet accepted by the rail, oldest first.
	Unsent(ctx context.Context, scope *core.Scope, envs []core.Environment, limit int) ([]*Payout, error)
	// NextStep is the earliest step ≤ until of scope's payouts other than a run: an unsent
	// payout's creation (it is due to be sent from then on) or a pending payout's arrival_date.
	NextStep(ctx context.Context, scope core.Scope, until time.Time) (time.Time, bool, error)
}

// Store sentinels.
var (
	ErrNotFound      = errors.New("payouts: no such payout")
	ErrUnknownCursor = errors.New("payouts: the cursor is not a payout of this list")
)

// ErrPayoutNotFound: no payout with that id in the scope (also another merchant's or the other
// environment's).
var ErrPayoutNotFound = core.NewError(core.TypeNotFound, "payout_not_found", "id", "No such payout.")
