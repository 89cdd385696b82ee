package checkout

import (
	"context"
	"errors"

	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/ports"
)

// ResolveAction reports the buyer's answer to the 3-D Secure challenge of the session's
// pending charge (the sandbox's simulated challenge page: "Complete" approves, "Fail"
// refuses). It runs in Confirm's three steps: an attempt of kind action is recorded in flight
// under the row lock, the processor finishes the charge (CompleteAction) with no connection
// held, and the outcome is applied once: approved, the session completes as in Confirm;
// refused, the decline is recorded (payment_intent.payment_failed, decline_code
// authentication_failed), the pending charge is forgotten, the session stays open and
// *DeclineError is returned. A session without a pending charge answers ErrNoPendingAction;
// the secret and state checks are Confirm's.
func (svc *Service) ResolveAction(ctx context.Context, sessionID, clientSecret string, approve bool) (*ConfirmResult, error) {
	if svc.buyer == nil {
		return nil, errBuyerNotWired
	}
	if svc.charger == nil {
		return nil, errPaymentsNotWired
	}
	for {
		_, s, now, err := svc.buyerSession(ctx, sessionID, clientSecret)
		if err != nil {
			return nil, err
		}
		if s.buyer.Pending == nil && s.buyer.Charging == "" {
			return nil, ErrNoPendingAction
		}
		if _, err := svc.processorFor(ctx, s.Scope()); err != nil {
			return nil, err
		}
		var card *ports.CardInfo
		a, err := svc.beginCharge(ctx, s, now, func(ctx context.Context, tx Tx, s *Session) (*payments.ChargeAttempt, error) {
			p := s.buyer.Pending
			if p == nil { // resolved by a concurrent request
				return nil, ErrNoPendingAction
			}
			card = p.Card
			return svc.charger.BeginAction(ctx, tx, s, s.nextAttempt(), p.Method, p.ProcessorRef, approve, now)
		})
		if errors.Is(err, payments.ErrChargeInProgress) {
			if err := svc.awaitCharge(ctx, s.Scope(), s.ID()); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		res, err := svc.charger.Call(ctx, a, payments.Source{})
		if err != nil {
			return svc.chargeFailed(ctx, s, a, card, err)
		}
		return svc.answer(svc.applyOutcome(ctx, s, a, res, card))
	}
}
