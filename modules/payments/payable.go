package payments

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// PayableKind names a kind of thing that can be paid: "checkout_session" (checkout), an invoice
// next (billing). It is stored with every attempt and payment, so that the attempt sweeper and
// the settlement sweep find the payable's owner by it, never by the shape of an id.
type PayableKind string

// Uniqueness says how many payments a payable of a kind may have; storage enforces it per
// kind and refuses a second one with ErrPaymentExists.
type Uniqueness int

const (
	// OnePaymentPerPayable: a payable has at most one payment (a checkout session).
	OnePaymentPerPayable Uniqueness = iota + 1
	// OnePaymentPerAttempt: each attempt may leave its own payment (an invoice whose SEPA debit
	// failed at settlement is charged again, and the new payment sits beside the failed one).
	OnePaymentPerAttempt
)

// PaymentLink is the field of a payment that names its payable (interface 2.2).
type PaymentLink int

const (
	// LinkSession: the payment's session_id.
	LinkSession PaymentLink = iota + 1
	// LinkInvoice: the payment's invoice_id.
	LinkInvoice
)

// KindSpec describes a payable kind.
type KindSpec struct {
	Name PayableKind
	// Link is the payment field that names a payable of this kind.
	Link PaymentLink
	// Payments is how many payments a payable of this kind may have.
	Payments Uniqueness
}

func (k KindSpec) check() error {
	switch {
	case k.Name == "":
		return errors.New("payments: a payable kind needs a name")
	case k.Link != LinkSession && k.Link != LinkInvoice:
		return fmt.Errorf("payments: payable kind %s: unknown payment link %d", k.Name, k.Link)
	case k.Payments != OnePaymentPerPayable && k.Payments != OnePaymentPerAttempt:
		return fmt.Errorf("payments: payable kind %s: unknown uniqueness %d", k.Name, k.Payments)
	}
	return nil
}

// Payable is what is being paid, as its owner read it under its lock (PayableOwner.LockPayable):
// a checkout session today, an invoice next. Its amount, currency and payer do not change
// while a charge of it is in flight.
type Payable interface {
	// ID is the payable's id (cs_… for a session). It is the charge's reference and the prefix
	// of its attempts' idempotency keys.
	ID() string
	Scope() core.Scope
	Amount() int64
	Currency() core.Currency
	// CustomerName and CustomerEmail are the payer, kept on the payment for its receipt.
	CustomerName() string
	CustomerEmail() string
	// Reference is the merchant's own reference (or nil); Description is shown on receipts.
	Reference() *string
	Description() *string
	Metadata() map[string]string
}

// CustomerAction is a charge that waits for the customer (3-D Secure): what answering it needs.
// It never holds a card number, only what D6 allows to be stored. The payable's owner keeps it
// (PayableOwner.KeepCustomerAction) and gives it back (KeptAction) until it is answered,
// abandoned by a new charge, or declined.
type CustomerAction struct {
	ProcessorRef string
	Method       ports.PaymentMethodKind
	Card         *ports.CardInfo
	Action       ports.ChargeAction
}

// ChargeStart is what a new attempt is about to do, for the owner's checks (BeginCharge).
type ChargeStart struct {
	// Kind is AttemptCharge (a new charge) or AttemptAction (the answer to the kept
	// CustomerAction).
	Kind       AttemptKind
	Method     ports.PaymentMethodKind
	OffSession bool
	// SavedMethod is ChargeRequest.SavedMethod ("" for an action's answer).
	SavedMethod string
	// Now is the scope's time of the charge.
	Now time.Time
}

