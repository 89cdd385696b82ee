package checkout

import (
	"context"
	"time"

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
	return svc.buyerCharge(ctx, sessionID, clientSecret, chargeSteps{
		check: func(b buyerRequest) error {
			s := b.session
			if s.buyer.Pending == nil && s.buyer.Charging == "" {
				return ErrNoPendingAction
			}
			_, err := svc.processorFor(s.Scope(), b.merchant)
			return err
		},
		start: func(ctx context.Context, tx Tx, s *Session, now time.Time) (*payments.ChargeAttempt, *ports.CardInfo, error) {
			p := s.buyer.Pending
			if p == nil { // resolved by a concurrent request
				return nil, nil, ErrNoPendingAction
			}
			a, err := svc.charger.BeginAction(ctx, tx, s, s.nextAttempt(), p.Method, p.ProcessorRef, approve, now)
			return a, p.Card, err
		},
		source: payments.Source{},
	})
}
