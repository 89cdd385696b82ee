package billing

import (
	"context"
	"errors"

	"github.com/kassa-pay/kassa/core"
)

// StartForCheckout creates the incomplete subscription of a subscription-mode checkout
// session: the same rules, customer, first invoice and customer.subscription.created as
// POST /v1/subscriptions (the session's creation already checked the price). The trial is the
// price's trial_period_days.
func (s *Service) StartForCheckout(ctx context.Context, scope core.Scope, in CreateInput) (*Subscription, error) {
	// The session was created by a caller allowed to create it; the buyer pays it now.
	return s.CreateSubscription(ctx, core.Caller{Scope: scope, Onboarded: true}, in)
}

// ConfirmForCheckout confirms the first payment of subscription subID for the checkout page
// that started it: the checkout session, not the browser, holds the subscription, so the
// client secret is the subscription's own. A first payment already confirmed answers the
// subscription as it is (a retried confirmation after a crash completes the session only).
func (s *Service) ConfirmForCheckout(ctx context.Context, scope core.Scope, subID string, in MethodInput) (*Subscription, error) {
	sub, err := s.Subscription(ctx, scope, subID)
	if err != nil {
		return nil, err
	}
	if st := sub.Status(); st == StatusActive || st == StatusTrialing {
		return sub, nil
	}
	snap := sub.Snapshot()
	if snap.ClientSecret == nil {
		return nil, ErrPaymentIntentState
	}
	fp, err := s.ConfirmFirstPayment(ctx, sub.PaymentIntent(), *snap.ClientSecret, in)
	if errors.Is(err, ErrPaymentIntentState) {
		if again, rerr := s.Subscription(ctx, scope, subID); rerr == nil && (again.Status() == StatusActive || again.Status() == StatusTrialing) {
			return again, nil // confirmed by a concurrent request
		}
	}
	if err != nil {
		return nil, err
	}
	return fp.Subscription, nil
}