// PayableOwner is the module that owns a kind of payable (checkout for sessions, billing for
// invoices). The Charger runs every step of the charge protocol in a unit of work over the
// owner's Tx (T, which embeds payments.Tx) and calls the owner inside it, always in the lock
// order: the payable first (LockPayable), then the attempt, then the payment, then ledger
// accounts by id. An owner method that fails fails the whole unit of work: nothing of it is
// written.
type PayableOwner[T Tx] interface {
	// LockPayable reads the payable id of scope and locks it until the unit of work ends. An
	// unknown one answers the owner's own not-found sentinel, which the Charger passes on.
	LockPayable(ctx context.Context, tx T, scope core.Scope, id string) (Payable, error)
	// BeginCharge checks that the locked payable p can be charged as start says, records the
	// charge in flight on it (and saves it), and returns the new attempt's number (1 for the
	// first attempt of p; attempt n's idempotency key is "<id>:<n>"). A charge already in
	// flight answers ErrChargeInProgress; any other refusal is the owner's own error. A refusal
	// whose change must stay written (a session found expired, with its event) is returned as
	// CommitRefusal(err).
	BeginCharge(ctx context.Context, tx T, p Payable, start ChargeStart) (int, error)
	// KeptAction is the customer action the owner keeps on p (nil: none).
	KeptAction(p Payable) *CustomerAction
	// ApplyOutcome writes the owner's side of the outcome o of attempt a (succeeded,
	// processing or failed), ending the charge in flight, and returns the owner's events; they
	// follow payments' own in the outbox.
	ApplyOutcome(ctx context.Context, tx T, p Payable, a *ChargeAttempt, o *ChargeOutcome) ([]core.Event, error)
	// KeepCustomerAction ends the charge in flight of attempt a, which waits for the customer,
	// and keeps act until it is answered (a new attempt of kind AttemptAction) or abandoned.
	KeepCustomerAction(ctx context.Context, tx T, p Payable, a *ChargeAttempt, act CustomerAction) error
	// AbandonCharge ends the charge in flight of attempt a, which the processor never received:
	// nothing was charged, and p is free for a new attempt.
	AbandonCharge(ctx context.Context, tx T, p Payable, a *ChargeAttempt) error
	// ApplySettlement writes the owner's side of the settlement of p's payment pay (a delayed
	// method: pay is now succeeded or failed), dated at, and returns the owner's events.
	ApplySettlement(ctx context.Context, tx T, p Payable, pay *Payment, at time.Time) ([]core.Event, error)
}

// PayableRef names a payable: its scope and id.
type PayableRef struct {
	Scope core.Scope
	ID    string
}

// PayableLocker is what an owner may add to PayableOwner so that ChargeMany locks a batch's
// payables with one statement: LockPayables reads the payables refs name and locks them until
// the unit of work ends, in one lock order (scope, then id), answered in the order of refs;
// an unknown one answers the owner's not-found sentinel, as LockPayable does. Without it each
// payable is locked by LockPayable, in the order asked.
type PayableLocker[T Tx] interface {
	LockPayables(ctx context.Context, tx T, refs []PayableRef) ([]Payable, error)
}

// PayableOutcome is one outcome of a charge batch for its owner (PayableBatchOwner): the
// locked payable P, its attempt A (applied), and what it came to (O); an outcome waiting for
// the customer (requires_action) carries the action to keep in O.CustomerAction.
type PayableOutcome struct {
	P Payable
	A *ChargeAttempt
	O *ChargeOutcome
}

// PayableBatchOwner is what an owner may add to PayableOwner so that ChargeMany writes the
// owner's side of a batch with one statement per table instead of one per charge. Each
// method does for the whole batch what its PayableOwner method does for one payable, and
// runs its statements when it is called, in the Charger's unit of work:
//
//   - BeginCharges is BeginCharge of each ps[i] with starts[i] (the payables locked, in scope
//     and id order), answering the attempt numbers in that order; a refusal of any refuses
//     the batch (the Charger then begins each charge on its own).
//   - ApplyOutcomes is ApplyOutcome (or KeepCustomerAction, for an outcome waiting for the
//     customer) of each of outs, answering each outcome's events in the order of outs.
//
// Without it the Charger calls the PayableOwner methods payable by payable.
type PayableBatchOwner[T Tx] interface {
	BeginCharges(ctx context.Context, tx T, ps []Payable, starts []ChargeStart) ([]int, error)
	ApplyOutcomes(ctx context.Context, tx T, outs []PayableOutcome) ([][]core.Event, error)
}

