package conformance

import (
	"net/http"
	"testing"

	"github.com/kassa-pay/kassa/conformance/harness"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

// subDeletePending sends DELETE /v1/subscriptions/{id}/pending_update with key.
func subDeletePending(t *testing.T, key, id string) Raw {
	t.Helper()
	return raw(t, http.MethodDelete, "/v1/subscriptions/"+id+"/pending_update", key, "", nil)
}

// invoiceLines are the amounts of the invoice's lines, in order.
func invoiceLines(inv *wire.Invoice) []int64 {
	out := make([]int64, 0, len(inv.LineItems))
	for _, l := range inv.LineItems {
		out = append(out, l.Quantity*l.UnitAmount)
	}
	return out
}

func sameInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestSubscriptionsKeptProrations(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "D14", "create_prorations keeps the credit and the charge as lines of the next renewal invoice beside the period line, billed once (leap February and a 31-day March, quantity up then down; test clock)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		m := o.Merchant
		clockTo(t, o.Test, utcUnix(2028, 1, 31, 0))
		pr := subPrice(t, m, 900, nil)
		s := subPaid(t, m, pr.Id, 1)
		if s.CurrentPeriodEnd != utcUnix(2028, 2, 29, 0) {
			t.Fatalf("Jan 31 + a month in 2028 is Feb 29: %+v", s)
		}
		// Feb 10: 19 of 29 days left. Quantity 1 → 3 of 900: credit 900 × 19/29 = 589.66 → 590,
		// charge 2700 × 19/29 = 1768.97 → 1769. Nothing is invoiced now.
		clockTo(t, o.Test, utcUnix(2028, 2, 10, 0))
		up := catDecode[api.Subscription](t, subUpdate(t, m, s.Id, map[string]any{"quantity": 3, "proration_behavior": "create_prorations"}))
		if up.Quantity != 3 || up.Amount != 2700 || *up.LatestInvoice != *s.LatestInvoice || up.CurrentPeriodEnd != s.CurrentPeriodEnd {
			t.Fatalf("after the upgrade %+v", up)
		}
		subWantEvents(t, m, s.Id, "customer.subscription.created", "customer.subscription.updated", "customer.subscription.updated")
		// Feb 29: the renewal invoice has the period (3 × 900) and both kept lines: 3879.
		clockTo(t, o.Test, utcUnix(2028, 2, 29, 0))
		r1 := subGet(t, m, s.Id)
		inv := subInvoice(t, o, *r1.LatestInvoice)
		if inv.Status != "paid" || !sameInts(invoiceLines(inv), []int64{2700, -590, 1769}) || inv.TotalAmount != 3879 {
			t.Fatalf("first renewal %s %v total %d", inv.Status, invoiceLines(inv), inv.TotalAmount)
		}
		if p := subPaymentOf(t, o, inv); p.Amount != 3879 {
			t.Fatalf("renewal payment %+v", p)
		}
		// Mar 10: the period Feb 29 → Mar 31 (re-anchored to the 31st) has 21 of 31 days left.
		// Quantity 3 → 2: credit 2700 × 21/31 = 1829.03 → 1829, charge 1800 × 21/31 = 1219.35 → 1219.
		clockTo(t, o.Test, utcUnix(2028, 3, 10, 0))
		if r1.CurrentPeriodEnd != utcUnix(2028, 3, 31, 0) {
			t.Fatalf("period after Feb 29: %+v", r1)
		}
		subUpdate(t, m, s.Id, map[string]any{"quantity": 2, "proration_behavior": "create_prorations"})
		clockTo(t, o.Test, utcUnix(2028, 3, 31, 0))
		inv = subInvoice(t, o, *subGet(t, m, s.Id).LatestInvoice)
		if inv.Status != "paid" || !sameInts(invoiceLines(inv), []int64{1800, -1829, 1219}) || inv.TotalAmount != 1190 {
			t.Fatalf("second renewal %s %v total %d", inv.Status, invoiceLines(inv), inv.TotalAmount)
		}
		// The lines were billed once: the next renewal is the period alone.
		clockTo(t, o.Test, utcUnix(2028, 4, 30, 0))
		inv = subInvoice(t, o, *subGet(t, m, s.Id).LatestInvoice)
		if inv.Status != "paid" || !sameInts(invoiceLines(inv), []int64{1800}) {
			t.Fatalf("third renewal %s %v", inv.Status, invoiceLines(inv))
		}
	})

	harness.Rule(t, "D14", "create_prorations whose kept credit exceeds the next renewal is made: the renewal bills the period alone, the kept credit goes to the customer's balance in the same transaction, the invoice takes it (paid with no charge) and the next renewal the rest (test clock)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		m := o.Merchant
		clockFreeze(t, o.Test)
		s := balWeekly(t, o, "grace@example.com", 3)
		pays := balPayments(t, o)
		// One day into the week, six of seven days remain. Quantity 3 → 1 of 1000 kept for the
		// renewal: credit 3000 × 6/7 = 2571.43 → 2571, charge 1000 × 6/7 = 857.14 → 857, net
		// −1714 against a 1000 period (it was refused with renewal_amount_invalid before).
		clockAdvance(t, o.Test, 86400)
		down := catDecode[api.Subscription](t, subUpdate(t, m, s.Id, map[string]any{"quantity": 1, "proration_behavior": "create_prorations"}))
		if down.Quantity != 1 || down.Amount != 1000 || *down.LatestInvoice != *s.LatestInvoice {
			t.Fatalf("after the downgrade %+v", down)
		}
		if b := balOf(t, o, s.Customer); b["EUR"] != 0 {
			t.Fatalf("balance before the renewal %v, want nothing yet", b)
		}
		// Day 7: the renewal invoice is the period alone (1000); the kept net −1714 goes to the
		// balance and the invoice takes 1000 of it: paid, no payment, −714 left.
		_, id := balRenewed(t, o, s, 6*86400)
		inv := subInvoice(t, o, id)
		if inv.Status != "paid" || !sameInts(invoiceLines(inv), []int64{1000}) || inv.TotalAmount != 1000 || inv.StartingBalance != -1714 ||
			inv.EndingBalance != -714 || inv.AmountPaid != 0 || inv.PaymentId != nil {
			t.Fatalf("first renewal %+v lines %v", inv, invoiceLines(inv))
		}
		if n := balPayments(t, o); n != pays {
			t.Fatalf("the renewal charged: %d payments, was %d", n, pays)
		}
		l := cbList(t, o, dashTest, s.Customer, nil)
		if l.JSON200 == nil || len(l.JSON200.Data) != 2 {
			t.Fatalf("balance transactions: %d %s", l.StatusCode(), l.Body)
		}
		if c, a := l.JSON200.Data[1], l.JSON200.Data[0]; c.Type != "proration_credit" || c.Amount != -1714 || c.Subscription == nil || *c.Subscription != s.Id ||
			a.Type != "applied_to_invoice" || a.Amount != 1000 || a.Invoice == nil || *a.Invoice != id {
			t.Fatalf("balance transactions %s", l.Body)
		}
		// Day 14: 1000 − 714 = 286 is charged, and the balance is 0.
		_, id = balRenewed(t, o, s, 7*86400)
		inv = subInvoice(t, o, id)
		if inv.Status != "paid" || !sameInts(invoiceLines(inv), []int64{1000}) || inv.StartingBalance != -714 || inv.EndingBalance != 0 || inv.AmountPaid != 286 {
			t.Fatalf("second renewal %+v", inv)
		}
		if b := balOf(t, o, s.Customer); b["EUR"] != 0 {
			t.Fatalf("balance after the second renewal %v, want EUR 0", b)
		}
	})

	harness.Rule(t, "D14", "create_prorations whose kept net leaves less than the minimum charge goes to the balance too: the renewal takes it as far as it leaves the minimum charge (test clock)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		m := o.Merchant
		clockFreeze(t, o.Test)
		s := balWeekly(t, o, "grace@example.com", 2)
		// One day in, 2 → 1: credit 2000 × 6/7 = 1714.29 → 1714, charge 857, net −857: the
		// renewal would be 143, below 250. It bills the period (1000), takes 750 of the 857 and
		// charges 250; 107 stays.
		clockAdvance(t, o.Test, 86400)
		subUpdate(t, m, s.Id, map[string]any{"quantity": 1, "proration_behavior": "create_prorations"})
		_, id := balRenewed(t, o, s, 6*86400)
		inv := subInvoice(t, o, id)
		if inv.Status != "paid" || !sameInts(invoiceLines(inv), []int64{1000}) || inv.StartingBalance != -857 || inv.EndingBalance != -107 || inv.AmountPaid != 250 {
			t.Fatalf("renewal %+v lines %v", inv, invoiceLines(inv))
		}
		if b := balOf(t, o, s.Customer); b["EUR"] != -107 {
			t.Fatalf("balance %v, want EUR -107", b)
		}
	})

	harness.Rule(t, "D14", "create_prorations is refused when the kept charge would bring the renewal above the maximum amount (renewal_amount_invalid) or when the interval changes (proration_behavior_unsupported)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		m := o.Merchant
		clockFreeze(t, o.Test)
		pr := subPrice(t, m, 9_000_000, nil)
		yearly := subPrice(t, m, 9000, &api.RecurringParams{Interval: wire.RecurringIntervalYear})
		s := subPaid(t, m, pr.Id, 10)
		// An hour in, 10 → 11 of 90,000.00 a month keeps about 9,000,000 more against a
		// 99,000,000 period: above 99,999,999.
		clockAdvance(t, o.Test, 3600)
		catWantErr(t, subUpdate(t, m, s.Id, map[string]any{"quantity": 11, "proration_behavior": "create_prorations"}),
			http.StatusBadRequest, "invalid_request", "renewal_amount_invalid", "proration_behavior")
		catWantErr(t, subUpdate(t, m, s.Id, map[string]any{"price_id": yearly.Id, "proration_behavior": "create_prorations"}),
			http.StatusBadRequest, "invalid_request", "proration_behavior_unsupported", "proration_behavior")
		if got := subGet(t, m, s.Id); got.Quantity != 10 || got.PriceId != pr.Id {
			t.Fatalf("a refused change moved the plan: %+v", got)
		}
		subWantEvents(t, m, s.Id, "customer.subscription.created", "customer.subscription.updated")
	})
}

