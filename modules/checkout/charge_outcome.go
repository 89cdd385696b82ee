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
	EventCompleted           = core.EventCheckoutSessionCompleted
	EventAsyncPaymentPending = core.EventCheckoutSessionAsyncPaymentPending
	EventCanceled            = core.EventCheckoutSessionCanceled
)

// EnablePayments wires the charge use case of payments (fees, processors per environment,
// the payment_intent.* events), which Confirm and ResolveAction drive; their transactions run
// in the service's unit of work (NewService). Until it is called they answer a plain error
// (an opaque 500).
func (svc *Service) EnablePayments(charger *payments.Charger) error {
	if charger == nil {
		return errors.New("checkout: payments: the charger is required")
	}
	svc.charger = charger
	return nil
}

var _ payments.OutcomeApplier = (*Service)(nil)

var errPaymentsNotWired = errors.New("checkout: payments are not wired (EnablePayments)")

// chargeResult is what applying an attempt's outcome reports back to its use case.
type chargeResult struct {
	applied bool // false: the attempt had been applied (or abandoned) already
	status  ConfirmStatus
	action  *PendingAction
	decline *DeclineError
	session *Session
}

// applyOutcome is the second transaction of a charge: it decides what the processor's answer
// res to attempt a of s writes (the fee and payment come from payments, before any lock) and
// applies it in one unit of work, once (an attempt no longer pending is left alone):
//
//	succeeded   → the session completes with a succeeded payment: payment_intent.succeeded
//	              and checkout.session.completed
//	processing  → the session completes with a processing payment (SEPA):
//	              checkout.session.completed, then checkout.session.async_payment_pending; the
//	              settlement sweep later writes …async_payment_succeeded or …_failed (D6)
//	failed      → the decline is counted, payment_intent.payment_failed; the session stays
//	              open
//	requires_action → the charge is kept on the session as pending and
//	              payment_intent.requires_action is written; the buyer answers through
//	              ResolveAction
//
// The unit of work writes two aggregates, their events and a mail: under the session's lock
// and the attempt's, payments writes the payment, the attempt, payment_intent.* and the
// receipt (Charger.Apply), then checkout the session (Save, what Session.Changes reports) and
// its checkout.session.* events. All of it commits together or not at all; a lost commit
// leaves the attempt pending for the sweep. Every event is stamped with the attempt's time.
// card fills in the card when the answer has none (CompleteAction may answer without it).
func (svc *Service) applyOutcome(ctx context.Context, s *Session, a *payments.ChargeAttempt, res ports.ChargeResult, card *ports.CardInfo) (chargeResult, error) {
	out, err := svc.charger.Outcome(ctx, s, a, res, card)
	if err != nil {
		return chargeResult{}, fmt.Errorf("checkout: %s: %w", s.ID(), err)
	}
	scope, id, key := s.Scope(), s.ID(), a.IdempotencyKey()
	var r chargeResult
	err = svc.uow.Do(ctx, func(ctx context.Context, tx Tx) error {
		r = chargeResult{} // Do may run this again
		s, err := tx.Sessions().Lock(ctx, scope, id)
		if err != nil {
			return err
		}
		a, pending, err := svc.charger.LockAttempt(ctx, tx, scope, id, key)
		if err != nil {
			return err
		}
		r.session = s
		if !pending {
			return nil // applied (or abandoned) already: exactly once
		}
		evs, err := svc.applyToSession(s, a, out, &r)
		if err != nil {
			return err
		}
		if err := svc.charger.Apply(ctx, tx, a, out); err != nil {
			return err
		}
		if err := tx.Sessions().Save(ctx, s); err != nil {
			return err
		}
		r.applied = true
		return tx.Outbox().Add(ctx, evs...)
	})
	if err != nil {
		return chargeResult{}, err
	}
	return r, nil
}

