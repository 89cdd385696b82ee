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

// Confirm charges the buyer's card or bank account for an open session (the browser API's
// confirm, the hosted page's pay button). The input is validated first (400 invalid_request
// naming the field) and nothing is charged when it is bad. Then the charge runs in three steps
// (issue 10 §2), so that no connection or row lock is held while the processor works:
//
//  1. In one unit of work under the session's row lock (beginCharge): the session is checked
//     open (a due one is expired instead, ErrSessionExpired) and below the decline limit, a
//     charge waiting for 3-D Secure is abandoned (the buyer gave up on it), and a charge attempt
//     (payments.ChargeAttempt, idempotency key "<session id>:<n>") is recorded and marked in
//     flight on the session. It commits.
//  2. The processor is called with no connection held.
//  3. The outcome is applied in a second unit of work, once per attempt
//     (applyOutcome: succeeded and processing complete the session, failed counts a decline
//     and answers *DeclineError, requires_action keeps the charge pending for ResolveAction).
//     The payment, the session, the events and the receipt commit together
//     (docs/composition.md walks through it).
//
// Confirm must not be called inside a unit of work: step 1 has to commit before step 2.
//
// Exactly once: while an attempt is in flight the session takes no other; a second
// confirmation (a double submit, two tabs, a replayed post) waits for it (up to ChargeWait,
// then 422 payment_in_progress) and then finds the session complete and answers
// ErrSessionExpired (its client secret is no longer valid, interface 5.2), so there is one
// charge, one payment and one checkout.session.completed. If step 3 never commits (a crash),
// the charge-attempt sweep (payments.AttemptSweeper) asks the processor for the attempt's key
// and applies the outcome then, so the session never stays blocked.
//
// When the processor call fails, the processor is asked at once for the attempt's key: an
// answer is applied as usual; a charge it never received is abandoned (the session is free for
// a new attempt) and the error returned; if that fails too the sweep resolves it later.
//
// A session with MaxDeclines declined charges answers ErrConfirmLimit. An environment without
// a processor answers core.ErrMerchantNotReady or ErrProcessorUnavailable.
func (svc *Service) Confirm(ctx context.Context, sessionID, clientSecret string, in ConfirmInput) (*ConfirmResult, error) {
	return svc.buyerCharge(ctx, sessionID, clientSecret, chargeSteps{
		check: func(b buyerRequest) error {
			s := b.session
			if _, err := svc.processorFor(s.Scope(), b.merchant); err != nil {
				return err
			}
			if err := validateConfirm(in, s.Currency(), b.now); err != nil {
				return err
			}
			if s.Amount() <= 0 {
				return ErrSessionNotPayable
			}
			if s.buyer.Declines >= MaxDeclines {
				return ErrConfirmLimit
			}
			return nil
		},
		start: func(ctx context.Context, tx Tx, s *Session, now time.Time) (*payments.ChargeAttempt, *ports.CardInfo, error) {
			// A new confirmation abandons a charge left waiting for 3-D Secure: the buyer gave
			// up on it (closed the challenge, chose another card). Nothing moved for it.
			s.clearPending()
			a, err := svc.charger.Begin(ctx, tx, s, s.nextAttempt(), in.Method, now)
			return a, nil, err
		},
		source: payments.Source{Card: in.Card, SEPA: in.SEPA},
	})
}

// chargeSteps are what Confirm and ResolveAction do differently within buyerCharge.
type chargeSteps struct {
	// check refuses what the use case refuses before anything is recorded, in its order,
	// looking at the authorised session as read (no lock held).
	check func(b buyerRequest) error
	// start builds and records the attempt under the session's row lock (beginCharge's
	// start), and returns the card to fill in an answer that has none (nil: none).
	start func(ctx context.Context, tx Tx, s *Session, now time.Time) (*payments.ChargeAttempt, *ports.CardInfo, error)
	// source is what the processor is called with.
	source payments.Source
}

// buyerCharge runs a buyer's charge in the three steps Confirm describes: authorise the
// buyer (buyerSession), let steps.check refuse, record the attempt (beginCharge with
// steps.start; another charge in flight is waited for and the session looked at again), call
// the processor with no connection held, and apply its outcome once (applyOutcome, or
// chargeFailed when the call fails). The answer carries the merchant read with the session.
func (svc *Service) buyerCharge(ctx context.Context, sessionID, clientSecret string, steps chargeSteps) (*ConfirmResult, error) {
	if svc.buyer == nil {
		return nil, errBuyerNotWired
	}
	if svc.charger == nil {
		return nil, errPaymentsNotWired
	}
	for {
		b, err := svc.buyerSession(ctx, sessionID, clientSecret)
		if err != nil {
			return nil, err
		}
		if err := steps.check(b); err != nil {
			return nil, err
		}
		s := b.session
		var card *ports.CardInfo
		a, err := svc.beginCharge(ctx, s, b.now, func(ctx context.Context, tx Tx, s *Session) (*payments.ChargeAttempt, error) {
			var a *payments.ChargeAttempt
			var err error
			a, card, err = steps.start(ctx, tx, s, b.now)
			return a, err
		})
		if errors.Is(err, payments.ErrChargeInProgress) {
			if err := svc.awaitCharge(ctx, s.Scope(), s.ID()); err != nil {
				return nil, err
			}
			continue // the other charge ended: look at the session again
		}
		if err != nil {
			return nil, err
		}
		var out *ConfirmResult
		if res, callErr := svc.charger.Call(ctx, a, steps.source); callErr != nil {
			out, err = svc.chargeFailed(ctx, s, a, card, callErr)
		} else {
			out, err = svc.answer(svc.applyOutcome(ctx, s, a, res, card))
		}
		if out != nil {
			out.Merchant = b.merchant
		}
		return out, err
	}
}

