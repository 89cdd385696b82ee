package billing

import (
	"context"
	"errors"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
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
// A method that asks for 3-D Secure answers the first payment with its Action.
func (s *Service) ConfirmForCheckout(ctx context.Context, scope core.Scope, subID string, in MethodInput) (*FirstPayment, error) {
	return s.forCheckout(ctx, scope, subID, func(piID, secret string) (*FirstPayment, error) {
		return s.ConfirmFirstPayment(ctx, piID, secret, in)
	})
}

// ResolveForCheckout answers, for the checkout page that started subscription subID, what its
// first payment waits for (ResolveFirstPayment).
func (s *Service) ResolveForCheckout(ctx context.Context, scope core.Scope, subID string, approve bool) (*FirstPayment, error) {
	return s.forCheckout(ctx, scope, subID, func(piID, secret string) (*FirstPayment, error) {
		return s.ResolveFirstPayment(ctx, piID, secret, approve)
	})
}

// PendingForCheckout is the 3-D Secure step the first payment of subscription subID waits
// for, nil when none.
func (s *Service) PendingForCheckout(ctx context.Context, scope core.Scope, subID string) (*ports.ChargeAction, error) {
	sub, err := s.Subscription(ctx, scope, subID)
	if err != nil {
		return nil, err
	}
	fp, err := s.firstPayment(ctx, sub)
	if err != nil {
		return nil, err
	}
	return fp.Action, nil
}

func (s *Service) forCheckout(ctx context.Context, scope core.Scope, subID string, do func(piID, secret string) (*FirstPayment, error)) (*FirstPayment, error) {
	sub, err := s.Subscription(ctx, scope, subID)
	if err != nil {
		return nil, err
	}
	if st := sub.Status(); st == StatusActive || st == StatusTrialing {
		return &FirstPayment{Subscription: sub}, nil
	}
	snap := sub.Snapshot()
	if snap.ClientSecret == nil {
		return nil, ErrPaymentIntentState
	}
	fp, err := do(sub.PaymentIntent(), *snap.ClientSecret)
	if errors.Is(err, ErrPaymentIntentState) {
		if again, rerr := s.Subscription(ctx, scope, subID); rerr == nil && (again.Status() == StatusActive || again.Status() == StatusTrialing) {
			return &FirstPayment{Subscription: again}, nil // confirmed by a concurrent request
		}
	}
	return fp, err
}
