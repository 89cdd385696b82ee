package conformance

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/conformance/harness"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

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
		active := subActiveAt(t, o, 900)
		clockAdvance(t, o.Test, 10*86400)
		got := catDecode[api.Subscription](t, subUpdate(t, m, active.Id, map[string]any{"quantity": 3, "proration_behavior": "none"}))
		// 900 × 3 = 2700 from now on; the period and the latest invoice stay.
		if got.Quantity != 3 || got.Amount != 2700 || got.CurrentPeriodStart != active.CurrentPeriodStart ||
			got.CurrentPeriodEnd != active.CurrentPeriodEnd || *got.LatestInvoice != *active.LatestInvoice {
			t.Fatalf("after the change %+v", got)
		}
		subWantEvents(t, m, active.Id, "customer.subscription.created", "customer.subscription.updated", "customer.subscription.updated")
		// The same change again changes nothing and fires nothing.
		subUpdate(t, m, active.Id, map[string]any{"quantity": 3, "proration_behavior": "none"})
		subWantEvents(t, m, active.Id, "customer.subscription.created", "customer.subscription.updated", "customer.subscription.updated")
		clockAdvance(t, o.Test, active.CurrentPeriodEnd-active.Created-10*86400)
		renewed := subGet(t, m, active.Id)
		if renewed.LatestInvoice == nil || *renewed.LatestInvoice == *active.LatestInvoice {
			t.Fatalf("not renewed: %+v", renewed)
		}
		if inv := subInvoice(t, o, *renewed.LatestInvoice); inv.Status != "paid" || inv.TotalAmount != 2700 {
			t.Fatalf("renewal invoice %+v", inv)
		}
	})

	harness.Rule(t, "D14", "always_invoice (the default) invoices the net proration by the second, rounded half-up, and charges it off-session now; a net credit makes no invoice and goes to the customer's balance (test clock)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		m := o.Merchant
		clockFreeze(t, o.Test)
		pr := subPrice(t, m, 1000, &api.RecurringParams{Interval: wire.RecurringIntervalWeek})
		active := subPaidWith(t, m, subBody(pr.Id))
		if active.CurrentPeriodEnd-active.CurrentPeriodStart != 7*86400 {
			t.Fatalf("weekly period %+v", active)
		}
		// One day in, six of seven days remain. Quantity 1 → 2 of 1000:
		// credit 1000 × 6/7 = 857.14 → 857, charge 2000 × 6/7 = 1714.29 → 1714, net 857.
		clockAdvance(t, o.Test, 86400)
		got := catDecode[api.Subscription](t, subUpdate(t, m, active.Id, map[string]any{"quantity": 2}))
		if got.Quantity != 2 || got.Amount != 2000 || got.Status != wire.SubscriptionStatusActive ||
			got.CurrentPeriodEnd != active.CurrentPeriodEnd || got.LatestInvoice == nil || *got.LatestInvoice == *active.LatestInvoice {
			t.Fatalf("after the upgrade %+v", got)
		}
		inv := subInvoice(t, o, *got.LatestInvoice)
		if inv.Status != "paid" || inv.TotalAmount != 857 || inv.Subscription == nil || *inv.Subscription != active.Id {
			t.Fatalf("proration invoice %+v", inv)
		}
		if p := subPaymentOf(t, o, inv); p.Amount != 857 || p.InvoiceId == nil || *p.InvoiceId != inv.Id {
			t.Fatalf("proration payment %+v", p)
		}
		if evs := invoiceEvents(t, o.Test, inv.Id); strings.Join(evs, ",") != "invoice.finalized,payment_intent.succeeded,invoice.payment_succeeded,invoice.paid" {
			t.Fatalf("invoice events %v", evs)
		}
		// Two days in, five remain. Quantity 2 → 1: credit 2000 × 5/7 = 1428.57 → 1429,
		// charge 1000 × 5/7 = 714.29 → 714: a net credit of 715, no invoice, no charge.
		clockAdvance(t, o.Test, 86400)
		down := catDecode[api.Subscription](t, subUpdate(t, m, active.Id, map[string]any{"quantity": 1, "proration_behavior": "always_invoice"}))
		if down.Quantity != 1 || down.Amount != 1000 || *down.LatestInvoice != inv.Id {
			t.Fatalf("after the downgrade %+v", down)
		}
		if b := balOf(t, o, active.Customer); b["EUR"] != -715 {
			t.Fatalf("balance after the downgrade %v, want EUR -715", b)
		}
	})

	harness.Rule(t, "8", "a keyed always_invoice upgrade charges once and a replay answers the same (test clock)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		m := o.Merchant
		clockFreeze(t, o.Test)
		pr := subPrice(t, m, 1000, &api.RecurringParams{Interval: wire.RecurringIntervalWeek})
		s := subPaidWith(t, m, subBody(pr.Id))
		clockAdvance(t, o.Test, 86400)
		key := map[string]string{"Idempotency-Key": "upgrade-" + m.ID}
		body := rawJSON(t, map[string]any{"quantity": 2})
		first := raw(t, http.MethodPost, "/v1/subscriptions/"+s.Id, m.TestKey, body, key)
		again := raw(t, http.MethodPost, "/v1/subscriptions/"+s.Id, m.TestKey, body, key)
		if first.Status != http.StatusOK || again.Status != http.StatusOK || string(first.Body) != string(again.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("first %d %s, again %d %s", first.Status, first.Body, again.Status, again.Body)
		}
		got := catDecode[api.Subscription](t, first)
		inv := subInvoice(t, o, *got.LatestInvoice)
		if inv.Status != "paid" || inv.TotalAmount != 857 {
			t.Fatalf("keyed proration invoice %+v", inv)
		}
	})

	harness.Rule(t, "D14", "a price of another interval restarts the period now; always_invoice charges the new period less the unused credit (test clock)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		m := o.Merchant
		clockFreeze(t, o.Test)
		weekly := subPrice(t, m, 1000, &api.RecurringParams{Interval: wire.RecurringIntervalWeek})
		yearly := subPrice(t, m, 10000, &api.RecurringParams{Interval: wire.RecurringIntervalYear})
		s := subPaidWith(t, m, subBody(weekly.Id))
		// One day in: credit 1000 × 6/7 = 857.14 → 857; charge the yearly 10000 in full; net 9143.
		// none cannot change the interval.
		now := clockAdvance(t, o.Test, 86400).Now
		catWantErr(t, subUpdate(t, m, s.Id, map[string]any{"price_id": yearly.Id, "proration_behavior": "none"}),
			http.StatusBadRequest, "invalid_request", "proration_behavior_unsupported", "proration_behavior")
		got := catDecode[api.Subscription](t, subUpdate(t, m, s.Id, map[string]any{"price_id": yearly.Id}))
		if got.PriceId != yearly.Id || got.Amount != 10000 || got.CurrentPeriodStart != now ||
			got.CurrentPeriodEnd != time.Unix(now, 0).UTC().AddDate(1, 0, 0).Unix() || got.Status != wire.SubscriptionStatusActive {
			t.Fatalf("after the interval change %+v (now %d)", got, now)
		}
		if inv := subInvoice(t, o, *got.LatestInvoice); inv.Status != "paid" || inv.TotalAmount != 9143 {
			t.Fatalf("interval change invoice %+v", inv)
		}
	})

	harness.Rule(t, "D14", "a plan change billed now waits while an invoice is being collected: 409 subscription_payment_pending; none still applies (test clock)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		m := o.Merchant
		clockFreeze(t, o.Test)
		s := subTrialPaid(t, o, "4000000000000341")
		clockAdvance(t, o.Test, *s.TrialEnd-s.Created)
		due := subGet(t, m, s.Id)
		if due.Status != wire.SubscriptionStatusPastDue {
			t.Fatalf("after the failed trial-end charge %+v", due)
		}
		catWantErr(t, subUpdate(t, m, s.Id, map[string]any{"quantity": 2}), http.StatusConflict, "resource_conflict", "subscription_payment_pending", "")
		if got := subGet(t, m, s.Id); got.Quantity != 1 || *got.LatestInvoice != *due.LatestInvoice {
			t.Fatalf("a refused change moved the plan: %+v", got)
		}
		got := catDecode[api.Subscription](t, subUpdate(t, m, s.Id, map[string]any{"quantity": 2, "proration_behavior": "none"}))
		if got.Quantity != 2 || got.Amount != 1800 || *got.LatestInvoice != *due.LatestInvoice || got.Status != wire.SubscriptionStatusPastDue {
			t.Fatalf("none while past_due %+v", got)
		}
	})
}
