package payments

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// Payable is what is being paid: a checkout session today (checkout.Session implements it),
// an invoice next. Its amount, currency and payer never change once it can be paid, so the
// charge use case may read them outside the payable's lock.
type Payable interface {
	// ID is the payable's id: cs_… for a session, in_… for an invoice. It is the charge's
	// reference and the prefix of its idempotency keys.
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

// FeeComputer computes the fee of a charge (FeeCalculator implements it).
type FeeComputer interface {
	Compute(ctx context.Context, in FeeInput) (Fee, error)
}

// Charger is the charge use case of payments (issue 10 §3): it owns the charge attempt, the
// processor call, the fee lookup, the new payment and the payment_intent.* events, for whatever
// is being paid. The owner of the payable (checkout) calls it around its own two transactions:
//
//  1. In a first unit of work, with the payable locked and checked payable, Begin (or
//     BeginAction) builds the attempt and records it (Tx); it commits.
//  2. Call asks the processor while no connection is held.
//  3. Outcome turns the answer into what to write (the fee needs the FX port, so this too runs
//     before any lock), and a second unit of work applies it exactly once: LockAttempt, then
//     Apply (the payment, the attempt, the events, the receipt) beside the owner's own writes.
//
// An attempt left pending between 1 and 3 is resolved by the AttemptSweeper through Resolve.
type Charger struct {
	fees       FeeComputer
	processors map[core.Environment]ports.Processor
}

// NewCharger returns the charge use case. processors gives the processor of each environment
// (test → the sandbox); an environment without one cannot charge (Processor answers false).
func NewCharger(fees FeeComputer, processors map[core.Environment]ports.Processor) (*Charger, error) {
	if fees == nil {
		return nil, errors.New("payments: charger: the fee calculator is required")
	}
	procs := make(map[core.Environment]ports.Processor, len(processors))
	for env, p := range processors {
		if p != nil {
			procs[env] = p
		}
	}
	return &Charger{fees: fees, processors: procs}, nil
}

// Processor returns the processor of env; false when the environment has none (live, until a
// live adapter exists).
func (c *Charger) Processor(env core.Environment) (ports.Processor, bool) {
	p, ok := c.processors[env]
	return p, ok
}

// Begin builds attempt n, a new charge of p by method at the scope's time now, and records it
// pending in the caller's unit of work (tx), in which p is locked and was found payable. The
// attempt commits with that unit of work, before the processor is called (Call). A second
// pending attempt of p is refused with ErrChargeInProgress.
func (c *Charger) Begin(ctx context.Context, tx Tx, p Payable, n int, method ports.PaymentMethodKind, now time.Time) (*ChargeAttempt, error) {
	a, err := newAttempt(p, n, method, now)
	if err != nil {
		return nil, err
	}
	return a, c.record(ctx, tx, a)
}

// BeginAction builds attempt n: the buyer's answer (approve or not) to the 3-D Secure
// challenge of the charge processorRef of p, and records it as Begin does.
func (c *Charger) BeginAction(ctx context.Context, tx Tx, p Payable, n int, method ports.PaymentMethodKind, processorRef string, approve bool, now time.Time) (*ChargeAttempt, error) {
	if processorRef == "" {
		return nil, fmt.Errorf("payments: begin action of %s: no charge", p.ID())
	}
	a, err := newAttempt(p, n, method, now)
	if err != nil {
		return nil, err
	}
	a.kind, a.processorRef, a.approve = AttemptAction, processorRef, approve
	return a, c.record(ctx, tx, a)
}

func newAttempt(p Payable, n int, method ports.PaymentMethodKind, now time.Time) (*ChargeAttempt, error) {
	if n <= 0 || !method.Valid() {
		return nil, fmt.Errorf("payments: begin charge of %s: attempt %d, method %q", p.ID(), n, method)
	}
	return &ChargeAttempt{scope: p.Scope(), reference: p.ID(), number: n, kind: AttemptCharge,
		amount: p.Amount(), currency: p.Currency(), method: method, status: AttemptPending, chargedAt: now}, nil
}

func (c *Charger) record(ctx context.Context, tx Tx, a *ChargeAttempt) error {
	if err := tx.ChargeAttempts().Insert(ctx, a); err != nil {
		if errors.Is(err, ErrChargeInProgress) {
			return ErrChargeInProgress
		}
		return fmt.Errorf("payments: record attempt %s: %w", a.IdempotencyKey(), err)
	}
	return nil
}

// LockAttempt reads attempt key of the payable reference in the caller's unit of work and
// locks it until that commits; pending reports whether its outcome is still to be applied (an
// attempt applied or abandoned already is left alone: exactly once). The owner of the payable
// locks the payable first, then the attempt, always in that order.
func (c *Charger) LockAttempt(ctx context.Context, tx Tx, scope core.Scope, reference, key string) (a *ChargeAttempt, pending bool, err error) {
	a, err = tx.ChargeAttempts().Lock(ctx, scope, reference, key)
	if err != nil {
		return nil, false, err
	}
	return a, a.status == AttemptPending, nil
}

// Source is what a charge takes the money from: exactly one of Card, SEPA and
// PaymentMethodRef (a method saved by an earlier charge). It lives only for the Call.
type Source struct {
	Card             *ports.CardDetails
	SEPA             *ports.SEPADetails
	PaymentMethodRef string
	// SavePaymentMethod and OffSession are ports.ChargeRequest's.
	SavePaymentMethod, OffSession bool
}

// Call asks the processor of the attempt's environment: Charge with the attempt's idempotency
// key for a charge, CompleteAction for an action. The caller holds no connection.
func (c *Charger) Call(ctx context.Context, a *ChargeAttempt, src Source) (ports.ChargeResult, error) {
	proc, ok := c.Processor(a.scope.Env)
	if !ok {
		return ports.ChargeResult{}, fmt.Errorf("payments: no processor for %s", a.scope.Env)
	}
	if a.kind == AttemptAction {
		return proc.CompleteAction(ctx, a.processorRef, a.approve, a.chargedAt)
	}
	return proc.Charge(ctx, ports.ChargeRequest{
		Scope: a.scope, Reference: a.reference, Amount: a.amount, Currency: a.currency, Method: a.method,
		Card: src.Card, SEPA: src.SEPA, PaymentMethodRef: src.PaymentMethodRef,
		SavePaymentMethod: src.SavePaymentMethod, OffSession: src.OffSession,
		IdempotencyKey: a.IdempotencyKey(),
	}, a.chargedAt)
}

// Resolve asks the processor what became of an attempt left pending: Lookup of its idempotency
// key for a charge (ports.ErrChargeUnknown when the processor never received it), the same
// CompleteAction again for an action (the port answers it the same).
func (c *Charger) Resolve(ctx context.Context, a *ChargeAttempt, now time.Time) (ports.ChargeResult, error) {
	proc, ok := c.Processor(a.scope.Env)
	if !ok {
		return ports.ChargeResult{}, fmt.Errorf("payments: no processor for %s", a.scope.Env)
	}
	if a.kind == AttemptAction {
		return proc.CompleteAction(ctx, a.processorRef, a.approve, a.chargedAt)
	}
	return proc.Lookup(ctx, a.scope, a.IdempotencyKey(), now)
}

// Decline is a refused charge as the buyer is told: 402 card_error / card_declined with
// decline_code Code (D6); Param names the input it is about, when one is.
type Decline struct {
	Code    string
	Message string
	Param   string
}

// ChargeOutcome is what applying a processor answer writes, decided by Outcome before any lock.
type ChargeOutcome struct {
	Result       ports.ChargeOutcome
	ProcessorRef string
	Method       ports.PaymentMethodKind
	Card         *ports.CardInfo
	// Payment is the new payment of a succeeded or processing charge.
	Payment *Record
	// Mail is queued with it (MailOnCreate: the receipt of a payment that succeeded as it was
	// created).
	Mail []core.Mail
	// Decline is set for a failed charge.
	Decline *Decline
	// Action is what a requires_action charge waits for.
	Action *ports.ChargeAction
	// Events are the payment_intent.* events, stamped at the attempt's time:
	// payment_intent.succeeded (succeeded), payment_intent.payment_failed (failed),
	// payment_intent.requires_action (requires_action); none for processing.
	Events []core.Event
}

// Outcome decides what the processor's answer res to attempt a of p writes. A completing
// answer (succeeded, processing) gets its payment with the fee locked (D7: computed at the
// attempt's time from the FX port, card country deciding EEA or not) and, for cards, when its
// funds become available (FundsDelay after the charge, at once with FundsAvailableNow). card
// fills in the card when the answer has none (CompleteAction may answer without it).
func (c *Charger) Outcome(ctx context.Context, p Payable, a *ChargeAttempt, res ports.ChargeResult, card *ports.CardInfo) (*ChargeOutcome, error) {
	if p.ID() != a.reference || p.Scope() != a.scope {
		return nil, errors.New("payments: outcome: the attempt is not the payable's")
	}
	if res.Card == nil {
		res.Card = card
	}
	now := a.chargedAt
	out := &ChargeOutcome{Result: res.Outcome, ProcessorRef: res.ProcessorRef, Method: a.method, Card: res.Card}
	switch res.Outcome {
	case ports.OutcomeSucceeded, ports.OutcomeProcessing:
		rec, err := c.newPayment(ctx, p, a.method, res, now)
		if err != nil {
			return nil, err
		}
		out.Payment = rec
		out.Mail = MailOnCreate(rec.Payment) // a payment that succeeds as it is created queues its receipt
		if rec.Payment.Status() == StatusSucceeded {
			out.Events = []core.Event{core.NewEvent(EventPaymentIntentSucceeded, p.Scope(), now, PaymentEvent{Payment: rec.Payment})}
		}
	case ports.OutcomeFailed:
		code := res.DeclineCode
		if code == "" {
			code = ports.DeclineGenericDecline
		}
		msg := res.FailureMessage
		if msg == "" {
			msg = "The payment was declined."
		}
		out.Decline = &Decline{Code: code, Message: msg, Param: declineParam[code]}
		out.Events = []core.Event{core.NewEvent(EventPaymentIntentPaymentFailed, p.Scope(), now,
			chargeDeclined(p, a.method, code, res.FailureMessage, res.Card, now))}
	case ports.OutcomeRequiresAction:
		action := ports.ChargeAction{Kind: ports.ActionThreeDSecure}
		if res.Action != nil {
			action = *res.Action
		}
		if res.ProcessorRef == "" {
			return nil, fmt.Errorf("payments: outcome of %s: requires_action without a processor reference", p.ID())
		}
		out.Action = &action
		out.Events = []core.Event{core.NewEvent(EventPaymentIntentRequiresAction, p.Scope(), now,
			chargeRequiresAction(p, a.method, res.Card, action, now))}
	default:
		return nil, fmt.Errorf("payments: %s: unexpected charge outcome %q", p.ID(), res.Outcome)
	}
	return out, nil
}

// Apply writes the outcome o of attempt a (locked pending by LockAttempt) in the caller's unit
// of work, in which the payable's owner writes its own side of the outcome (the session
// completing, a decline counted): the new payment (its first write, so that a refused insert
// leaves nothing), the attempt marked applied, the payment_intent.* events in the outbox and
// the receipt in the mail queue. An attempt applied or abandoned already answers
// ErrAttemptNotPending and nothing is written.
func (c *Charger) Apply(ctx context.Context, tx Tx, a *ChargeAttempt, o *ChargeOutcome) error {
	if err := a.applied(o.Result); err != nil {
		return err
	}
	if o.Payment != nil {
		if err := tx.Payments().Insert(ctx, o.Payment); err != nil {
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

// Abandon records, in the caller's unit of work, that the processor never received attempt a
// (locked pending by LockAttempt; Resolve answered ports.ErrChargeUnknown): nothing was
// charged and nothing is applied, and the payable's owner frees the payable in the same unit
// of work. An attempt no longer pending answers ErrAttemptNotPending.
func (c *Charger) Abandon(ctx context.Context, tx Tx, a *ChargeAttempt) error {
	if err := a.abandon(); err != nil {
		return err
	}
	return tx.ChargeAttempts().Save(ctx, a)
}

// newPayment builds the payment of p (not yet stored) with its locked fee.
func (c *Charger) newPayment(ctx context.Context, p Payable, kind ports.PaymentMethodKind, res ports.ChargeResult, now time.Time) (*Record, error) {
	status := StatusSucceeded
	if res.Outcome == ports.OutcomeProcessing {
		status = StatusProcessing
	}
	switch {
	case res.ProcessorRef == "":
		return nil, errors.New("payments: charge: processor reference is missing")
	case kind == ports.MethodCard && res.Card == nil:
		return nil, errors.New("payments: charge: card details are missing")
	case kind == ports.MethodSEPADebit && res.SEPA == nil:
		return nil, errors.New("payments: charge: SEPA details are missing")
	case status == StatusProcessing && res.SettlesAt == nil:
		return nil, errors.New("payments: charge: a processing charge needs its settlement time")
	}
	method := PaymentMethod(kind)
	fi := FeeInput{Amount: p.Amount(), Currency: p.Currency(), Method: method, ChargedAt: now}
	rec := &Record{ProcessorRef: res.ProcessorRef}
	if d := res.Dispute; d != nil {
		t := d.OpensAt.UTC()
		rec.DisputeOpensAt, rec.DisputeReason = &t, d.Reason
	}
	if status == StatusProcessing {
		t := res.SettlesAt.UTC()
		rec.SettlesAt = &t
	} else {
		avail := now.Add(FundsDelay)
		if res.FundsAvailableNow {
			avail = now
		}
		rec.AvailableAt = &avail
	}
	var card *Card
	if kind == ports.MethodCard {
		ci := res.Card
		card = &Card{Brand: ci.Brand, Last4: ci.Last4, Country: ci.Country, Funding: ci.Funding}
		fi.CardCountry = ci.Country
		rec.CardExpMonth, rec.CardExpYear = ci.ExpMonth, ci.ExpYear
	} else {
		rec.SEPACountry, rec.SEPALast4 = res.SEPA.Country, res.SEPA.Last4
	}
	fee, err := c.fees.Compute(ctx, fi)
	if err != nil {
		return nil, fmt.Errorf("payments: charge of %s: %w", p.ID(), err)
	}
	params := NewPaymentParams{
		Scope: p.Scope(), Amount: p.Amount(), Currency: p.Currency(), Status: status,
		Method: method, Card: card, Fee: fee,
		Customer:  Customer{Name: p.CustomerName(), Email: p.CustomerEmail()},
		Reference: p.Reference(), Metadata: p.Metadata(), Created: now,
	}
	id := p.ID()
	if isSession(id) {
		params.SessionID = &id
	} else {
		params.InvoiceID = &id
	}
	pay, err := NewPayment(params)
	if err != nil {
		return nil, err
	}
	rec.Payment = pay
	return rec, nil
}

func isSession(id string) bool { return strings.HasPrefix(id, core.PrefixSession) }

// Failure codes of payment_intent.payment_failed (interface 6.2, D6).
const (
	// FailureCardDeclined is the failure_code of a declined card (the 402 card_error code).
	FailureCardDeclined = "card_declined"
	// FailurePaymentMethodDeclined is the failure_code of a refused SEPA debit.
	FailurePaymentMethodDeclined = "payment_method_declined"
)

// declineParam names the input a decline is about, when one is (the confirm body's fields).
var declineParam = map[string]string{
	ports.DeclineIncorrectCVC:       "card.cvc",
	ports.DeclineInvalidCVC:         "card.cvc",
	ports.DeclineIncorrectNumber:    "card.number",
	ports.DeclineExpiredCard:        "card.exp_month",
	ports.DeclineInvalidExpiryMonth: "card.exp_month",
	ports.DeclineInvalidExpiryYear:  "card.exp_year",
	ports.DeclineInvalidIBAN:        "sepa_debit.iban",
}

// payableIDs splits the payable's id into the session or invoice it is.
func payableIDs(p Payable) (sessionID, invoiceID string) {
	if isSession(p.ID()) {
		return p.ID(), ""
	}
	return "", p.ID()
}

// chargeDeclined is the subject of payment_intent.payment_failed for a declined charge of p. A
// SEPA debit carries no card.
func chargeDeclined(p Payable, method ports.PaymentMethodKind, code, message string, c *ports.CardInfo, now time.Time) ChargeDeclined {
	failure := FailureCardDeclined
	if method == ports.MethodSEPADebit {
		failure = FailurePaymentMethodDeclined
		c = nil
	}
	ev := ChargeDeclined{Amount: p.Amount(), Currency: p.Currency(), Method: method, FailureCode: failure,
		DeclineCode: code, FailureMessage: message, Card: c, At: now}
	ev.SessionID, ev.InvoiceID = payableIDs(p)
	return ev
}

// chargeRequiresAction is the subject of payment_intent.requires_action for a charge of p
// waiting on the shopper.
func chargeRequiresAction(p Payable, method ports.PaymentMethodKind, c *ports.CardInfo, a ports.ChargeAction, now time.Time) ChargeRequiresAction {
	ev := ChargeRequiresAction{Amount: p.Amount(), Currency: p.Currency(), Method: method, Card: c, Action: a, At: now}
	ev.SessionID, ev.InvoiceID = payableIDs(p)
	return ev
}
