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

func (c *checkoutSubscriptions) ConfirmFirst(ctx context.Context, scope core.Scope, subID string, in checkout.ConfirmInput) (checkout.SubscriptionStatus, error) {
	sub, err := c.bill.ConfirmForCheckout(ctx, scope, subID, billing.MethodInput{Method: in.Method, Card: in.Card, SEPA: in.SEPA})
	var d *billing.DeclineError
	if errors.As(err, &d) {
		return "", &checkout.DeclineError{DeclineCode: d.DeclineCode, Message: d.Message, Param: d.Param}
	}
	if err != nil {
		return "", err
	}
	return checkout.SubscriptionStatus(sub.Status()), nil
}
