package conformance

import (
	"context"
	"testing"
	"time"

	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

// Helpers of the subscription rules that run on a frozen test clock (billing rules,
// prorations, scheduled changes, invoice rules, the customer's balance, 3-D Secure): a
// merchant on a frozen clock, dates as the API gives them (Unix seconds, UTC), the clock moved
// to one of them, a subscription made active by paying its first invoice, and one past due
// after its renewal asked for 3-D Secure.

// subFrozenOwner is a new merchant, with its dashboard owner, whose test clock is frozen; the
// case needs the checkout server (the customer's browser pays).
func subFrozenOwner(t *testing.T) *DashOwner {
	t.Helper()
	payNeedsCheckout(t)
	o := newDashOwner(t)
	clockFreeze(t, o.Test)
	return o
}

// utcUnix is the Unix time of a UTC date and hour.
func utcUnix(y int, m time.Month, d, h int) int64 {
	return time.Date(y, m, d, h, 0, 0, 0, time.UTC).Unix()
}

// clockTo moves the merchant's test clock to the Unix time at (later than its time now) and
// returns at once the clock is there.
func clockTo(t *testing.T, c *api.ClientWithResponses, at int64) int64 {
	t.Helper()
	resp, err := c.AdvanceTestClockWithResponse(context.Background(), nil, api.TestClockAdvance{To: &at})
	if err != nil {
		t.Fatal(err)
	}
	if resp.JSON200 == nil || resp.JSON200.Now != at {
		t.Fatalf("advance clock to %s: %d %s", time.Unix(at, 0).UTC(), resp.StatusCode(), resp.Body)
	}
	return at
}

// subPaidWith creates a subscription from body on m and pays its first invoice with the 4242
// card, as the customer's browser does: it is active.
func subPaidWith(t *testing.T, m *Merchant, body map[string]any) api.Subscription {
	t.Helper()
	s := subCreate(t, m, body)
	id, secret := subPI(t, s)
	if v := subConfirm(t, secret, id, payCard(payCardOK)).JSON200; v == nil || v.SubscriptionStatus != "active" {
		t.Fatal("first payment failed")
	}
	return subGet(t, m, s.Id)
}

// subPaid creates a subscription of price priceID (quantity qty) and pays its first invoice.
func subPaid(t *testing.T, m *Merchant, priceID string, qty int64) api.Subscription {
	t.Helper()
	b := subBody(priceID)
	b["quantity"] = qty
	return subPaidWith(t, m, b)
}

// subActiveAt creates a monthly subscription of unitAmount on o's merchant at the frozen
// clock's time and pays its first invoice.
func subActiveAt(t *testing.T, o *DashOwner, unitAmount int64) api.Subscription {
	t.Helper()
	return subPaidWith(t, o.Merchant, subBody(subPrice(t, o.Merchant, unitAmount, nil).Id))
}

// subUpdate sends POST /v1/subscriptions/{id} with body.
func subUpdate(t *testing.T, m *Merchant, id string, body map[string]any) Raw {
	t.Helper()
	return catPost(t, m.TestKey, "/v1/subscriptions/"+id, body)
}

// subPastDue3DS is a subscription of o's merchant (frozen clock) whose trial saved the 3-D
// Secure card (subTrial3DS) and whose renewal at the trial end declined
// authentication_required: the clock is moved there, the subscription is past due, and its
// open invoice is answered.
func subPastDue3DS(t *testing.T, o *DashOwner) (api.Subscription, *dash.Invoice) {
	t.Helper()
	s := subTrial3DS(t, o)
	clockAdvance(t, o.Test, *s.TrialEnd-s.Created)
	got := subGet(t, o.Merchant, s.Id)
	if got.Status != wire.SubscriptionStatusPastDue || got.LatestInvoice == nil {
		t.Fatalf("after the renewal at the trial end: %+v", got)
	}
	return got, subInvoice(t, o, *got.LatestInvoice)
}
