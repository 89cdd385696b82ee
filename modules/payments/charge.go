package payments

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// FeeComputer computes the fee of a charge (FeeCalculator implements it).
type FeeComputer interface {
	Compute(ctx context.Context, in FeeInput) (Fee, error)
}

// AttemptStore reads charge attempts outside units of work: the one in flight on a payable
// (which a second charge waits for) and those left pending (the sweep). Attempts are written
// only inside the payable owner's units of work, through AttemptRepository.
type AttemptStore interface {
	// Pending returns the pending attempt of the payable reference of kind, or nil when none
	// is pending.
	Pending(ctx context.Context, scope core.Scope, kind PayableKind, reference string) (*ChargeAttempt, error)
	// Stale returns up to limit attempts still pending that were recorded (StartedAt, wall
	// clock) before startedBefore, oldest first. With scope nil it covers every scope.
	Stale(ctx context.Context, scope *core.Scope, startedBefore time.Time, limit int) ([]*ChargeAttempt, error)
}

// CallTimeout bounds one processor call of a charge (Charge, CompleteAction, Lookup): a call
// still unanswered then is given up, and the charge is resolved by lookup.
const CallTimeout = 20 * time.Second

// AttemptGrace is how old (wall clock, from StartedAt) a pending attempt must be before it is
// resolved by lookup instead of waited for: longer than CallTimeout plus the commit before the
// call, so that no call can still be under way for it (the process that made it died, or its
// outcome failed to commit). A confirmation that meets such an attempt resolves it at once;
// the attempt sweeper resolves the others.
const AttemptGrace = CallTimeout + 10*time.Second

// ChargeWait is how long a charge waits for another charge of the same payable in flight (a
// double submit, a second tab) before it answers ErrChargeInProgress (422
// payment_in_progress).
const ChargeWait = 10 * time.Second

const chargePoll = 20 * time.Millisecond

// ChargerDeps are what the Charger needs. Fees, Attempts, Wall and at least one Kind are
// required; an environment without a processor cannot charge (Processor answers false).
type ChargerDeps struct {
	Fees FeeComputer
	// Processors gives the processor of each environment (test → the sandbox).
	Processors map[core.Environment]ports.Processor
	Attempts   AttemptStore
	// Wall is the wall clock attempts' ages are measured on (never a test clock).
	Wall core.Clock
	// Kinds are the payable kinds, each bound to its owner (BindKind).
	Kinds []Kind
	// ChargeWait overrides ChargeWait when positive (tests).
	ChargeWait time.Duration
}

// Charger is the charge protocol of payments, for every kind of payable (Charge): it owns the
// charge attempt, the processor call, the fee, the new payment, the payment_intent.* events
// and the receipt; the payable's owner (PayableOwner) writes only its own side of each step.
// The attempt sweeper (AttemptSweeper) and the settlement sweep (Sweeper) call the same owners.
type Charger struct {
	fees       FeeComputer
	processors map[core.Environment]ports.Processor
	attempts   AttemptStore
	wall       core.Clock
	kinds      kinds
	chargeWait time.Duration
}

// NewCharger returns the charge protocol over d.
func NewCharger(d ChargerDeps) (*Charger, error) {
	if d.Fees == nil || d.Attempts == nil || d.Wall == nil {
		return nil, errors.New("payments: charger: the fee calculator, the attempt store and the wall clock are required")
	}
	ks, err := newKinds(d.Kinds)
	if err != nil {
		return nil, err
	}
	procs := make(map[core.Environment]ports.Processor, len(d.Processors))
	for env, p := range d.Processors {
		if p != nil {
			procs[env] = p
		}
	}
	wait := d.ChargeWait
	if wait <= 0 {
		wait = ChargeWait
	}
	return &Charger{fees: d.Fees, processors: procs, attempts: d.Attempts, wall: d.Wall, kinds: ks, chargeWait: wait}, nil
}

// Processor returns the processor of env; false when the environment has none (live, until a
// live adapter exists).
func (c *Charger) Processor(env core.Environment) (ports.Processor, bool) {
	p, ok := c.processors[env]
	return p, ok
}

