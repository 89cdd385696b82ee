package checkout

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/ports"
)

// Event types written by completion and cancellation: references into the event catalog
// (core.EventCatalog).
const (
	EventCompleted             = core.EventCheckoutSessionCompleted
	EventAsyncPaymentPending   = core.EventCheckoutSessionAsyncPaymentPending
	EventAsyncPaymentSucceeded = core.EventCheckoutSessionAsyncPaymentSucceeded
	EventAsyncPaymentFailed    = core.EventCheckoutSessionAsyncPaymentFailed
	EventCanceled              = core.EventCheckoutSessionCanceled
	EventPaymentIntentCanceled = core.EventPaymentIntentCanceled
)

// Kind is the payable kind of checkout sessions: a session has at most one payment, which
// names it in session_id.
var Kind = payments.KindSpec{Name: "checkout_session", Link: payments.LinkSession, Payments: payments.OnePaymentPerPayable}

// BindPayableKind binds checkout sessions, as a payable kind, to their owner (Payables) and to
// checkout's unit of work: the kind payments.NewCharger needs for the charges of sessions.
func BindPayableKind(uow ports.UnitOfWorkOf[Tx]) (payments.Kind, error) {
	return payments.BindKind[Tx](Kind, uow, Payables{})
}

// Payables is what a checkout session does with each step of the charge protocol of payments
// (payments.PayableOwner): every method runs inside the Charger's unit of work, on the session
// locked first.
//
//	begin        → the session must be open (a due one is expired with its event, and the
//	               charge refused), not already charging, under the decline limit; a new
//	               charge forgets a charge left waiting for 3-D Secure; the attempt is counted
//	               and marked in flight (the session then neither expires nor is canceled)
//	succeeded    → the session completes with the payment: checkout.session.completed
//	processing   → the session completes with the processing payment (SEPA):
//	               checkout.session.completed, then checkout.session.async_payment_pending
//	failed       → the decline is counted; the session stays open
//	requires_action → the charge waiting for 3-D Secure is kept on the session
//	abandoned    → the charge in flight ends; the session is free for a new one
//	settlement   → checkout.session.async_payment_succeeded or …_failed, with the session
//	               carrying its settled payment
type Payables struct{}

var _ payments.PayableOwner[Tx] = Payables{}

// LockPayable locks the session (ErrNotFound when it does not exist).
func (Payables) LockPayable(ctx context.Context, tx Tx, scope core.Scope, id string) (payments.Payable, error) {
	return tx.Sessions().Lock(ctx, scope, id)
}

func sessionOf(p payments.Payable) (*Session, error) {
	s, ok := p.(*Session)
	if !ok {
		return nil, fmt.Errorf("checkout: payable %s is not a session", p.ID())
	}
	return s, nil
}

// BeginCharge checks the locked session and marks the attempt in flight.
func (Payables) BeginCharge(ctx context.Context, tx Tx, p payments.Payable, start payments.ChargeStart) (int, error) {
	s, err := sessionOf(p)
	if err != nil {
		return 0, err
	}
	if s.buyer.Charging != "" {
		return 0, payments.ErrChargeInProgress
	}
	lapsed, err := lockedOpen(ctx, tx, s, start.Now)
	if lapsed {
		if err != nil {
			return 0, err
		}
		return 0, payments.CommitRefusal(ErrSessionExpired)
	}
	if err != nil {
		return 0, err
	}
	if s.buyer.Declines >= MaxDeclines {
		return 0, ErrConfirmLimit
	}
	if start.Kind == payments.AttemptCharge {
		// A new charge abandons one left waiting for 3-D Secure: the buyer gave up on it
		// (closed the challenge, chose another card). Nothing moved for it: it is canceled.
		if ev := s.abandonPending(start.Now); ev != nil {
			if err := tx.Outbox().Add(ctx, *ev); err != nil {
				return 0, err
			}
		}
	}
	n := s.nextAttempt()
	s.startCharging(payments.AttemptKey(s.ID(), n))
	return n, tx.Sessions().Save(ctx, s)
}

// KeptAction is the charge of the session waiting for 3-D Secure.
func (Payables) KeptAction(p payments.Payable) *payments.CustomerAction {
	s, ok := p.(*Session)
	if !ok || s.buyer.Pending == nil {
		return nil
	}
	pc := s.buyer.clone().Pending
	return &payments.CustomerAction{ProcessorRef: pc.ProcessorRef, Method: pc.Method, Card: pc.Card,
		Action: ports.ChargeAction{Kind: pc.Action.Kind, RedirectURL: pc.Action.RedirectURL}}
}

