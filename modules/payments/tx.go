package payments

import (
	"context"
	"errors"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/ledger"
	"github.com/kassa-pay/kassa/ports"
)

// Tx is what payments needs inside a unit of work (ports.UnitOfWorkOf): the repositories of
// its own aggregates, the outbox and the mail queue. Every step of the charge protocol
// (Charger.Charge) runs inside a unit of work of whoever owns the thing being paid, so that
// owner's Tx embeds this one (checkout.Tx does; PayableOwner[T] requires it); the Postgres
// adapter's one transaction type satisfies both. A payment that succeeds, and a refund,
// post to the balance ledger in the same unit of work (ledger.Tx). Every payment write moves
// its day's volume totals in the same unit of work (insertPayment, savePayment).
type Tx interface {
	ledger.Tx
	Payments() PaymentRepository
	Disputes() DisputeRepository
	Volumes() VolumeRepository
	ChargeAttempts() AttemptRepository
	Outbox() ports.Outbox
	Mail() ports.MailQueue
}

// PaymentRepository writes payments inside a unit of work.
type PaymentRepository interface {
	// Insert saves a new payment with its processor facts (Record). A second payment with the
	// same payable kind and Record.PayableKey is refused with ErrPaymentExists (wrapped), and
	// nothing is written.
	Insert(ctx context.Context, rec *Record) error
	// InsertMany saves the new payments recs as Insert does each, with one statement, all or
	// none: a payment refused by Insert's rule refuses them all (ErrPaymentExists, wrapped).
	InsertMany(ctx context.Context, recs []*Record) error
	// Lock reads payment id of scope and locks it for the rest of the unit of work (FOR
	// UPDATE). An unknown payment answers ErrNotFound.
	Lock(ctx context.Context, scope core.Scope, id string) (*Record, error)
	// LockDue locks the payments of recs that no other transaction holds (FOR UPDATE SKIP
	// LOCKED), in due order, and reads them again: the state the due sweep's decisions, taken
	// outside the transaction, are checked against. A payment held elsewhere is left out.
	LockDue(ctx context.Context, recs []*Record) ([]*Record, error)
	// Save writes what rec reports changed (Record.Changes) since it was locked, in one
	// statement that must change its one row; nothing when nothing changed.
	Save(ctx context.Context, rec *Record) error
}

// DisputeRepository keeps disputes inside a unit of work: the dispute is its own aggregate,
// written beside the payment it disputes (whose Record.DisputeID names it).
type DisputeRepository interface {
	// Insert saves a new dispute; a payment has at most one, and a second is an error.
	Insert(ctx context.Context, d *Dispute) error
	// Lock reads dispute id of scope and locks it for the rest of the unit of work (FOR
	// UPDATE). An unknown dispute answers ErrNoDispute.
	Lock(ctx context.Context, scope core.Scope, id string) (*Dispute, error)
	// LockDue locks the disputes of ds that no other transaction holds (FOR UPDATE SKIP
	// LOCKED), in due order, and reads them again; a dispute held elsewhere is left out.
	LockDue(ctx context.Context, ds []*Dispute) ([]*Dispute, error)
	// Save writes a dispute read by Lock or LockDue that reports a change (Dispute.Changed)
	// in one statement that must change its one row; nothing when nothing changed.
	Save(ctx context.Context, d *Dispute) error
}

// AttemptRepository keeps charge attempts inside a unit of work. Every method is confined to
// one scope.
type AttemptRepository interface {
	// Insert records a new pending attempt. A second pending attempt of the same payable is
	// refused with ErrChargeInProgress, and nothing is written.
	Insert(ctx context.Context, a *ChargeAttempt) error
	// InsertMany records the new pending attempts as with one statement, all or none: a second
	// pending attempt of any of their payables refuses them all with ErrChargeInProgress.
	InsertMany(ctx context.Context, as []*ChargeAttempt) error
	// Lock reads attempt key of the payable reference and locks it for the rest of the unit of
	// work. An unknown attempt answers ErrAttemptNotFound.
	Lock(ctx context.Context, scope core.Scope, reference, key string) (*ChargeAttempt, error)
	// LockMany reads the stored attempts of as (each by its scope, payable reference and
	// key) and locks them for the rest of the unit of work, with one statement; it answers
	// them in the order of as. One not stored answers ErrAttemptNotFound.
	LockMany(ctx context.Context, as []*ChargeAttempt) ([]*ChargeAttempt, error)
	// Save writes the resolution of an attempt read by Lock (applied or abandoned). Only a
	// stored attempt that is still pending changes; anything else is an error.
	Save(ctx context.Context, a *ChargeAttempt) error
	// SaveMany writes the resolutions of attempts read by Lock or LockMany, as Save does each,
	// with one statement, all or none: if one is not a stored pending attempt (or comes
	// twice), nothing is written and it answers an error.
	SaveMany(ctx context.Context, as []*ChargeAttempt) error
}

// Store sentinels of the payments repositories.
var (
	// ErrPaymentExists: the payable already has its payment (storage keeps one per payable, or
	// per attempt, as the payable's kind says). A charge applied once never meets it; a stray
	// payment would.
	ErrPaymentExists = errors.New("payments: the payable already has this payment")
	// ErrAttemptNotFound: no charge attempt with that key in the scope.
	ErrAttemptNotFound = errors.New("payments: no such charge attempt")
	// ErrNotFound: no payment with that id (or of that session) in the scope.
	ErrNotFound = errors.New("payments: no such payment")
	// ErrNoDispute: no dispute with that id (or of that payment) in the scope.
	ErrNoDispute = errors.New("payments: no such dispute")
	// ErrUnknownCursor: a list cursor that is not a payment of the scope.
	ErrUnknownCursor = errors.New("payments: the cursor is not a payment of this list")
)