// Source is what a charge takes the money from: exactly one of Card, SEPA and
// PaymentMethodRef (a method saved by an earlier charge). It lives only for the call.
type Source struct {
	Card             *ports.CardDetails
	SEPA             *ports.SEPADetails
	PaymentMethodRef string
	// SavePaymentMethod asks the processor for a reusable method (ports.ChargeRequest).
	SavePaymentMethod bool
	// OffSession: the customer is not present (a renewal, a dunning retry). A charge that
	// would need them (3-D Secure) fails with decline code authentication_required, and the
	// outcome says CustomerActionRequired so that the owner can ask them to pay themselves.
	OffSession bool
}

// ChargeRequest is one charge of a payable.
type ChargeRequest struct {
	Kind      PayableKind
	Scope     core.Scope
	PayableID string
	// Now is the scope's time (the test clock in test mode): the attempt's time, which its
	// outcome's events and payment are stamped with.
	Now time.Time
	// Answer, when set, answers the customer action the owner keeps (3-D Secure) instead of
	// charging anew; Method and Source are then not used.
	Answer *ActionAnswer
	Method ports.PaymentMethodKind
	Source Source
	// SavedMethod is the owner's id of a method the payer saved for this charge (a billing
	// pm_…): payments only hands it to the owner's BeginCharge, which may record it.
	SavedMethod string
}

// ActionAnswer is the customer's answer to a kept CustomerAction.
type ActionAnswer struct{ Approve bool }

// Charged is what a charge came to.
type Charged struct {
	// Payable is the payable as its owner left it in the last unit of work of the charge.
	Payable Payable
	// Attempt is the charge's attempt, as stored at the end.
	Attempt *ChargeAttempt
	// Applied reports whether this call applied the outcome; false when it had been applied
	// before (by the attempt sweeper, or a concurrent resolution): Attempt.Outcome says what it
	// was, and Payable shows it.
	Applied bool
	// Outcome is the processor's outcome of the attempt.
	Outcome ports.ChargeOutcome
	// Payment is the new payment of a succeeded or processing charge applied by this call.
	Payment *Payment
	// Decline is set for a failed charge applied by this call.
	Decline *Decline
	// Action is what a requires_action charge applied by this call waits for.
	Action *ports.ChargeAction
}

// Charge runs the whole charge protocol for req, with no transaction open between its steps
// (Charge must not be called inside a unit of work):
//
//  1. Begin, in one unit of work of the payable's owner: lock the payable, let the owner check
//     it and record the charge in flight (BeginCharge), and record the attempt (pending, its
//     idempotency key "<payable id>:<n>"). It commits before the processor is called.
//  2. A charge of the payable already in flight is waited for (up to ChargeWait, then
//     ErrChargeInProgress), and the protocol begins again; one older than AttemptGrace cannot
//     still be in a call, so it is resolved at once by lookup instead.
//  3. Call the processor (CallTimeout), with no connection held.
//  4. When the call fails, ask the processor for the attempt's key: what it knows is applied;
//     a charge it never received is abandoned (the payable freed) and the call's error
//     answered; if it cannot say, the attempt stays pending for the sweeper.
//  5. Apply the outcome exactly once, in one unit of work: lock the payable, then the attempt
//     (an attempt no longer pending is left alone: someone applied it first); write the
//     payment, the attempt, payment_intent.* and the receipt; then the owner's side
//     (ApplyOutcome, or KeepCustomerAction for a charge waiting on the customer) and its
//     events; last the payment's ledger posting (it locks the merchant's balances).
//  6. Answer what was applied (Charged).
func (c *Charger) Charge(ctx context.Context, req ChargeRequest) (*Charged, error) {
	k, err := c.kinds.of(req.Kind)
	if err != nil {
		return nil, err
	}
	if req.Answer == nil && !req.Method.Valid() {
		return nil, fmt.Errorf("payments: charge of %s: method %q", req.PayableID, req.Method)
	}
	deadline := time.Now().Add(c.chargeWait)
	for waits := 0; ; waits++ {
		a, act, err := c.begin(ctx, k, req)
		if errors.Is(err, ErrChargeInProgress) {
			if err := c.await(ctx, k, req.Scope, req.PayableID, deadline, waits > 0); err != nil {
				return nil, err
			}
			continue // the other charge ended: begin again
		}
		if err != nil {
			return nil, err
		}
		var card *ports.CardInfo
		if act != nil {
			card = act.Card
		}
		res, callErr := c.call(ctx, a, req.Source)
		if callErr != nil {
			return c.callFailed(ctx, k, a, card, callErr)
		}
		return c.apply(ctx, k, a, res, card)
	}
}

