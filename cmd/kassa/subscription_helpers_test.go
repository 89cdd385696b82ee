package main

import (
	"context"
	"testing"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/billing"
	"github.com/kassa-pay/kassa/modules/catalog"
	"github.com/kassa-pay/kassa/ports"
)

// newPlan creates a product of scope with a licensed price of 9.00 EUR renewing every
// interval, with a trial of trialDays when not nil, and answers the price's id.
func newPlan(t *testing.T, a *app, scope core.Scope, interval string, trialDays *int) string {
	t.Helper()
	prod, err := a.catalog.CreateProduct(context.Background(), scope, catalog.ProductInput{Name: "Plan"}, &catalog.PriceInput{Currency: "eur",
		UnitAmount: 900, Recurring: &catalog.Recurring{Interval: interval, IntervalCount: 1, TrialPeriodDays: trialDays, UsageType: "licensed"}})
	if err != nil {
		t.Fatal(err)
	}
	return prod.DefaultPrice()
}

// subscribeWithCard subscribes a customer with e-mail email to price and confirms the first
// payment with a card that needs no authentication (a trial starts once the card is saved);
// it answers the subscription as created.
func subscribeWithCard(t *testing.T, a *app, scope core.Scope, price, email string) *billing.Subscription {
	t.Helper()
	ctx := context.Background()
	sub, err := a.billing.CreateSubscription(ctx, core.Caller{Scope: scope, Onboarded: true}, billing.CreateInput{
		PriceID: price, CustomerName: "Ada Lovelace", CustomerEmail: email})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.billing.ConfirmFirstPayment(ctx, sub.PaymentIntent(), *sub.Snapshot().ClientSecret, billing.MethodInput{
		Method: ports.MethodCard, Card: &ports.CardDetails{Number: "4242424242424242", ExpMonth: 12, ExpYear: 2031, CVC: "123"}}); err != nil {
		t.Fatal(err)
	}
	return sub
}