// applyToSession changes the locked session s for the outcome out of its attempt a and returns
// the session's events, in order (they follow payments' own, out.Events).
func (svc *Service) applyToSession(s *Session, a *payments.ChargeAttempt, out *payments.ChargeOutcome, r *chargeResult) ([]core.Event, error) {
	if s.buyer.Charging != a.IdempotencyKey() {
		return nil, fmt.Errorf("checkout: %s: attempt %s is not the charge in flight (%q)", s.ID(), a.IdempotencyKey(), s.buyer.Charging)
	}
	s.stopCharging()
	now := a.ChargedAt()
	switch out.Result {
	case ports.OutcomeSucceeded, ports.OutcomeProcessing:
		p := out.Payment.Payment
		s.clearPending()
		if err := s.complete(p, now); err != nil {
			return nil, err
		}
		r.status = ConfirmSucceeded
		evs := []core.Event{core.NewEvent(EventCompleted, s.Scope(), now, SessionEvent{Session: s})}
		if p.Status() == payments.StatusProcessing {
			r.status = ConfirmProcessing
			evs = append(evs, core.NewEvent(EventAsyncPaymentPending, s.Scope(), now, SessionEvent{Session: s}))
		}
		return evs, nil
	case ports.OutcomeFailed:
		s.recordDecline()
		d := out.Decline
		r.decline = &DeclineError{DeclineCode: d.Code, Message: d.Message, Param: d.Param}
		return nil, nil
	case ports.OutcomeRequiresAction:
		action := PendingAction{Kind: out.Action.Kind, RedirectURL: out.Action.RedirectURL}
		s.setPending(PendingCharge{ProcessorRef: out.ProcessorRef, Method: out.Method, Card: out.Card, Action: action})
		r.status, r.action = ConfirmRequiresAction, &action
		return nil, nil
	}
	return nil, fmt.Errorf("checkout: %s: unexpected charge outcome %q", s.ID(), out.Result)
}

// ApplyResolved applies the outcome of an attempt the charge-attempt sweep resolved
// (payments.OutcomeApplier): exactly what the confirmation that started it would have written,
// stamped at the attempt's time. known false (the processor never received the charge)
// abandons the attempt and frees the session for a new one, writing no event, in one unit of
// work. An attempt no longer pending is left alone.
func (svc *Service) ApplyResolved(ctx context.Context, a *payments.ChargeAttempt, res ports.ChargeResult, known bool) (bool, error) {
	if svc.charger == nil {
		return false, errPaymentsNotWired
	}
	scope := a.Scope()
	if !known {
		applied := false
		err := svc.uow.Do(ctx, func(ctx context.Context, tx Tx) error {
			applied = false
			s, err := tx.Sessions().Lock(ctx, scope, a.Reference())
			if err != nil {
				return err
			}
			a, pending, err := svc.charger.LockAttempt(ctx, tx, scope, a.Reference(), a.IdempotencyKey())
			if err != nil || !pending {
				return err
			}
			if err := svc.charger.Abandon(ctx, tx, a); err != nil {
				return err
			}
			if s.buyer.Charging == a.IdempotencyKey() {
				s.stopCharging()
			}
			applied = true
			return tx.Sessions().Save(ctx, s)
		})
		return applied, err
	}
	s, err := svc.store.Get(ctx, scope, a.Reference())
	if err != nil {
		return false, err
	}
	var card *ports.CardInfo
	if p := s.buyer.Pending; p != nil && a.Kind() == payments.AttemptAction {
		card = p.Card
	}
	r, err := svc.applyOutcome(ctx, s, a, res, card)
	return r.applied, err
}

// awaitCharge waits, up to ChargeWait (svc.chargeWait), until the attempt in flight on the session ends. It
// answers payments.ErrChargeInProgress when it does not.
func (svc *Service) awaitCharge(ctx context.Context, scope core.Scope, id string) error {
	deadline := time.Now().Add(svc.chargeWait)
	for {
		s, err := svc.store.Get(ctx, scope, id)
		if err != nil {
			return err
		}
		if s.buyer.Charging == "" {
			return nil
		}
		if time.Now().After(deadline) {
			return payments.ErrChargeInProgress
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(chargePoll):
		}
	}
}

// ChargeWait is how long a confirmation waits for another charge of the same session in
// flight (a double submit, a second tab) before it answers 422 payment_in_progress. A charge
// takes milliseconds in the sandbox; one whose outcome was lost is resolved by the
// charge-attempt sweep after payments.AttemptGrace.
const ChargeWait = 10 * time.Second

const chargePoll = 20 * time.Millisecond