func TestSubscriptionsScheduledChange(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "D14", "effective period_end keeps the change as pending_update, a new one replaces it, and the renewal makes it: the renewal invoice bills the new price (test clock)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		m := o.Merchant
		clockFreeze(t, o.Test)
		big := subPrice(t, m, 2000, nil)
		small := subPrice(t, m, 900, nil)
		s := subPaid(t, m, big.Id, 1)
		clockAdvance(t, o.Test, 5*86400)
		got := catDecode[api.Subscription](t, subUpdate(t, m, s.Id, map[string]any{"price_id": small.Id, "effective": "period_end"}))
		pu := got.PendingUpdate
		if got.PriceId != big.Id || got.Amount != 2000 || *got.LatestInvoice != *s.LatestInvoice || pu == nil ||
			pu.PriceId != small.Id || pu.Quantity != 1 || pu.Amount != 900 || pu.EffectiveAt != s.CurrentPeriodEnd {
			t.Fatalf("scheduled %+v %+v", got, pu)
		}
		if r := subGet(t, m, s.Id); r.PendingUpdate == nil || r.PendingUpdate.PriceId != small.Id {
			t.Fatalf("read back %+v", r.PendingUpdate)
		}
		// The same schedule again changes nothing; a new one replaces it.
		subUpdate(t, m, s.Id, map[string]any{"price_id": small.Id, "effective": "period_end", "proration_behavior": "none"})
		got = catDecode[api.Subscription](t, subUpdate(t, m, s.Id, map[string]any{"price_id": small.Id, "quantity": 2, "effective": "period_end"}))
		if got.PendingUpdate == nil || got.PendingUpdate.Quantity != 2 || got.PendingUpdate.Amount != 1800 {
			t.Fatalf("replaced %+v", got.PendingUpdate)
		}
		subWantEvents(t, m, s.Id, "customer.subscription.created", "customer.subscription.updated",
			"customer.subscription.updated", "customer.subscription.updated")
		clockAdvance(t, o.Test, s.CurrentPeriodEnd-s.CurrentPeriodStart-5*86400)
		r := subGet(t, m, s.Id)
		if r.PriceId != small.Id || r.Quantity != 2 || r.Amount != 1800 || r.PendingUpdate != nil || r.Status != wire.SubscriptionStatusActive {
			t.Fatalf("after the renewal %+v", r)
		}
		inv := subInvoice(t, o, *r.LatestInvoice)
		if inv.Status != "paid" || inv.TotalAmount != 1800 || len(inv.LineItems) != 1 || *inv.LineItems[0].PriceId != small.Id {
			t.Fatalf("renewal invoice %+v", inv)
		}
		evs := subEvents(t, m, s.Id)
		if n := len(evs); n < 6 || evs[4] != "customer.subscription.updated" {
			t.Fatalf("events %v: want the change's customer.subscription.updated with the renewal", evs)
		}
	})

	harness.Rule(t, "D14", "DELETE pending_update cancels a scheduled change (again: unchanged, no event), and a plan change made now clears it; the renewal bills the plan in force (test clock)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		m := o.Merchant
		clockFreeze(t, o.Test)
		big := subPrice(t, m, 2000, nil)
		small := subPrice(t, m, 900, nil)
		s := subPaid(t, m, big.Id, 1)
		subUpdate(t, m, s.Id, map[string]any{"price_id": small.Id, "effective": "period_end"})
		del := catDecode[api.Subscription](t, subDeletePending(t, m.TestKey, s.Id))
		if del.PendingUpdate != nil || del.PriceId != big.Id {
			t.Fatalf("after delete %+v", del)
		}
		again := subDeletePending(t, m.TestKey, s.Id)
		if again.Status != http.StatusOK {
			t.Fatalf("delete again: %d %s", again.Status, again.Body)
		}
		subWantEvents(t, m, s.Id, "customer.subscription.created", "customer.subscription.updated",
			"customer.subscription.updated", "customer.subscription.updated")
		subUpdate(t, m, s.Id, map[string]any{"price_id": small.Id, "effective": "period_end"})
		now := catDecode[api.Subscription](t, subUpdate(t, m, s.Id, map[string]any{"quantity": 2, "proration_behavior": "none"}))
		if now.PendingUpdate != nil || now.Amount != 4000 {
			t.Fatalf("a change made now kept the scheduled one: %+v", now)
		}
		clockAdvance(t, o.Test, s.CurrentPeriodEnd-s.CurrentPeriodStart)
		r := subGet(t, m, s.Id)
		if inv := subInvoice(t, o, *r.LatestInvoice); r.PriceId != big.Id || inv.TotalAmount != 4000 {
			t.Fatalf("renewal %+v total %d", r, inv.TotalAmount)
		}
	})

	harness.Rule(t, "D14", "a cancellation at the period end wins over a scheduled change and resuming it keeps the change; cancelling now drops it; while paused the change is made at the period end the pause lets pass (test clock)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		m := o.Merchant
		clockFreeze(t, o.Test)
		big := subPrice(t, m, 2000, nil)
		small := subPrice(t, m, 900, nil)
		schedule := func(id string) {
			t.Helper()
			if g := catDecode[api.Subscription](t, subUpdate(t, m, id, map[string]any{"price_id": small.Id, "effective": "period_end"})); g.PendingUpdate == nil {
				t.Fatal("not scheduled")
			}
		}
		ending := subPaid(t, m, big.Id, 1)
		schedule(ending.Id)
		catPost(t, m.TestKey, "/v1/subscriptions/"+ending.Id+"/cancel", map[string]any{"at_period_end": true})
		resumed := subPaid(t, m, big.Id, 1)
		schedule(resumed.Id)
		catPost(t, m.TestKey, "/v1/subscriptions/"+resumed.Id+"/cancel", map[string]any{"at_period_end": true})
		if g := catDecode[api.Subscription](t, subUpdate(t, m, resumed.Id, map[string]any{"cancel_at_period_end": false})); g.PendingUpdate == nil || g.CancelAtPeriodEnd {
			t.Fatalf("resuming the cancellation dropped the change: %+v", g)
		}
		now := subPaid(t, m, big.Id, 1)
		schedule(now.Id)
		if c := catDecode[api.Subscription](t, catPost(t, m.TestKey, "/v1/subscriptions/"+now.Id+"/cancel", map[string]any{"at_period_end": false})); c.Status != wire.SubscriptionStatusCanceled || c.PendingUpdate != nil {
			t.Fatalf("cancelled now %+v", c)
		}
		catWantErr(t, subDeletePending(t, m.TestKey, now.Id), http.StatusConflict, "resource_conflict", "subscription_already_canceled", "")
		paused := subPaid(t, m, big.Id, 1)
		schedule(paused.Id)
		catPost(t, m.TestKey, "/v1/subscriptions/"+paused.Id+"/pause", map[string]any{})
		clockAdvance(t, o.Test, ending.CurrentPeriodEnd-ending.CurrentPeriodStart+60)
		if e := subGet(t, m, ending.Id); e.Status != wire.SubscriptionStatusCanceled || e.PendingUpdate != nil || *e.LatestInvoice != *ending.LatestInvoice {
			t.Fatalf("cancelled at the period end %+v", e)
		}
		if r := subGet(t, m, resumed.Id); r.PriceId != small.Id || r.PendingUpdate != nil || r.Amount != 900 {
			t.Fatalf("resumed cancellation, renewed %+v", r)
		}
		if p := subGet(t, m, paused.Id); p.PriceId != small.Id || p.PendingUpdate != nil || *p.LatestInvoice != *paused.LatestInvoice {
			t.Fatalf("paused across the period end %+v", p)
		}
	})

	harness.Rule(t, "D14", "a scheduled change is refused with its param: effective unknown, period_end with always_invoice or create_prorations, nothing to change, foreign currency, quantity out of range; an incomplete subscription cannot schedule", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		m := o.Merchant
		clockFreeze(t, o.Test)
		pr := subPrice(t, m, 900, nil)
		prod := catProduct(t, m.Test, "Other")
		usd := catCreatePrice(t, m.Test, prod.Id, api.PriceCreate{Currency: "usd", UnitAmount: 900,
			Recurring: &api.RecurringParams{Interval: wire.RecurringIntervalMonth}})
		s := subPaid(t, m, pr.Id, 1)
		pe := func(kv ...any) map[string]any {
			b := map[string]any{"effective": "period_end"}
			for i := 0; i < len(kv); i += 2 {
				b[kv[i].(string)] = kv[i+1]
			}
			return b
		}
		catWantErr(t, subUpdate(t, m, s.Id, map[string]any{"quantity": 2, "effective": "later"}), http.StatusBadRequest, "invalid_request", "effective_invalid", "effective")
		catWantErr(t, subUpdate(t, m, s.Id, pe("quantity", 2, "proration_behavior", "always_invoice")), http.StatusBadRequest, "invalid_request", "proration_behavior_invalid", "proration_behavior")
		catWantErr(t, subUpdate(t, m, s.Id, pe("quantity", 2, "proration_behavior", "create_prorations")), http.StatusBadRequest, "invalid_request", "proration_behavior_invalid", "proration_behavior")
		catWantErr(t, subUpdate(t, m, s.Id, pe()), http.StatusBadRequest, "invalid_request", "parameter_missing", "price_id")
		catWantErr(t, subUpdate(t, m, s.Id, pe("price_id", usd.Id)), http.StatusBadRequest, "invalid_request", "currency_mismatch", "price_id")
		catWantErr(t, subUpdate(t, m, s.Id, pe("quantity", 10001)), http.StatusBadRequest, "invalid_request", "quantity_invalid", "quantity")
		catWantErr(t, subUpdate(t, m, s.Id, pe("price_id", "price_00000000000000000000000x")), http.StatusNotFound, "not_found", "price_not_found", "price_id")
		if got := subGet(t, m, s.Id); got.PendingUpdate != nil || got.Quantity != 1 {
			t.Fatalf("a refused schedule moved something: %+v", got)
		}
		inc := subPlain(t, o)
		catWantErr(t, subUpdate(t, m, inc.Id, pe("quantity", 2)), http.StatusConflict, "resource_conflict", "subscription_incomplete", "")
	})

	harness.Rule(t, "4.2", "another merchant's subscription is 404 to a scheduled change and to DELETE pending_update", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		other := newDashOwner(t)
		clockFreeze(t, o.Test)
		pr := subPrice(t, o.Merchant, 900, nil)
		s := subPaid(t, o.Merchant, pr.Id, 1)
		subUpdate(t, o.Merchant, s.Id, map[string]any{"quantity": 2, "effective": "period_end"})
		catWantErr(t, subUpdate(t, other.Merchant, s.Id, map[string]any{"quantity": 3, "effective": "period_end"}), http.StatusNotFound, "not_found", "subscription_not_found", "id")
		catWantErr(t, subDeletePending(t, other.Merchant.TestKey, s.Id), http.StatusNotFound, "not_found", "subscription_not_found", "id")
		catWantErr(t, subDeletePending(t, o.Merchant.LiveKey, s.Id), http.StatusNotFound, "not_found", "subscription_not_found", "id")
		if g := subGet(t, o.Merchant, s.Id); g.PendingUpdate == nil || g.PendingUpdate.Quantity != 2 {
			t.Fatalf("touched by another merchant: %+v", g.PendingUpdate)
		}
	})

	harness.Rule(t, "8", "a keyed scheduled change replays its response and schedules once", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		m := o.Merchant
		clockFreeze(t, o.Test)
		pr := subPrice(t, m, 900, nil)
		s := subPaid(t, m, pr.Id, 1)
		key := map[string]string{"Idempotency-Key": "schedule-" + m.ID}
		body := rawJSON(t, map[string]any{"quantity": 2, "effective": "period_end"})
		first := raw(t, http.MethodPost, "/v1/subscriptions/"+s.Id, m.TestKey, body, key)
		again := raw(t, http.MethodPost, "/v1/subscriptions/"+s.Id, m.TestKey, body, key)
		if first.Status != http.StatusOK || again.Status != http.StatusOK || string(first.Body) != string(again.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("first %d %s, again %d %s", first.Status, first.Body, again.Status, again.Body)
		}
		subWantEvents(t, m, s.Id, "customer.subscription.created", "customer.subscription.updated", "customer.subscription.updated")
	})
}