// CommitRefusal wraps an owner's refusal whose changes must be committed (BeginCharge): the
// Charger commits the unit of work and then answers err.
func CommitRefusal(err error) error { return &commitRefusal{err: err} }

type commitRefusal struct{ err error }

func (r *commitRefusal) Error() string { return r.err.Error() }
func (r *commitRefusal) Unwrap() error { return r.err }

// Kind is a payable kind bound to its owner and to the unit of work over the owner's Tx
// (BindKind). The Charger, the attempt sweeper and the settlement sweep reach owners only
// through it.
type Kind struct {
	spec  KindSpec
	bound kindRunner
}

// Spec returns the kind's description.
func (k Kind) Spec() KindSpec { return k.spec }

// kindRunner runs fn in a unit of work of the kind's owner, with the owner's methods bound to
// that transaction.
type kindRunner interface {
	do(ctx context.Context, fn func(ctx context.Context, tx Tx, o owner) error) error
	keptAction(p Payable) *CustomerAction
}

// owner is a PayableOwner with its transaction bound.
type owner interface {
	lock(ctx context.Context, scope core.Scope, id string) (Payable, error)
	// lockMany locks the payables refs name (given in scope and id order), answered in
	// their order: with one statement when the owner is a PayableLocker.
	lockMany(ctx context.Context, refs []PayableRef) ([]Payable, error)
	begin(ctx context.Context, p Payable, start ChargeStart) (int, error)
	// beginMany and applyOutcomes are the batch's steps: with the owner's PayableBatchOwner
	// methods when it has them, else payable by payable.
	beginMany(ctx context.Context, ps []Payable, starts []ChargeStart) ([]int, error)
	applyOutcomes(ctx context.Context, outs []PayableOutcome) ([][]core.Event, error)
	applyOutcome(ctx context.Context, p Payable, a *ChargeAttempt, o *ChargeOutcome) ([]core.Event, error)
	keepAction(ctx context.Context, p Payable, a *ChargeAttempt, act CustomerAction) error
	abandon(ctx context.Context, p Payable, a *ChargeAttempt) error
	applySettlement(ctx context.Context, p Payable, pay *Payment, at time.Time) ([]core.Event, error)
}

// BindKind binds the payable kind spec to its owner, whose writes run in units of work of
// uow. The compiler checks that the owner's Tx embeds payments.Tx.
func BindKind[T Tx](spec KindSpec, uow ports.UnitOfWorkOf[T], o PayableOwner[T]) (Kind, error) {
	if err := spec.check(); err != nil {
		return Kind{}, err
	}
	if uow == nil || o == nil {
		return Kind{}, fmt.Errorf("payments: payable kind %s: the unit of work and the owner are required", spec.Name)
	}
	return Kind{spec: spec, bound: boundKind[T]{uow: uow, o: o}}, nil
}

type boundKind[T Tx] struct {
	uow ports.UnitOfWorkOf[T]
	o   PayableOwner[T]
}

func (b boundKind[T]) do(ctx context.Context, fn func(ctx context.Context, tx Tx, o owner) error) error {
	return b.uow.Do(ctx, func(ctx context.Context, tx T) error {
		return fn(ctx, tx, boundOwner[T]{o: b.o, tx: tx})
	})
}

func (b boundKind[T]) keptAction(p Payable) *CustomerAction { return b.o.KeptAction(p) }

type boundOwner[T Tx] struct {
	o  PayableOwner[T]
	tx T
}

func (b boundOwner[T]) lock(ctx context.Context, scope core.Scope, id string) (Payable, error) {
	return b.o.LockPayable(ctx, b.tx, scope, id)
}

