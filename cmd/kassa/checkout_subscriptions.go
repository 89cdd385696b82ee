package main

import (
	"context"
	"errors"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/billing"
	"github.com/kassa-pay/kassa/modules/checkout"
)

// checkoutSubscriptions adapts billing to what a subscription-mode checkout session needs
// (checkout.Subscriptions), so that checkout does not depend on billing.
type checkoutSubscriptions struct{ bill *billing.Service }

func (c *checkoutSubscriptions) Start(ctx context.Context, in checkout.SubscriptionStart) (string, error) {
	q := in.Quantity
	sub, err := c.bill.StartForCheckout(ctx, in.Scope, billing.CreateInput{PriceID: in.PriceID, CustomerName: in.CustomerName,
		CustomerEmail: in.CustomerEmail, Quantity: &q, Metadata: in.Metadata})
	if err != nil {
		return "", err
	}
	return sub.ID(), nil
}

func (c *checkoutSubscriptions) ConfirmFirst(ctx context.Context, scope core.Scope, subID string, in checkout.ConfirmInput) (checkout.FirstPayment, error) {
	fp, err := c.bill.ConfirmForCheckout(ctx, scope, subID, billing.MethodInput{Method: in.Method, Card: in.Card, SEPA: in.SEPA})
	return checkoutFirstPayment(fp, err)
}

func (c *checkoutSubscriptions) ResolveFirst(ctx context.Context, scope core.Scope, subID string, approve bool) (checkout.FirstPayment, error) {
	fp, err := c.bill.ResolveForCheckout(ctx, scope, subID, approve)
	if errors.Is(err, billing.ErrNoPendingAction) {
		return checkout.FirstPayment{}, checkout.ErrNoPendingAction
	}
	return checkoutFirstPayment(fp, err)
}

func (c *checkoutSubscriptions) PendingFirst(ctx context.Context, scope core.Scope, subID string) (*checkout.PendingAction, error) {
	a, err := c.bill.PendingForCheckout(ctx, scope, subID)
	if err != nil || a == nil {
		return nil, err
	}
	return &checkout.PendingAction{Kind: a.Kind, RedirectURL: a.RedirectURL}, nil
}

// checkoutFirstPayment is billing's answer about a first payment in checkout's words.
func checkoutFirstPayment(fp *billing.FirstPayment, err error) (checkout.FirstPayment, error) {
	var d *billing.DeclineError
	if errors.As(err, &d) {
		return checkout.FirstPayment{}, &checkout.DeclineError{DeclineCode: d.DeclineCode, Message: d.Message, Param: d.Param}
	}
	if err != nil {
		return checkout.FirstPayment{}, err
	}
	if a := fp.Action; a != nil {
		return checkout.FirstPayment{Action: &checkout.PendingAction{Kind: a.Kind, RedirectURL: a.RedirectURL}}, nil
	}
	return checkout.FirstPayment{Status: checkout.SubscriptionStatus(fp.Subscription.Status())}, nil
}
