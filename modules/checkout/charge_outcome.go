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
// the payment_intent.* events), which Confirm and ResolveAction drive. Until it is called they
// answer a plain error (an opaque 500).
func (svc *Service) EnablePayments(charger *payments.Charger) { svc.charger = charger }

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
// applies it under the session's row lock, once (an attempt no longer pending is left alone):
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
// Every event is stamped with the attempt's time. card fills in the card when the answer has
// none (CompleteAction may answer without it).
func (svc *Service) applyOutcome(ctx context.Context, s *Session, a *payments.ChargeAttempt, res ports.ChargeResult, card *ports.CardInfo) (chargeResult, error) {
	out, err := svc.charger.Outcome(ctx, s, a, res, card)
	if err != nil {
		return chargeResult{}, fmt.Errorf("checkout: %s: %w", s.ID(), err)
	}
	var r chargeResult
	saved, applied, err := svc.store.ApplyCharge(ctx, s.Scope(), s.ID(), a.IdempotencyKey(), func(s *Session, a *payments.ChargeAttempt) (*payments.Record, []core.Event, error) {
		if err := payments.Apply(a, out); err != nil {
			return nil, nil, err
		}
		return svc.applyToSession(s, a, out, &r)
	})
	if err != nil {
		return chargeResult{}, err
	}
	r.applied, r.session = applied, saved
	return r, nil
}

// applyToSession changes the locked session s for the outcome out of its attempt a and returns
// the payment to insert and the events, in order.
func (svc *Service) applyToSession(s *Session, a *payments.ChargeAttempt, out *payments.ChargeOutcome, r *chargeResult) (*payments.Record, []core.Event, error) {
	if s.buyer.Charging != a.IdempotencyKey() {
		return nil, nil, fmt.Errorf("checkout: %s: attempt %s is not the charge in flight (%q)", s.ID(), a.IdempotencyKey(), s.buyer.Charging)
	}
	s.stopCharging()
	now := a.ChargedAt()
	evs := out.Events
	switch out.Result {
	case ports.OutcomeSucceeded, ports.OutcomeProcessing:
		p := out.Payment.Payment
		s.clearPending()
		if err := s.complete(p, now); err != nil {
			return nil, nil, err
		}
		r.status = ConfirmSucceeded
		evs = append(evs, core.NewEvent(EventCompleted, s.Scope(), now, SessionEvent{Session: s}))
		if p.Status() == payments.StatusProcessing {
			r.status = ConfirmProcessing
			evs = append(evs, core.NewEvent(EventAsyncPaymentPending, s.Scope(), now, SessionEvent{Session: s}))
		}
		return out.Payment, evs, nil
	case ports.OutcomeFailed:
		s.recordDecline()
		d := out.Decline
		r.decline = &DeclineError{DeclineCode: d.Code, Message: d.Message, Param: d.Param}
		return nil, evs, nil
	case ports.OutcomeRequiresAction:
		action := PendingAction{Kind: out.Action.Kind, RedirectURL: out.Action.RedirectURL}
		s.setPending(PendingCharge{ProcessorRef: out.ProcessorRef, Method: out.Method, Card: out.Card, Action: action})
		r.status, r.action = ConfirmRequiresAction, &action
		return nil, evs, nil
	}
	return nil, nil, fmt.Errorf("checkout: %s: unexpected charge outcome %q", s.ID(), out.Result)
}

// ApplyResolved applies the outcome of an attempt the charge-attempt sweep resolved
// (payments.OutcomeApplier): exactly what the confirmation that started it would have written,
// stamped at the attempt's time. known false (the processor never received the charge)
// abandons the attempt and frees the session for a new one, writing no event. An attempt no
// longer pending is left alone.
func (svc *Service) ApplyResolved(ctx context.Context, a *payments.ChargeAttempt, res ports.ChargeResult, known bool) (bool, error) {
	if svc.charger == nil {
		return false, errPaymentsNotWired
	}
	scope := a.Scope()
	if !known {
		_, applied, err := svc.store.ApplyCharge(ctx, scope, a.Reference(), a.IdempotencyKey(), func(s *Session, a *payments.ChargeAttempt) (*payments.Record, []core.Event, error) {
			if err := a.Abandon(); err != nil {
				return nil, nil, err
			}
			if s.buyer.Charging == a.IdempotencyKey() {
				s.stopCharging()
			}
			return nil, nil, nil
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