// ErrSessionNotPayable: the session has nothing to charge (an amount of 0).
var ErrSessionNotPayable = core.NewError(core.TypeInvalidState, "session_not_payable", "",
	"This checkout session has no amount to pay.")

// beginCharge is the first transaction of a charge, one unit of work: under the session's
// row lock it re-checks the session (a due one is expired with its event,
// ErrSessionExpired; one with a charge in flight answers payments.ErrChargeInProgress; the
// decline limit), lets start build and record the attempt (payments.Charger.Begin), and saves
// the session with the attempt in flight. It commits before the processor is called.
//
// A concurrent confirmation that recorded its attempt first makes this one answer
// payments.ErrChargeInProgress: it waits for the session's lock and then sees the charge in
// flight.
func (svc *Service) beginCharge(ctx context.Context, s *Session, now time.Time, start func(ctx context.Context, tx Tx, s *Session) (*payments.ChargeAttempt, error)) (*payments.ChargeAttempt, error) {
	var a *payments.ChargeAttempt
	lapsed := false
	scope, id := s.Scope(), s.ID()
	err := svc.uow.Do(ctx, func(ctx context.Context, tx Tx) error {
		a, lapsed = nil, false // Do may run this again
		s, err := tx.Sessions().Lock(ctx, scope, id)
		if err != nil {
			return err
		}
		if s.buyer.Charging != "" {
			return payments.ErrChargeInProgress
		}
		if lapsed, err = lockedOpen(ctx, tx, s, now); lapsed || err != nil {
			return err
		}
		if s.buyer.Declines >= MaxDeclines {
			return ErrConfirmLimit
		}
		if a, err = start(ctx, tx, s); err != nil {
			return err
		}
		s.startCharging(a.IdempotencyKey())
		return tx.Sessions().Save(ctx, s)
	})
	if err != nil {
		return nil, err
	}
	if lapsed {
		return nil, ErrSessionExpired
	}
	return a, nil
}

// chargeFailed handles a processor call that failed (callErr): the processor is asked for the
// attempt's key at once, and what it knows is applied and answered (card as for
// applyOutcome); a charge it never received is abandoned and callErr answered; if the
// processor cannot say, the attempt stays in flight for the sweep and callErr is answered.
func (svc *Service) chargeFailed(ctx context.Context, s *Session, a *payments.ChargeAttempt, card *ports.CardInfo, callErr error) (*ConfirmResult, error) {
	callErr = fmt.Errorf("checkout: charge %s: %w", s.ID(), callErr)
	res, err := svc.charger.Resolve(ctx, a, a.ChargedAt())
	known := !errors.Is(err, ports.ErrChargeUnknown)
	if err != nil && known {
		return nil, errors.Join(callErr, err)
	}
	if !known {
		if _, err := svc.ApplyResolved(ctx, a, res, false); err != nil {
			return nil, errors.Join(callErr, err)
		}
		return nil, callErr
	}
	return svc.answer(svc.applyOutcome(ctx, s, a, res, card))
}

// answer turns an applied outcome into the use case's answer. An attempt that someone else
// applied first (the sweep) is answered from the session as it now is.
func (svc *Service) answer(r chargeResult, err error) (*ConfirmResult, error) {
	if err != nil {
		return nil, err
	}
	if !r.applied {
		s := r.session
		switch {
		case s.Status() == StatusComplete:
			return &ConfirmResult{Status: confirmStatusOf(s), Session: s}, nil
		case s.buyer.Pending != nil:
			a := s.buyer.Pending.Action
			return &ConfirmResult{Status: ConfirmRequiresAction, Session: s, Action: &a}, nil
		}
		return nil, ErrSessionExpired
	}
	if r.decline != nil {
		return nil, r.decline
	}
	return &ConfirmResult{Status: r.status, Session: r.session, Action: r.action}, nil
}

func confirmStatusOf(s *Session) ConfirmStatus {
	if p := s.payment; p != nil && p.Status() == payments.StatusProcessing {
		return ConfirmProcessing
	}
	return ConfirmSucceeded
}
