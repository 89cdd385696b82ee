package conformance

import (
	"net/http"
	"testing"

	"github.com/kassa-pay/kassa/conformance/harness"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

// subUpdate sends POST /v1/subscriptions/{id} with body.
func subUpdate(t *testing.T, m *Merchant, id string, body map[string]any) Raw {
	t.Helper()
	return catPost(t, m.TestKey, "/v1/subscriptions/"+id, body)
}

func TestSubscriptionsPlanChange(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "D14", "a plan change is refused with its param: unknown, one-time, archived or foreign-currency price, quantity out of 1–10,000, amount above the maximum; an incomplete subscription cannot change its plan", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		m := o.Merchant
		clockFreeze(t, o.Test)
		s := subTrialPaid(t, o, "4242424242424242")
		prod := catProduct(t, m.Test, "Other")
		once := catCreatePrice(t, m.Test, prod.Id, api.PriceCreate{Currency: "eur", UnitAmount: 900})
		archived := subPrice(t, m, 1900, nil)
		catUpdatePrice(t, m.Test, archived.Product, archived.Id, api.PriceUpdate{Active: ptr(false)})
		usd := catCreatePrice(t, m.Test, prod.Id, api.PriceCreate{Currency: "usd", UnitAmount: 900,
			Recurring: &api.RecurringParams{Interval: wire.RecurringIntervalMonth}})
		big := subPrice(t, m, 99_999_999, nil)
		none := func(kv ...any) map[string]any {
			b := map[string]any{"proration_behavior": "none"}
			for i := 0; i < len(kv); i += 2 {
				b[kv[i].(string)] = kv[i+1]
			}
			return b
		}
		catWantErr(t, subUpdate(t, m, s.Id, none("price_id", "price_00000000000000000000000x")), http.StatusNotFound, "not_found", "price_not_found", "price_id")
		catWantErr(t, subUpdate(t, m, s.Id, none("price_id", once.Id)), http.StatusBadRequest, "invalid_request", "price_not_recurring", "price_id")
		catWantErr(t, subUpdate(t, m, s.Id, none("price_id", archived.Id)), http.StatusBadRequest, "invalid_request", "price_inactive", "price_id")
		catWantErr(t, subUpdate(t, m, s.Id, none("price_id", usd.Id)), http.StatusBadRequest, "invalid_request", "currency_mismatch", "price_id")
		catWantErr(t, subUpdate(t, m, s.Id, none("quantity", 0)), http.StatusBadRequest, "invalid_request", "quantity_invalid", "quantity")
		catWantErr(t, subUpdate(t, m, s.Id, none("quantity", 10001)), http.StatusBadRequest, "invalid_request", "quantity_invalid", "quantity")
		catWantErr(t, subUpdate(t, m, s.Id, none("price_id", big.Id, "quantity", 2)), http.StatusBadRequest, "amount_too_large", "amount_above_maximum", "quantity")
		// The billed behaviours are not built: refused before anything moves.
		catWantErr(t, subUpdate(t, m, s.Id, map[string]any{"quantity": 2}), http.StatusBadRequest, "invalid_request", "proration_behavior_unsupported", "proration_behavior")
		if got := subGet(t, m, s.Id); got.Quantity != 1 || got.PriceId != s.PriceId || got.Amount != 900 {
			t.Fatalf("a refused change moved the plan: %+v", got)
		}
		inc := subPlain(t, o)
		catWantErr(t, subUpdate(t, m, inc.Id, none("quantity", 2)), http.StatusConflict, "resource_conflict", "subscription_incomplete", "")
	})

	harness.Rule(t, "D14", "proration_behavior none changes the quantity now, bills nothing, and the next renewal charges the new amount (test clock)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		m := o.Merchant
		clockFreeze(t, o.Test)
		s := subPlain(t, o)
		id, secret := subPI(t, s)
		if v := subConfirm(t, secret, id, payCard("4242424242424242")).JSON200; v == nil || v.SubscriptionStatus != "active" {
			t.Fatal("first payment failed")
		}
		active := subGet(t, m, s.Id)
		clockAdvance(t, o.Test, 10*86400)
		got := catDecode[api.Subscription](t, subUpdate(t, m, s.Id, map[string]any{"quantity": 3, "proration_behavior": "none"}))
		// 900 × 3 = 2700 from now on; the period and the latest invoice stay.
		if got.Quantity != 3 || got.Amount != 2700 || got.CurrentPeriodStart != active.CurrentPeriodStart ||
			got.CurrentPeriodEnd != active.CurrentPeriodEnd || *got.LatestInvoice != *active.LatestInvoice {
			t.Fatalf("after the change %+v", got)
		}
		subWantEvents(t, m, s.Id, "customer.subscription.created", "customer.subscription.updated", "customer.subscription.updated")
		// The same change again changes nothing and fires nothing.
		subUpdate(t, m, s.Id, map[string]any{"quantity": 3, "proration_behavior": "none"})
		subWantEvents(t, m, s.Id, "customer.subscription.created", "customer.subscription.updated", "customer.subscription.updated")
		clockAdvance(t, o.Test, active.CurrentPeriodEnd-active.Created-10*86400)
		renewed := subGet(t, m, s.Id)
		if renewed.LatestInvoice == nil || *renewed.LatestInvoice == *active.LatestInvoice {
			t.Fatalf("not renewed: %+v", renewed)
		}
		if inv := subInvoice(t, o, *renewed.LatestInvoice); inv.Status != "paid" || inv.TotalAmount != 2700 {
			t.Fatalf("renewal invoice %+v", inv)
		}
	})
}
