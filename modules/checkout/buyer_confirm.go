package checkout

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/ports"
)

// Confirm charges the buyer's card or bank account for an open session (the browser API's
// confirm, the hosted page's pay button). The input is validated first (400 invalid_request
// naming the field) and nothing is charged when it is bad. Then, under the session's row lock
// held across the processor call, the charge runs and its outcome is written with its events
// in that one transaction:
//
//	succeeded   → the session completes with a succeeded payment (as Complete does)
//	processing  → the session completes with a processing payment (SEPA)
//	failed      → payment_intent.payment_failed; the session stays open; *DeclineError
//	requires_action → the charge is kept on the session as pending and
//	              payment_intent.requires_action is written; the buyer answers through
//	              ResolveAction
//
// Exactly once: confirmations of one session serialise on the row lock, and every one after a
// success finds the session complete and answers ErrSessionExpired (its client secret is no
// longer valid, interface 5.2), so a double submit, two tabs or a replayed post give one
// charge, one payment and one checkout.session.completed. The processor's idempotency key is
// "<session id>:<attempt>", the attempt counted in the same transaction, so a charge whose
// outcome was never committed is retried with the same key.
//
// A session with MaxDeclines declined charges answers ErrConfirmLimit. An environment without
// a processor answers core.ErrMerchantNotReady or ErrProcessorUnavailable.
func (svc *Service) Confirm(ctx context.Context, sessionID, clientSecret string, in ConfirmInput) (*ConfirmResult, error) {
	if svc.buyer == nil {
		return nil, errBuyerNotWired
	}
	if svc.fees == nil {
		return nil, errors.New("checkout: confirm: payments are not wired (EnablePayments)")
	}
	_, s, now, err := svc.buyerSession(ctx, sessionID, clientSecret)
	if err != nil {
		return nil, err
	}
	proc, err := svc.processorFor(ctx, s.Scope())
	if err != nil {
		return nil, err
	}
	if err := validateConfirm(in, s.Currency(), now); err != nil {
		return nil, err
	}
	if s.Amount() <= 0 {
		return nil, ErrSessionNotPayable
	}
	if s.buyer.Declines >= MaxDeclines {
		return nil, ErrConfirmLimit
	}
	return svc.underLock(ctx, s, now, func(s *Session, out *chargeOutcome) (*payments.Record, []core.Event, error) {
		if s.buyer.Declines >= MaxDeclines {
			return nil, nil, ErrConfirmLimit
		}
		// A new confirmation abandons a charge left waiting for 3-D Secure: the buyer gave up
		// on it (closed the challenge, chose another card). Nothing moved for it.
		s.clearPending()
		attempt := s.nextAttempt()
		res, err := proc.Charge(ctx, ports.ChargeRequest{
			Scope: s.Scope(), Reference: s.ID(), Amount: s.Amount(), Currency: s.Currency(),
			Method: in.Method, Card: in.Card, SEPA: in.SEPA,
			IdempotencyKey: s.ID() + ":" + strconv.Itoa(attempt),
		}, now)
		if err != nil {
			return nil, nil, fmt.Errorf("checkout: confirm %s: charge: %w", s.ID(), err)
		}
		return svc.applyCharge(ctx, s, in.Method, res, now, out)
	})
}

// ErrSessionNotPayable: the session has nothing to charge (an amount of 0).
var ErrSessionNotPayable = core.NewError(core.TypeInvalidState, "session_not_payable", "",
	"This checkout session has no amount to pay.")

// chargeOutcome is what a locked buyer change reports back to its use case.
type chargeOutcome struct {
	lapsed  bool // the session had expired; its expiry was recorded instead
	status  ConfirmStatus
	action  *PendingAction
	decline *DeclineError
}

type lockedCharge func(s *Session, out *chargeOutcome) (*payments.Record, []core.Event, error)

// underLock runs fn on the locked, re-checked open session and turns what it reported into
// the use case's answer. A session that became due meanwhile is expired (with its event) and
// answers ErrSessionExpired.
func (svc *Service) underLock(ctx context.Context, s *Session, now time.Time, fn lockedCharge) (*ConfirmResult, error) {
	var out chargeOutcome
	saved, err := svc.store.UpdateWithPayment(ctx, s.Scope(), s.ID(), func(s *Session) (*payments.Record, []core.Event, error) {
		evs, err := svc.lockedOpen(s, now)
		if err != nil {
			return nil, nil, err
		}
		if evs != nil {
			out.lapsed = true
			return nil, evs, nil
		}
		return fn(s, &out)
	})
	if err != nil {
		return nil, err
	}
	switch {
	case out.lapsed:
		return nil, ErrSessionExpired
	case out.decline != nil:
		return nil, out.decline
	}
	return &ConfirmResult{Status: out.status, Session: saved, Action: out.action}, nil
}

