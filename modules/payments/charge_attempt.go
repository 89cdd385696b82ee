package payments

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// AttemptKind is what an attempt asks the processor.
type AttemptKind string

const (
	// AttemptCharge is a new charge (Processor.Charge with the attempt's idempotency key).
	AttemptCharge AttemptKind = "charge"
	// AttemptAction is the buyer's answer to the 3-D Secure challenge of an earlier charge
	// (Processor.CompleteAction on its processor reference).
	AttemptAction AttemptKind = "action"
)

// AttemptStatus is where a charge attempt stands.
type AttemptStatus string

const (
	// AttemptPending: recorded and committed; the processor is being (or was) asked, and the
	// outcome is not applied yet.
	AttemptPending AttemptStatus = "pending"
	// AttemptApplied: the outcome was applied, once, with its payment or decline and events.
	AttemptApplied AttemptStatus = "applied"
	// AttemptAbandoned: the processor never received the charge (Lookup answered
	// ports.ErrChargeUnknown): nothing was charged and nothing is applied.
	AttemptAbandoned AttemptStatus = "abandoned"
)

// ChargeAttempt is one call to the processor for something being paid, recorded before the
// call and committed, so that no connection or lock is held while the processor works
// (issue 10 §2). Its outcome is applied exactly once: the status moves from pending to applied
// in the transaction that writes the outcome, and an attempt that is no longer pending is never
// applied again. An attempt left pending (the outcome failed to commit, the process died) is
// resolved by lookup of its idempotency key once it is older than AttemptGrace: by the next
// charge of the payable that meets it, or by the charge-attempt sweep (AttemptSweeper).
//
// At most one attempt of a payable is pending at a time (storage refuses a second one with
// ErrChargeInProgress).
type ChargeAttempt struct {
	scope        core.Scope
	payableKind  PayableKind
	reference    string
	number       int
	kind         AttemptKind
	amount       int64
	currency     core.Currency
	method       ports.PaymentMethodKind
	processorRef string
	approve      bool
	status       AttemptStatus
	outcome      ports.ChargeOutcome
	offSession   bool
	chargedAt    time.Time
	startedAt    time.Time
	resolvedAt   time.Time
}

// ChargeAttemptSnapshot is the full state of an attempt as storage keeps it.
type ChargeAttemptSnapshot struct {
	Scope core.Scope
	// PayableKind is the kind of the payable Reference names; its owner applies the outcome.
	PayableKind PayableKind
	Reference   string
	Number      int
	Kind        AttemptKind
	Amount      int64
	Currency    core.Currency
	Method      ports.PaymentMethodKind
	// ProcessorRef is the charge an action attempt answers the challenge of ("" for charges).
	ProcessorRef string
	Approve      bool
	Status       AttemptStatus
	// Outcome is the processor's outcome once applied ("" before).
	Outcome ports.ChargeOutcome
	// ChargedAt is the scope's time of the attempt (the test clock in test mode); the
	// outcome's events are stamped with it, whoever applies them.
	ChargedAt time.Time
	// OffSession: the customer is not present (a renewal, a dunning retry); a charge that
	// needs them fails with authentication_required.
	OffSession bool
	// StartedAt is the wall-clock time the attempt was recorded (never a test clock): an
	// attempt older than AttemptGrace can no longer be in a processor call and is resolved by
	// lookup. ResolvedAt is the wall-clock time it was applied or abandoned (zero before).
	StartedAt, ResolvedAt time.Time
}

// RehydrateChargeAttempt rebuilds an attempt from storage.
func RehydrateChargeAttempt(s ChargeAttemptSnapshot) *ChargeAttempt {
	return &ChargeAttempt{scope: s.Scope, payableKind: s.PayableKind, reference: s.Reference, number: s.Number, kind: s.Kind,
		amount: s.Amount, currency: s.Currency, method: s.Method, processorRef: s.ProcessorRef,
		approve: s.Approve, status: s.Status, outcome: s.Outcome, offSession: s.OffSession, chargedAt: s.ChargedAt,
		startedAt: s.StartedAt, resolvedAt: s.ResolvedAt}
}