func (b boundOwner[T]) lockMany(ctx context.Context, refs []PayableRef) ([]Payable, error) {
	if l, ok := b.o.(PayableLocker[T]); ok {
		ps, err := l.LockPayables(ctx, b.tx, refs)
		if err == nil && len(ps) != len(refs) {
			err = fmt.Errorf("payments: %d payables locked of %d", len(ps), len(refs))
		}
		return ps, err
	}
	ps := make([]Payable, len(refs))
	for i, r := range refs {
		p, err := b.o.LockPayable(ctx, b.tx, r.Scope, r.ID)
		if err != nil {
			return nil, err
		}
		ps[i] = p
	}
	return ps, nil
}

func (b boundOwner[T]) begin(ctx context.Context, p Payable, start ChargeStart) (int, error) {
	return b.o.BeginCharge(ctx, b.tx, p, start)
}

func (b boundOwner[T]) beginMany(ctx context.Context, ps []Payable, starts []ChargeStart) ([]int, error) {
	if bo, ok := b.o.(PayableBatchOwner[T]); ok {
		ns, err := bo.BeginCharges(ctx, b.tx, ps, starts)
		if err == nil && len(ns) != len(ps) {
			err = fmt.Errorf("payments: %d charges begun of %d", len(ns), len(ps))
		}
		return ns, err
	}
	ns := make([]int, len(ps))
	for i, p := range ps {
		n, err := b.o.BeginCharge(ctx, b.tx, p, starts[i])
		if err != nil {
			return nil, err
		}
		ns[i] = n
	}
	return ns, nil
}

func (b boundOwner[T]) applyOutcomes(ctx context.Context, outs []PayableOutcome) ([][]core.Event, error) {
	if bo, ok := b.o.(PayableBatchOwner[T]); ok {
		evs, err := bo.ApplyOutcomes(ctx, b.tx, outs)
		if err == nil && len(evs) != len(outs) {
			err = fmt.Errorf("payments: events of %d outcomes for %d", len(evs), len(outs))
		}
		return evs, err
	}
	evs := make([][]core.Event, len(outs))
	for i, o := range outs {
		var err error
		if o.O.Result == ports.OutcomeRequiresAction {
			err = b.o.KeepCustomerAction(ctx, b.tx, o.P, o.A, *o.O.CustomerAction)
		} else {
			evs[i], err = b.o.ApplyOutcome(ctx, b.tx, o.P, o.A, o.O)
		}
		if err != nil {
			return nil, err
		}
	}
	return evs, nil
}

func (b boundOwner[T]) applyOutcome(ctx context.Context, p Payable, a *ChargeAttempt, o *ChargeOutcome) ([]core.Event, error) {
	return b.o.ApplyOutcome(ctx, b.tx, p, a, o)
}

func (b boundOwner[T]) keepAction(ctx context.Context, p Payable, a *ChargeAttempt, act CustomerAction) error {
	return b.o.KeepCustomerAction(ctx, b.tx, p, a, act)
}

func (b boundOwner[T]) abandon(ctx context.Context, p Payable, a *ChargeAttempt) error {
	return b.o.AbandonCharge(ctx, b.tx, p, a)
}

func (b boundOwner[T]) applySettlement(ctx context.Context, p Payable, pay *Payment, at time.Time) ([]core.Event, error) {
	return b.o.ApplySettlement(ctx, b.tx, p, pay, at)
}

// kinds is the registry of bound payable kinds.
type kinds map[PayableKind]Kind

func newKinds(ks []Kind) (kinds, error) {
	out := make(kinds, len(ks))
	for _, k := range ks {
		if k.bound == nil {
			return nil, errors.New("payments: a payable kind must be bound (BindKind)")
		}
		if _, dup := out[k.spec.Name]; dup {
			return nil, fmt.Errorf("payments: payable kind %s is registered twice", k.spec.Name)
		}
		out[k.spec.Name] = k
	}
	if len(out) == 0 {
		return nil, errors.New("payments: at least one payable kind is required")
	}
	return out, nil
}

func (ks kinds) of(name PayableKind) (Kind, error) {
	k, ok := ks[name]
	if !ok {
		return Kind{}, fmt.Errorf("payments: no owner for payables of kind %q", name)
	}
	return k, nil
}
