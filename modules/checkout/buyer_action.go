package checkout

import (
	"context"

	"github.com/kassa-pay/kassa/modules/payments"
)

// ResolveAction reports the buyer's answer to the 3-D Secure challenge of the session's
// pending charge (the sandbox's simulated challenge page: "Complete" approves, "Fail"
// refuses). It is the charge protocol of payments, answering the customer action the session
// keeps (payments.ChargeRequest.Answer): an attempt of kind action is recorded in flight, the
// processor finishes the charge (CompleteAction) with no connection held, and the outcome is
// applied once: approved, the session completes as in Confirm; refused, the decline is
// recorded (payment_intent.payment_failed, decline_code authentication_failed), the pending
// charge is forgotten, the session stays open and *DeclineError is returned. A session
// without a pending charge answers ErrNoPendingAction; the secret and state checks are
// Confirm's. A subscription-mode session's step is its first payment's, billing's
// (Subscriptions.ResolveFirst): approved, the session completes as in Confirm.
func (svc *Service) ResolveAction(ctx context.Context, sessionID, clientSecret string, approve bool) (*ConfirmResult, error) {
	b, err := svc.buyerSession(ctx, sessionID, clientSecret)
	if err != nil {
		return nil, err
	}
	s := b.session
	if s.Mode() == ModeSubscription {
		if _, err := svc.processorFor(s.Scope(), b.merchant); err != nil {
			return nil, err
		}
		return svc.resolveSubscription(b, approve)
	}
	if s.buyer.Pending == nil && s.buyer.Charging == "" {
		return nil, ErrNoPendingAction
	}
	if _, err := svc.processorFor(s.Scope(), b.merchant); err != nil {
		return nil, err
	}
	return svc.charge(b, payments.ChargeRequest{Kind: Kind.Name, Scope: s.Scope(), PayableID: s.ID(), Now: b.now,
		Answer: &payments.ActionAnswer{Approve: approve}})
}