// Snapshot returns the attempt's full state for storage.
func (a *ChargeAttempt) Snapshot() ChargeAttemptSnapshot {
	return ChargeAttemptSnapshot{Scope: a.scope, PayableKind: a.payableKind, Reference: a.reference, Number: a.number, Kind: a.kind,
		Amount: a.amount, Currency: a.currency, Method: a.method, ProcessorRef: a.processorRef,
		Approve: a.approve, Status: a.status, Outcome: a.outcome, OffSession: a.offSession, ChargedAt: a.chargedAt,
		StartedAt: a.startedAt, ResolvedAt: a.resolvedAt}
}

func (a *ChargeAttempt) Scope() core.Scope               { return a.scope }
func (a *ChargeAttempt) PayableKind() PayableKind        { return a.payableKind }
func (a *ChargeAttempt) OffSession() bool                { return a.offSession }
func (a *ChargeAttempt) StartedAt() time.Time            { return a.startedAt }
func (a *ChargeAttempt) ResolvedAt() time.Time           { return a.resolvedAt }
func (a *ChargeAttempt) Reference() string               { return a.reference }
func (a *ChargeAttempt) Number() int                     { return a.number }
func (a *ChargeAttempt) Kind() AttemptKind               { return a.kind }
func (a *ChargeAttempt) Amount() int64                   { return a.amount }
func (a *ChargeAttempt) Currency() core.Currency         { return a.currency }
func (a *ChargeAttempt) Method() ports.PaymentMethodKind { return a.method }
func (a *ChargeAttempt) ProcessorRef() string            { return a.processorRef }
func (a *ChargeAttempt) Approve() bool                   { return a.approve }
func (a *ChargeAttempt) Status() AttemptStatus           { return a.status }
func (a *ChargeAttempt) Outcome() ports.ChargeOutcome    { return a.outcome }
func (a *ChargeAttempt) ChargedAt() time.Time            { return a.chargedAt }

// IdempotencyKey is the processor idempotency key of the attempt: "<reference>:<number>".
// A retried call with it is answered with the same charge.
func (a *ChargeAttempt) IdempotencyKey() string { return AttemptKey(a.reference, a.number) }

// AttemptKey is the idempotency key of attempt n of the payable reference.
func AttemptKey(reference string, n int) string { return reference + ":" + strconv.Itoa(n) }

// ParseAttemptKey splits an idempotency key made by AttemptKey.
func ParseAttemptKey(key string) (reference string, n int, err error) {
	i := strings.LastIndexByte(key, ':')
	if i <= 0 {
		return "", 0, fmt.Errorf("payments: %q is not an attempt key", key)
	}
	n, err = strconv.Atoi(key[i+1:])
	if err != nil || n <= 0 {
		return "", 0, fmt.Errorf("payments: %q is not an attempt key", key)
	}
	return key[:i], n, nil
}

// applied records that the outcome o was applied. Only a pending attempt can be applied.
func (a *ChargeAttempt) applied(o ports.ChargeOutcome, wall time.Time) error {
	if a.status != AttemptPending {
		return ErrAttemptNotPending
	}
	a.status, a.outcome, a.resolvedAt = AttemptApplied, o, wall
	return nil
}

// abandon records that the processor never received the attempt's charge (Lookup answered
// ports.ErrChargeUnknown), inside the transaction that frees the payable (the owner's AbandonCharge).
func (a *ChargeAttempt) abandon(wall time.Time) error {
	if a.status != AttemptPending {
		return ErrAttemptNotPending
	}
	a.status, a.resolvedAt = AttemptAbandoned, wall
	return nil
}

// Errors of charge attempts.
var (
	// ErrAttemptNotPending: an attempt applied or abandoned already; applying it again is a
	// no-op for the caller (exactly once).
	ErrAttemptNotPending = errors.New("payments: the charge attempt is no longer pending")
	// ErrChargeInProgress: another charge of the same payable is in flight (its attempt is
	// pending). Storage answers it for a second pending attempt; the caller waits for the first
	// to be applied, and answers it (422 invalid_state / payment_in_progress) only when that
	// takes longer than its bound.
	ErrChargeInProgress = core.NewError(core.TypeInvalidState, "payment_in_progress", "",
		"A payment is already being processed; wait a moment and try again.")
)