// begin is step 1: the attempt recorded and committed, with the kept customer action it
// answers (nil for a new charge).
func (c *Charger) begin(ctx context.Context, k Kind, req ChargeRequest) (*ChargeAttempt, *CustomerAction, error) {
	var a *ChargeAttempt
	var act *CustomerAction
	var refusal error
	err := k.bound.do(ctx, func(ctx context.Context, tx Tx, o owner) error {
		a, act, refusal = nil, nil, nil // Do may run this again
		p, err := o.lock(ctx, req.Scope, req.PayableID)
		if err != nil {
			return err
		}
		start := ChargeStart{Kind: AttemptCharge, Method: req.Method, OffSession: req.Source.OffSession, SavedMethod: req.SavedMethod, Now: req.Now}
		if req.Answer != nil {
			start = ChargeStart{Kind: AttemptAction, Now: req.Now}
			if act = k.bound.keptAction(p); act != nil {
				start.Method = act.Method
			}
		}
		// The owner first: a charge in flight is waited for before a missing action is refused.
		n, err := o.begin(ctx, p, start)
		var cr *commitRefusal
		if errors.As(err, &cr) {
			refusal = cr.err
			return nil // the owner's change commits; the refusal is answered after
		}
		if err != nil {
			return err
		}
		if req.Answer != nil && act == nil {
			return ErrNoCustomerAction
		}
		if a, err = newAttempt(k.spec.Name, p, n, start, c.wall.Now()); err != nil {
			return err
		}
		if act != nil {
			a.processorRef, a.approve = act.ProcessorRef, req.Answer.Approve
		}
		if err := tx.ChargeAttempts().Insert(ctx, a); err != nil {
			if errors.Is(err, ErrChargeInProgress) {
				return ErrChargeInProgress
			}
			return fmt.Errorf("payments: record attempt %s: %w", a.IdempotencyKey(), err)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if refusal != nil {
		return nil, nil, refusal
	}
	return a, act, nil
}

func newAttempt(kind PayableKind, p Payable, n int, start ChargeStart, wall time.Time) (*ChargeAttempt, error) {
	if n <= 0 || !start.Method.Valid() || start.Now.IsZero() {
		return nil, fmt.Errorf("payments: begin charge of %s: attempt %d, method %q", p.ID(), n, start.Method)
	}
	return &ChargeAttempt{scope: p.Scope(), payableKind: kind, reference: p.ID(), number: n, kind: start.Kind,
		amount: p.Amount(), currency: p.Currency(), method: start.Method, status: AttemptPending,
		offSession: start.OffSession, chargedAt: start.Now, startedAt: wall}, nil
}

// await is step 2: it waits until the payable's attempt in flight ends (nil: begin again),
// resolves it by lookup when it is older than AttemptGrace, and answers ErrChargeInProgress
// once deadline passed. again is set when the previous begin was refused too: if no attempt
// is pending (the owner reports a charge in flight without one), it pauses before the next.
func (c *Charger) await(ctx context.Context, k Kind, scope core.Scope, id string, deadline time.Time, again bool) error {
	for {
		a, err := c.attempts.Pending(ctx, scope, k.spec.Name, id)
		if err != nil {
			return err
		}
		if a == nil {
			if time.Now().After(deadline) {
				return ErrChargeInProgress
			}
			if again {
				return pause(ctx)
			}
			return nil
		}
		if c.stale(a) {
			_, err := c.resolve(ctx, k, a)
			return err
		}
		if time.Now().After(deadline) {
			return ErrChargeInProgress
		}
		if err := pause(ctx); err != nil {
			return err
		}
	}
}

// pause waits one poll interval, or until ctx ends.
func pause(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(chargePoll):
		return nil
	}
}

// stale reports whether a pending attempt is older than AttemptGrace on the wall clock.
func (c *Charger) stale(a *ChargeAttempt) bool {
	return !a.startedAt.IsZero() && c.wall.Now().Sub(a.startedAt) > AttemptGrace
}

// call is step 3: Charge with the attempt's idempotency key for a charge, CompleteAction for
// an answer to a customer action, bounded by CallTimeout.
func (c *Charger) call(ctx context.Context, a *ChargeAttempt, src Source) (ports.ChargeResult, error) {
	proc, ok := c.Processor(a.scope.Env)
	if !ok {
		return ports.ChargeResult{}, fmt.Errorf("payments: no processor for %s", a.scope.Env)
	}
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	if a.kind == AttemptAction {
		return proc.CompleteAction(ctx, a.processorRef, a.approve, a.chargedAt)
	}
	return proc.Charge(ctx, ports.ChargeRequest{
		Scope: a.scope, Reference: a.reference, Amount: a.amount, Currency: a.currency, Method: a.method,
		Card: src.Card, SEPA: src.SEPA, PaymentMethodRef: src.PaymentMethodRef,
		SavePaymentMethod: src.SavePaymentMethod, OffSession: a.offSession,
		IdempotencyKey: a.IdempotencyKey(),
	}, a.chargedAt)
}

// lookup asks the processor what became of a pending attempt: Lookup of its idempotency key
// for a charge (ports.ErrChargeUnknown when the processor never received it), the same
// CompleteAction again for an answer (the port answers it the same).
func (c *Charger) lookup(ctx context.Context, a *ChargeAttempt) (ports.ChargeResult, error) {
	proc, ok := c.Processor(a.scope.Env)
	if !ok {
		return ports.ChargeResult{}, fmt.Errorf("payments: no processor for %s", a.scope.Env)
	}
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	if a.kind == AttemptAction {
		return proc.CompleteAction(ctx, a.processorRef, a.approve, a.chargedAt)
	}
	return proc.Lookup(ctx, a.scope, a.IdempotencyKey(), c.wall.Now())
}

// callFailed is step 4.
func (c *Charger) callFailed(ctx context.Context, k Kind, a *ChargeAttempt, card *ports.CardInfo, callErr error) (*Charged, error) {
	callErr = fmt.Errorf("payments: charge %s: %w", a.IdempotencyKey(), callErr)
	res, err := c.lookup(ctx, a)
	if errors.Is(err, ports.ErrChargeUnknown) {
		if _, err := c.abandon(ctx, k, a); err != nil {
			return nil, errors.Join(callErr, err)
		}
		return nil, callErr
	}
	if err != nil {
		return nil, errors.Join(callErr, err)
	}
	return c.apply(ctx, k, a, res, card)
}

// resolve asks the processor about a pending attempt (no connection held) and applies the
// answer, or abandons the attempt when the processor never received it. done reports whether
// this call resolved it (false: it was no longer pending).
func (c *Charger) resolve(ctx context.Context, k Kind, a *ChargeAttempt) (done bool, err error) {
	res, err := c.lookup(ctx, a)
	if errors.Is(err, ports.ErrChargeUnknown) {
		return c.abandon(ctx, k, a)
	}
	if err != nil {
		return false, err
	}
	var card *ports.CardInfo
	if a.kind == AttemptAction && res.Card == nil {
		if card, err = c.keptCard(ctx, k, a); err != nil {
			return false, err
		}
	}
	r, err := c.apply(ctx, k, a, res, card)
	if err != nil {
		return false, err
	}
	return r.Applied, nil
}

// keptCard reads the card of the customer action an answer attempt a answers (the fee of its
// outcome depends on the card's country, and CompleteAction may answer without it).
func (c *Charger) keptCard(ctx context.Context, k Kind, a *ChargeAttempt) (*ports.CardInfo, error) {
	var card *ports.CardInfo
	err := k.bound.do(ctx, func(ctx context.Context, _ Tx, o owner) error {
		card = nil
		p, err := o.lock(ctx, a.scope, a.reference)
		if err != nil {
			return err
		}
		if act := k.bound.keptAction(p); act != nil && act.ProcessorRef == a.processorRef {
			card = act.Card
		}
		return nil
	})
	return card, err
}

// apply is step 5: the outcome res of attempt a, applied once in one unit of work of the
// payable's owner. card fills in the card when res has none.
func (c *Charger) apply(ctx context.Context, k Kind, a *ChargeAttempt, res ports.ChargeResult, card *ports.CardInfo) (*Charged, error) {
	pre, err := c.prepare(ctx, a, res, card) // the fee reads FX rates: before any lock
	if err != nil {
		return nil, err
	}
	var r *Charged
	err = k.bound.do(ctx, func(ctx context.Context, tx Tx, o owner) error {
		var err error
		var post *Record
		if r, post, err = c.applyIn(ctx, tx, o, k, a, pre); err != nil || post == nil {
			return err
		}
		// The ledger last: its balance rows are the merchant's, locked until the commit, so
		// every other statement of the outcome has run before another charge of the same
		// merchant must wait for them.
		return postPayment(ctx, tx, post, post.Payment.Created())
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// applyIn applies the prepared outcome pre of attempt a in the owner's unit of work tx: the
// payable and the attempt locked (an attempt no longer pending is left alone), payments' side
// written (write), then the owner's side and its events. post is the succeeded payment whose
// ledger posting the caller makes before the unit of work ends (nil: none).
func (c *Charger) applyIn(ctx context.Context, tx Tx, o owner, k Kind, a *ChargeAttempt, pre *prepared) (r *Charged, post *Record, err error) {
	p, err := o.lock(ctx, a.scope, a.reference)
	if err != nil {
		return nil, nil, err
	}
	la, err := tx.ChargeAttempts().Lock(ctx, a.scope, a.reference, a.IdempotencyKey())
	if err != nil {
		return nil, nil, err
	}
	r = &Charged{Payable: p, Attempt: la, Outcome: la.outcome}
	if la.status != AttemptPending {
		return r, nil, nil // applied (or abandoned) already: exactly once
	}
	out, err := pre.build(k.spec, p, la)
	if err != nil {
		return nil, nil, err
	}
	if err := c.write(ctx, tx, la, out); err != nil {
		return nil, nil, err
	}
	var evs []core.Event
	if out.Result == ports.OutcomeRequiresAction {
		err = o.keepAction(ctx, p, la, *out.CustomerAction)
	} else {
		evs, err = o.applyOutcome(ctx, p, la, out)
	}
	if err != nil {
		return nil, nil, err
	}
	if err := tx.Outbox().Add(ctx, evs...); err != nil {
		return nil, nil, err
	}
	r.Applied, r.Outcome, r.Decline, r.Action = true, out.Result, out.Decline, out.Action
	if out.Payment != nil {
		r.Payment = out.Payment.Payment
		if out.Payment.Payment.Status() == StatusSucceeded {
			post = out.Payment
		}
	}
	return r, post, nil
}

// write is payments' side of an applied outcome, in the owner's unit of work: the new payment
// (its first write, so that a refused insert leaves nothing), the attempt marked applied, the
// payment_intent.* events and the receipt. The payment's ledger posting comes at the end of
// the unit of work (apply).
func (c *Charger) write(ctx context.Context, tx Tx, a *ChargeAttempt, o *ChargeOutcome) error {
	if err := a.applied(o.Result, c.wall.Now()); err != nil {
		return err
	}
	if o.Payment != nil {
		if err := insertPayment(ctx, tx, o.Payment); err != nil {
			return fmt.Errorf("payments: apply %s: %w", a.IdempotencyKey(), err)
		}
	}
	if err := tx.ChargeAttempts().Save(ctx, a); err != nil {
		return fmt.Errorf("payments: apply %s: %w", a.IdempotencyKey(), err)
	}
	if err := tx.Outbox().Add(ctx, o.Events...); err != nil {
		return err
	}
	return tx.Mail().Enqueue(ctx, o.Mail...)
}

// abandon records, in one unit of work of the owner, that the processor never received
// attempt a: nothing was charged, the attempt is abandoned and the owner frees the payable.
// done is false when the attempt was no longer pending.
func (c *Charger) abandon(ctx context.Context, k Kind, a *ChargeAttempt) (done bool, err error) {
	err = k.bound.do(ctx, func(ctx context.Context, tx Tx, o owner) error {
		done = false // Do may run this again
		p, err := o.lock(ctx, a.scope, a.reference)
		if err != nil {
			return err
		}
		la, err := tx.ChargeAttempts().Lock(ctx, a.scope, a.reference, a.IdempotencyKey())
		if err != nil {
			return err
		}
		if la.status != AttemptPending {
			return nil
		}
		if err := la.abandon(c.wall.Now()); err != nil {
			return err
		}
		if err := tx.ChargeAttempts().Save(ctx, la); err != nil {
			return err
		}
		done = true
		return o.abandon(ctx, p, la)
	})
	return done, err
}

// Errors of the charge protocol.
var (
	// ErrNoCustomerAction: an answer to a customer action of a payable that keeps none.
	ErrNoCustomerAction = errors.New("payments: no customer action is kept for this payable")
)
