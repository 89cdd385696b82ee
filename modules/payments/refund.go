package payments

import (
	"context"
	"errors"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// RefundPrefix is the prefix of refund ids (D2).
const RefundPrefix = "re_"

// RefundReason is why the merchant refunds (D16).
type RefundReason string

const (
	ReasonRequestedByCustomer RefundReason = "requested_by_customer"
	ReasonDuplicate           RefundReason = "duplicate"
	ReasonFraudulent          RefundReason = "fraudulent"
)

// Valid reports whether r is one of the three documented reasons.
func (r RefundReason) Valid() bool {
	return r == ReasonRequestedByCustomer || r == ReasonDuplicate || r == ReasonFraudulent
}

// RefundStatus is where a refund stands. A refund is recorded pending before the processor is
// called, and becomes succeeded (or, when the processor refuses it, failed) once its answer is
// applied; the API shows only refunds that succeeded as `succeeded` (D16).
type RefundStatus string

const (
	RefundPending   RefundStatus = "pending"
	RefundSucceeded RefundStatus = "succeeded"
	RefundFailed    RefundStatus = "failed"
)

// Refund is the refund aggregate (re_…): part or all of a payment given back to the payer.
// It is created pending by NewRefund under the payment's lock, and resolved once by Succeed or
// Fail under the same lock after the processor answered.
type Refund struct {
	id             string
	scope          core.Scope
	paymentID      string
	amount         int64
	currency       core.Currency
	reason         RefundReason
	status         RefundStatus
	feeReversed    Fee
	processorRef   string
	failureCode    string
	failureMessage string
	created        time.Time // the scope's time it was asked for
	startedAt      time.Time // wall clock: the sweep resolves it RefundGrace later
	changed        bool
}

// RefundSnapshot is the full state of a refund as storage keeps it.
type RefundSnapshot struct {
	ID             string
	Scope          core.Scope
	PaymentID      string
	Amount         int64
	Currency       core.Currency
	Reason         RefundReason
	Status         RefundStatus
	FeeReversed    Fee
	ProcessorRef   string
	FailureCode    string
	FailureMessage string
	Created        time.Time
	StartedAt      time.Time
}

// NewRefund records a pending refund of amount of p, asked at now (scope time) and started at
// wall (wall clock). The caller checked it with Payment.CheckRefund under the payment's lock.
func NewRefund(p *Payment, amount int64, reason RefundReason, now, wall time.Time) *Refund {
	return &Refund{
		id: core.NewID(RefundPrefix), scope: p.scope, paymentID: p.id, amount: amount, currency: p.currency,
		reason: reason, status: RefundPending, feeReversed: Fee{Currency: p.currency}, created: now.UTC(),
		startedAt: wall.UTC(),
	}
}

// RehydrateRefund rebuilds a refund from storage.
func RehydrateRefund(s RefundSnapshot) *Refund {
	return &Refund{
		id: s.ID, scope: s.Scope, paymentID: s.PaymentID, amount: s.Amount, currency: s.Currency, reason: s.Reason,
		status: s.Status, feeReversed: s.FeeReversed, processorRef: s.ProcessorRef, failureCode: s.FailureCode,
		failureMessage: s.FailureMessage, created: s.Created, startedAt: s.StartedAt,
	}
}

// Snapshot returns the refund's full state for storage.
func (r *Refund) Snapshot() RefundSnapshot {
	return RefundSnapshot{
		ID: r.id, Scope: r.scope, PaymentID: r.paymentID, Amount: r.amount, Currency: r.currency, Reason: r.reason,
		Status: r.status, FeeReversed: r.feeReversed, ProcessorRef: r.processorRef, FailureCode: r.failureCode,
		FailureMessage: r.failureMessage, Created: r.created, StartedAt: r.startedAt,
	}
}

func (r *Refund) ID() string              { return r.id }
func (r *Refund) Scope() core.Scope       { return r.scope }
func (r *Refund) PaymentID() string       { return r.paymentID }
func (r *Refund) Amount() int64           { return r.amount }
func (r *Refund) Currency() core.Currency { return r.currency }
func (r *Refund) Reason() RefundReason    { return r.reason }
func (r *Refund) Status() RefundStatus    { return r.status }
func (r *Refund) FeeReversed() Fee        { return r.feeReversed }
func (r *Refund) ProcessorRef() string    { return r.processorRef }
func (r *Refund) FailureCode() string     { return r.failureCode }
func (r *Refund) FailureMessage() string  { return r.failureMessage }
func (r *Refund) Created() time.Time      { return r.created }
func (r *Refund) StartedAt() time.Time    { return r.startedAt }

// Changed reports whether the refund was resolved since it was loaded.
func (r *Refund) Changed() bool { return r.changed }

// errRefundResolved: Succeed or Fail on a refund that is no longer pending.
var errRefundResolved = errors.New("payments: the refund is no longer pending")

// Succeed records the processor's refund and the fee it reverses.
func (r *Refund) Succeed(processorRef string, feeReversed Fee) error {
	if r.status != RefundPending {
		return errRefundResolved
	}
	r.status, r.processorRef, r.feeReversed, r.changed = RefundSucceeded, processorRef, feeReversed, true
	return nil
}

// Fail records that the processor refused the refund; nothing was given back.
func (r *Refund) Fail(code, message string) error {
	if r.status != RefundPending {
		return errRefundResolved
	}
	r.status, r.failureCode, r.failureMessage, r.changed = RefundFailed, code, message, true
	return nil
}

// RefundTx is what a refund writes in its units of work: payments' Tx (the payment, the
// outbox, the mail queue), the refunds, and the recovery point of a keyed request.
type RefundTx interface {
	Tx
	Refunds() RefundRepository
	RecoveryPoints() ports.RecoveryPoints
}

// RefundRepository keeps refunds inside a unit of work. Every method is confined to one scope.
type RefundRepository interface {
	// Insert records a new pending refund.
	Insert(ctx context.Context, r *Refund) error
	// Lock reads refund id and locks it for the rest of the unit of work; an unknown one is
	// ErrRefundUnknown.
	Lock(ctx context.Context, scope core.Scope, id string) (*Refund, error)
	// Reserved sums the amounts of the pending refunds of a payment: what is promised to the
	// processor but not yet applied. Called under the payment's lock.
	Reserved(ctx context.Context, scope core.Scope, paymentID string) (int64, error)
	// Save writes the resolution of a refund read by Lock (succeeded or failed); a refund that
	// is no longer pending in storage is an error.
	Save(ctx context.Context, r *Refund) error
}

// RefundStore reads refunds outside any unit of work.
type RefundStore interface {
	// Get reads one refund of scope; ErrRefundUnknown when there is none.
	Get(ctx context.Context, scope core.Scope, id string) (*Refund, error)
	// List pages the scope's refunds newest first, only those of paymentID when it is set.
	List(ctx context.Context, scope core.Scope, q core.ListQuery, paymentID string) (core.Page[*Refund], error)
	// Stale reads up to limit pending refunds started (wall clock) before `before`, oldest
	// first, only scope's when scope is set.
	Stale(ctx context.Context, scope *core.Scope, before time.Time, limit int) ([]*Refund, error)
}

// Store sentinels of the refund repositories.
var (
	// ErrRefundUnknown: no refund with that id in the scope.
	ErrRefundUnknown = errors.New("payments: no such refund")
	// ErrRefundCursorUnknown: a list cursor that is not a refund of the scope.
	ErrRefundCursorUnknown = errors.New("payments: the cursor is not a refund of this list")
)

// RefundEvent reports a refund applied to a payment: charge.refunded (merchant channel; its
// data.object is the interface's 6.1 payload) and, when the payment came from a checkout
// session, checkout.session.refunded (app channel).
type RefundEvent struct {
	Refund  *Refund
	Payment *Payment
}

// EventObjectID is the refund's id for charge.refunded.
func (e RefundEvent) EventObjectID() string { return e.Refund.ID() }

// SessionRefundEvent reports checkout.session.refunded: the session whose payment was
// refunded, with the payment's running amount_refunded and whether it is refunded in full.
type SessionRefundEvent struct {
	Refund  *Refund
	Payment *Payment
}

// EventObjectID is the session's id.
func (e SessionRefundEvent) EventObjectID() string { return e.Payment.PayableID() }

// MailRefundReceipt is the kind of mail of a refund receipt; its subject is the refund.
const MailRefundReceipt core.MailKind = "refund_receipt"
