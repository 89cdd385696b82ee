package payments

import (
	"context"
	"fmt"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// Record is the payment aggregate as storage keeps it: the Payment plus the processor facts
// the Payment does not model yet but that later work needs. The facts fixed when the payment
// is created are plain fields; the three that change afterwards (when it settles, when its
// funds are available, the dispute opened on it) change only through the Record's transitions
// (Settle, Postpone, OpenDispute), which report what they changed (Changes) so that the
// repository writes exactly that (PaymentRepository.Save).
type Record struct {
	Payment *Payment
	// ProcessorRef is the processor's id of the charge (ports.ChargeResult.ProcessorRef).
	ProcessorRef string
	// PayableKey is what storage keeps unique among the payments of one payable kind: the
	// payable's id (OnePaymentPerPayable) or the attempt's idempotency key
	// (OnePaymentPerAttempt). A second payment with the same key is ErrPaymentExists.
	PayableKey string
	// CardExpMonth and CardExpYear are the card's expiry (0 when unknown or not a card).
	CardExpMonth, CardExpYear int
	// SEPACountry and SEPALast4 describe the debited account of a sepa_debit payment.
	SEPACountry, SEPALast4 string
	// DisputeOpensAt is when the buyer's bank opens a dispute on this payment (the sandbox's
	// dispute card), with its reason; nil when none is announced.
	DisputeOpensAt *time.Time
	DisputeReason  string

	due     DueFacts
	changed RecordChanges
	// counted is what the payment counted in its day's volume totals before its first state
	// change (beforeStateChange); set is false until then.
	counted struct {
		was volumeFigures
		set bool
	}
}

// DueFacts are the facts of a payment that change after it was created.
type DueFacts struct {
	// SettlesAt is when a processing (delayed) payment gets its final outcome; nil otherwise.
	SettlesAt *time.Time
	// AvailableAt is when the payment's funds become available in the balance (D7, D16): two
	// days after a card charge (at once when the processor says so, the sandbox's
	// 4000000000000077), two days after a delayed payment settles; nil while it is processing
	// or when it failed.
	AvailableAt *time.Time
	// DisputeID is the dispute opened on the payment (dp_…), "" when none was; once set it
	// stays, so a won dispute never reopens.
	DisputeID string
}

func (f DueFacts) clone() DueFacts {
	return DueFacts{SettlesAt: cloneTime(f.SettlesAt), AvailableAt: cloneTime(f.AvailableAt), DisputeID: f.DisputeID}
}

func cloneTime(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := t.UTC()
	return &v
}

// WithDueFacts sets the changing facts of a record being built (a new payment) or rebuilt
// from storage; it reports no change. It returns r.
func (r *Record) WithDueFacts(f DueFacts) *Record {
	r.due = f.clone()
	return r
}

// Due returns the changing facts (a copy).
func (r *Record) Due() DueFacts { return r.due.clone() }

// SettlesAt, AvailableAt and DisputeID are the changing facts (DueFacts).
func (r *Record) SettlesAt() *time.Time   { return cloneTime(r.due.SettlesAt) }
func (r *Record) AvailableAt() *time.Time { return cloneTime(r.due.AvailableAt) }
func (r *Record) DisputeID() string       { return r.due.DisputeID }

// RecordChanges is what changed on a Record since it was built or loaded.
type RecordChanges uint8

const (
	// ChangedState: the payment's status and with it its failure or dispute bookkeeping.
	ChangedState RecordChanges = 1 << iota
	// ChangedSettlesAt: when a processing payment settles.
	ChangedSettlesAt
	// ChangedAvailableAt: when the funds are available.
	ChangedAvailableAt
	// ChangedDispute: the dispute opened on the payment.
	ChangedDispute
)

// Has reports whether every part of c2 is in c.
func (c RecordChanges) Has(c2 RecordChanges) bool { return c&c2 == c2 }

// Changes reports what changed since the record was built or loaded; 0 when nothing did.
func (r *Record) Changes() RecordChanges { return r.changed }

// Settle records the final outcome of a processing payment, settled at `at`: succeeded (its
// funds available FundsDelay later) or failed with the processor's code and message. A
// payment that is not processing answers ErrPaymentNotProcessing and nothing changes.
func (r *Record) Settle(succeeded bool, code, message string, at time.Time) error {
	r.beforeStateChange()
	if succeeded {
		if err := r.Payment.Succeed(); err != nil {
			return err
		}
		avail := at.UTC().Add(FundsDelay)
		r.due.AvailableAt = &avail
		r.changed |= ChangedState | ChangedAvailableAt
		return nil
	}
	if err := r.Payment.Fail(code, message); err != nil {
		return err
	}
	r.changed |= ChangedState
	return nil
}

// Postpone moves the settlement of a processing payment to next (the processor could not
// answer, or gave a later time). A payment that is not processing answers
// ErrPaymentNotProcessing.
func (r *Record) Postpone(next time.Time) error {
	if r.Payment.Status() != StatusProcessing {
		return ErrPaymentNotProcessing
	}
	n := next.UTC()
	r.due.SettlesAt = &n
	r.changed |= ChangedSettlesAt
	return nil
}

// OpenDispute opens the dispute the processor announced (DisputeOpensAt, DisputeReason): the
// payment becomes disputed and the new dispute, dated when it opened, is returned for its own
// repository. A payment with no announced dispute, or one that was opened already, answers
// ErrChargeNotDisputable; one that cannot be disputed any more (refunded) the payment's error.
func (r *Record) OpenDispute() (*Dispute, error) {
	if r.DisputeOpensAt == nil || r.due.DisputeID != "" {
		return nil, ErrChargeNotDisputable
	}
	r.beforeStateChange()
	d, err := OpenDisputeOn(r.Payment, r.DisputeReason, *r.DisputeOpensAt)
	if err != nil {
		return nil, err
	}
	r.due.DisputeID = d.ID()
	r.changed |= ChangedState | ChangedDispute
	return d, nil
}

// OpenDisputeAtRate is OpenDispute for a payment whose fee kept no rate (ErrFeeRateMissing):
// the dispute fee is converted at rate (1 EUR in the charge currency, exact decimal),
// published on day, which the caller read from the FX port for the fee's rate day.
func (r *Record) OpenDisputeAtRate(rate string, day time.Time) (*Dispute, error) {
	if r.DisputeOpensAt == nil || r.due.DisputeID != "" {
		return nil, ErrChargeNotDisputable
	}
	fee, err := DisputeFeeFor(r.Payment.Currency(), rate, day)
	if err != nil {
		return nil, err
	}
	r.beforeStateChange()
	d, err := openDisputeOn(r.Payment, r.DisputeReason, *r.DisputeOpensAt, fee)
	if err != nil {
		return nil, err
	}
	r.due.DisputeID = d.ID()
	r.changed |= ChangedState | ChangedDispute
	return d, nil
}

// CloseDispute closes d, the dispute of this payment, with outcome at `at` (Dispute.Close)
// and reports the payment's state changed: won returns it to its state before the dispute,
// lost keeps it disputed.
func (r *Record) CloseDispute(d *Dispute, outcome DisputeStatus, at time.Time) error {
	if d.ID() != r.due.DisputeID {
		return fmt.Errorf("payments: dispute %s is not the one opened on %s", d.ID(), r.Payment.ID())
	}
	r.beforeStateChange()
	if err := d.Close(r.Payment, outcome, at); err != nil {
		return err
	}
	r.changed |= ChangedState
	return nil
}

// FundsDelay is how long after the charge (or the settlement of a delayed method) funds
// become available (D7: T+2 days).
const FundsDelay = 48 * time.Hour

// Reader reads stored payments. Unknown ids, and ids of another merchant or environment,
// answer ErrNotFound.
type Reader interface {
	// Get reads one payment of scope.
	Get(ctx context.Context, scope core.Scope, id string) (*Payment, error)
	// GetBySession reads the payment of a checkout session (at most one exists).
	GetBySession(ctx context.Context, scope core.Scope, sessionID string) (*Payment, error)
}

// DueStore finds the payments that have due work (Record.DueAt): the settlement of a
// processing payment, or the announced dispute of a succeeded or partially refunded payment
// that has none yet. It reads only: the sweep reads due payments, makes every outside call
// (the processor) while no transaction is open, and then applies its decisions in short units
// of work (PaymentRepository.LockDue and Save, DisputeRepository.Insert, the outbox, the mail
// queue; a settlement in its payable owner's unit of work).
type DueStore interface {
	// ListDue reads, without locking, up to limit payments with DueAt ≤ until, earliest
	// first. With scope nil it covers live payments and test payments of merchants whose
	// test clock is not frozen; with a scope only that scope.
	ListDue(ctx context.Context, scope *core.Scope, until time.Time, limit int) ([]*Record, error)
	// NextDue returns the earliest due time ≤ until among the scope's payments; ok is false
	// when none is due by until.
	NextDue(ctx context.Context, scope core.Scope, until time.Time) (at time.Time, ok bool, err error)
}

// ApplyRefund applies a refund the processor made to the payment (Payment.ApplyRefund) and
// reports its state changed.
func (r *Record) ApplyRefund(amount int64) (RefundOutcome, error) {
	r.beforeStateChange()
	o, err := r.Payment.ApplyRefund(amount)
	if err != nil {
		return RefundOutcome{}, err
	}
	r.changed |= ChangedState
	return o, nil
}