// applyCharge records the processor's answer res on the locked session s: it returns the
// payment to insert (a completing charge) and the events, and reports the outcome in out.
func (svc *Service) applyCharge(ctx context.Context, s *Session, method ports.PaymentMethodKind, res ports.ChargeResult, now time.Time, out *chargeOutcome) (*payments.Record, []core.Event, error) {
	scope := s.Scope()
	switch res.Outcome {
	case ports.OutcomeSucceeded, ports.OutcomeProcessing:
		in := CompletionInput{Method: method, Outcome: res.Outcome, ProcessorRef: res.ProcessorRef,
			Card: res.Card, SEPA: res.SEPA, SettlesAt: res.SettlesAt, Dispute: res.Dispute}
		status, err := completionStatus(in)
		if err != nil {
			return nil, nil, err
		}
		rec, err := svc.newPayment(ctx, s, in, status, now)
		if err != nil {
			return nil, nil, err
		}
		s.clearPending()
		if err := s.Complete(rec.Payment, now); err != nil {
			return nil, nil, err
		}
		out.status = ConfirmSucceeded
		if status == payments.StatusProcessing {
			out.status = ConfirmProcessing
		}
		return rec, svc.completionEvents(s, rec.Payment, now), nil

	case ports.OutcomeFailed:
		code := res.DeclineCode
		if code == "" {
			code = ports.DeclineGenericDecline
		}
		s.recordDecline()
		ev := core.NewEvent(payments.EventPaymentIntentPaymentFailed, scope, now, chargeDeclined(s, DeclineInput{
			Method: method, DeclineCode: code, FailureMessage: res.FailureMessage, Card: res.Card, SEPA: res.SEPA,
		}, now))
		msg := res.FailureMessage
		if msg == "" {
			msg = "The payment was declined."
		}
		out.decline = &DeclineError{DeclineCode: code, Message: msg, Param: declineParam[code]}
		return nil, []core.Event{ev}, nil

	case ports.OutcomeRequiresAction:
		action := PendingAction{Kind: ports.ActionThreeDSecure}
		if res.Action != nil {
			action = PendingAction{Kind: res.Action.Kind, RedirectURL: res.Action.RedirectURL}
		}
		s.setPending(PendingCharge{ProcessorRef: res.ProcessorRef, Method: method, Card: res.Card, Action: action})
		out.status, out.action = ConfirmRequiresAction, &action
		ev := core.NewEvent(payments.EventPaymentIntentRequiresAction, scope, now, ChargeRequiresAction{
			SessionID: s.ID(), Amount: s.Amount(), Currency: s.Currency(), Method: method, Card: res.Card, Action: action, At: now,
		})
		return nil, []core.Event{ev}, nil
	}
	return nil, nil, fmt.Errorf("checkout: %s: unexpected charge outcome %q", s.ID(), res.Outcome)
}

// completionEvents are the events of a session that completed with payment p, for Confirm,
// ResolveAction and Complete alike (payment_intent.succeeded and checkout.session.completed for a succeeded
// payment, checkout.session.async_payment_pending for a processing one).
func (svc *Service) completionEvents(s *Session, p *payments.Payment, now time.Time) []core.Event {
	scope := s.Scope()
	if p.Status() == payments.StatusSucceeded {
		return []core.Event{
			core.NewEvent(payments.EventPaymentIntentSucceeded, scope, now, payments.PaymentEvent{Payment: p}),
			core.NewEvent(EventCompleted, scope, now, SessionEvent{Session: s}),
		}
	}
	return []core.Event{core.NewEvent(EventAsyncPaymentPending, scope, now, SessionEvent{Session: s})}
}

// declineParam names the input a decline is about, when one is.
var declineParam = map[string]string{
	ports.DeclineIncorrectCVC:       "card.cvc",
	ports.DeclineInvalidCVC:         "card.cvc",
	ports.DeclineIncorrectNumber:    "card.number",
	ports.DeclineExpiredCard:        "card.exp_month",
	ports.DeclineInvalidExpiryMonth: "card.exp_month",
	ports.DeclineInvalidExpiryYear:  "card.exp_year",
	ports.DeclineInvalidIBAN:        "sepa_debit.iban",
}
