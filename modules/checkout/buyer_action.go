package checkout

import (
	"context"
	"errors"
	"fmt"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
)

// ResolveAction reports the buyer's answer to the 3-D Secure challenge of the session's
// pending charge (the sandbox's simulated challenge page: "Complete" approves, "Fail"
// refuses). Under the session's row lock the processor finishes the charge: approved, the
// session completes as in Confirm; refused, the decline is recorded
// (payment_intent.payment_failed, decline_code authentication_failed), the pending charge is
// forgotten, the session stays open and *DeclineError is returned. A session without a
// pending charge answers ErrNoPendingAction; the secret and state checks are Confirm's.
func (svc *Service) ResolveAction(ctx context.Context, sessionID, clientSecret string, approve bool) (*ConfirmResult, error) {
	if svc.buyer == nil {
		return nil, errBuyerNotWired
	}
	if svc.fees == nil {
		return nil, errors.New("checkout: resolve action: payments are not wired (EnablePayments)")
	}
	_, s, now, err := svc.buyerSession(ctx, sessionID, clientSecret)
	if err != nil {
		return nil, err
	}
	if s.buyer.Pending == nil {
		return nil, ErrNoPendingAction
	}
	proc, err := svc.processorFor(ctx, s.Scope())
	if err != nil {
		return nil, err
	}
	return svc.underLock(ctx, s, now, func(s *Session, out *chargeOutcome) (*payments.Record, []core.Event, error) {
		p := s.buyer.Pending
		if p == nil { // resolved by a concurrent request
			return nil, nil, ErrNoPendingAction
		}
		res, err := proc.CompleteAction(ctx, p.ProcessorRef, approve, now)
		if err != nil {
			return nil, nil, fmt.Errorf("checkout: resolve action %s: %w", s.ID(), err)
		}
		if res.Card == nil {
			res.Card = p.Card
		}
		return svc.applyCharge(ctx, s, p.Method, res, now, out)
	})
}