// ApplyOutcome completes the session (succeeded, processing) or counts the decline (failed).
func (Payables) ApplyOutcome(ctx context.Context, tx Tx, p payments.Payable, a *payments.ChargeAttempt, o *payments.ChargeOutcome) ([]core.Event, error) {
	s, err := stopCharging(p, a)
	if err != nil {
		return nil, err
	}
	now := a.ChargedAt()
	var evs []core.Event
	switch o.Result {
	case ports.OutcomeSucceeded, ports.OutcomeProcessing:
		pay := o.Payment.Payment
		s.clearPending()
		if err := s.complete(pay, now); err != nil {
			return nil, err
		}
		evs = append(evs, core.NewEvent(EventCompleted, s.Scope(), now, SessionEvent{Session: s}))
		if pay.Status() == payments.StatusProcessing {
			evs = append(evs, core.NewEvent(EventAsyncPaymentPending, s.Scope(), now, SessionEvent{Session: s}))
		}
	case ports.OutcomeFailed:
		s.recordDecline()
	default:
		return nil, fmt.Errorf("checkout: %s: unexpected charge outcome %q", s.ID(), o.Result)
	}
	return evs, tx.Sessions().Save(ctx, s)
}

// KeepCustomerAction keeps the charge waiting for 3-D Secure on the session.
func (Payables) KeepCustomerAction(ctx context.Context, tx Tx, p payments.Payable, a *payments.ChargeAttempt, act payments.CustomerAction) error {
	s, err := stopCharging(p, a)
	if err != nil {
		return err
	}
	s.setPending(PendingCharge{ProcessorRef: act.ProcessorRef, Method: act.Method, Card: act.Card,
		Action: PendingAction{Kind: act.Action.Kind, RedirectURL: act.Action.RedirectURL}})
	return tx.Sessions().Save(ctx, s)
}

// AbandonCharge ends the charge in flight that the processor never received.
func (Payables) AbandonCharge(ctx context.Context, tx Tx, p payments.Payable, a *payments.ChargeAttempt) error {
	s, err := sessionOf(p)
	if err != nil {
		return err
	}
	if s.buyer.Charging == a.IdempotencyKey() {
		s.stopCharging()
	}
	return tx.Sessions().Save(ctx, s)
}

// ApplySettlement reports the settlement of the session's delayed payment pay:
// checkout.session.async_payment_succeeded or …_failed, the session carrying pay (D6).
func (Payables) ApplySettlement(_ context.Context, _ Tx, p payments.Payable, pay *payments.Payment, at time.Time) ([]core.Event, error) {
	s, err := sessionOf(p)
	if err != nil {
		return nil, err
	}
	if sid := pay.SessionID(); sid == nil || *sid != s.ID() {
		return nil, fmt.Errorf("checkout: session %s: the payment belongs to another session", s.ID())
	}
	typ := EventAsyncPaymentSucceeded
	switch pay.Status() {
	case payments.StatusSucceeded:
	case payments.StatusFailed:
		typ = EventAsyncPaymentFailed
	default:
		return nil, fmt.Errorf("checkout: session %s: payment %s is %s, not settled", s.ID(), pay.ID(), pay.Status())
	}
	snap := s.Snapshot()
	snap.Payment = pay
	return []core.Event{core.NewEvent(typ, s.Scope(), at, SessionEvent{Session: RehydrateSession(snap)})}, nil
}

// stopCharging ends the charge in flight of attempt a on the locked session p; an attempt that
// is not the one in flight is a bug.
func stopCharging(p payments.Payable, a *payments.ChargeAttempt) (*Session, error) {
	s, err := sessionOf(p)
	if err != nil {
		return nil, err
	}
	if s.buyer.Charging != a.IdempotencyKey() {
		return nil, fmt.Errorf("checkout: %s: attempt %s is not the charge in flight (%q)", s.ID(), a.IdempotencyKey(), s.buyer.Charging)
	}
	s.stopCharging()
	return s, nil
}

// errNotASession guards the type of what the charger hands back.
var errNotASession = errors.New("checkout: the charge's payable is not a session")
