package conformance

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/conformance/harness"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

// Rules of subscriptions and invoices that the audit of issue 16's test list found without a
// case of their own: calendar periods and proration figures against hand-computed values
// (month ends, a leap year, quantity up and down), the event set of each transition, the
// active subscription's cancellations, the short trial's notice, list limits and an
// uncollectible invoice paid.

func init() {
	sectionTitles["3.4"] = "subscription states"
	sectionTitles["D14"] = "subscriptions (merchant API)"
}

func TestBillingRulesPeriods(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "D14", "monthly periods add calendar months from the creation day, clamped to the month's last day and re-anchored: 31 Jan → 28 Feb → 31 Mar → 30 Apr (test clock)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		clockFreeze(t, o.Test)
		now := clockTo(t, o.Test, utcUnix(2027, time.January, 31, 10))
		s := subActiveAt(t, o, 1000)
		if s.Created != now || s.CurrentPeriodStart != now || s.CurrentPeriodEnd != utcUnix(2027, time.February, 28, 10) {
			t.Fatalf("first period %d–%d, want 31 Jan–28 Feb 2027 10:00", s.CurrentPeriodStart, s.CurrentPeriodEnd)
		}
		for _, want := range [][2]int64{
			{utcUnix(2027, time.February, 28, 10), utcUnix(2027, time.March, 31, 10)},
			{utcUnix(2027, time.March, 31, 10), utcUnix(2027, time.April, 30, 10)},
		} {
			clockTo(t, o.Test, want[0])
			got := subGet(t, o.Merchant, s.Id)
			if got.Status != wire.SubscriptionStatusActive || got.CurrentPeriodStart != want[0] || got.CurrentPeriodEnd != want[1] {
				t.Fatalf("period %d–%d, want %d–%d (%s)", got.CurrentPeriodStart, got.CurrentPeriodEnd, want[0], want[1], got.Status)
			}
			if inv := subInvoice(t, o, *got.LatestInvoice); inv.Status != "paid" || inv.TotalAmount != 1000 || inv.IssueDate == nil || *inv.IssueDate != want[0] {
				t.Fatalf("renewal invoice %+v", inv)
			}
		}
	})

	harness.Rule(t, "D14", "proration in a leap-year February (29 days) by the second, half-up: quantity 1→3 ten days in charges 1311, 3→2 twenty days in credits and bills nothing, the renewal on 29 Feb charges 2000 for 29 Feb–31 Mar (test clock)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		m := o.Merchant
		clockFreeze(t, o.Test)
		clockTo(t, o.Test, utcUnix(2028, time.January, 31, 12))
		s := subActiveAt(t, o, 1000)
		if s.CurrentPeriodEnd != utcUnix(2028, time.February, 29, 12) {
			t.Fatalf("first period ends %d, want 29 Feb 2028 12:00", s.CurrentPeriodEnd)
		}
		// The first period is 31 Jan–29 Feb, 29 days. 10 Feb 12:00: 19 of 29 days remain. Credit 1000 × 19/29 = 655.17 → 655,
		// charge 3000 × 19/29 = 1965.52 → 1966, net 1311.
		clockTo(t, o.Test, utcUnix(2028, time.February, 10, 12))
		up := catDecode[api.Subscription](t, subUpdate(t, m, s.Id, map[string]any{"quantity": 3}))
		if up.Quantity != 3 || up.Amount != 3000 || up.LatestInvoice == nil || *up.LatestInvoice == *s.LatestInvoice ||
			up.CurrentPeriodStart != s.CurrentPeriodStart || up.CurrentPeriodEnd != s.CurrentPeriodEnd {
			t.Fatalf("after the upgrade %+v", up)
		}
		inv := subInvoice(t, o, *up.LatestInvoice)
		if inv.Status != "paid" || inv.TotalAmount != 1311 || subPaymentOf(t, o, inv).Amount != 1311 {
			t.Fatalf("upgrade invoice: %s total %d, want paid 1311", inv.Status, inv.TotalAmount)
		}
		// 20 Feb 12:00: 9 of 29 days remain. Credit 3000 × 9/29 = 931.03 → 931, charge
		// 2000 × 9/29 = 620.69 → 621: a net credit of 310, so no invoice and no charge.
		clockTo(t, o.Test, utcUnix(2028, time.February, 20, 12))
		down := catDecode[api.Subscription](t, subUpdate(t, m, s.Id, map[string]any{"quantity": 2}))
		if down.Quantity != 2 || down.Amount != 2000 || *down.LatestInvoice != inv.Id {
			t.Fatalf("after the downgrade %+v", down)
		}
		// The renewal on 29 Feb charges the new amount; the next period re-anchors to the 31st.
		clockTo(t, o.Test, utcUnix(2028, time.February, 29, 12))
		got := subGet(t, m, s.Id)
		if got.CurrentPeriodStart != utcUnix(2028, time.February, 29, 12) || got.CurrentPeriodEnd != utcUnix(2028, time.March, 31, 12) ||
			got.Status != wire.SubscriptionStatusActive {
			t.Fatalf("after the renewal %+v", got)
		}
		if r := subInvoice(t, o, *got.LatestInvoice); r.Status != "paid" || r.TotalAmount != 2000 {
			t.Fatalf("renewal invoice: %s total %d, want paid 2000", r.Status, r.TotalAmount)
		}
	})
}

func TestBillingRulesSmallProration(t *testing.T) {
	t.Parallel()

	// Regression: the change was refused with 400 amount_below_minimum at param total_amount,
	// a field the request does not have, so an upgrade near a period end was impossible.
	harness.Rule(t, "D14", "an always_invoice change whose net proration is below the minimum charge is made and invoices nothing now; the net charge is carried on the customer's balance and the renewal charges the new amount with it (test clock)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		m := o.Merchant
		clockFreeze(t, o.Test)
		pr := subPrice(t, m, 1000, &api.RecurringParams{Interval: wire.RecurringIntervalWeek})
		s := subPaidWith(t, m, subBody(pr.Id))
		// One hour of the week left. Quantity 1 → 2: credit 1000 × 3600/604800 = 5.95 → 6,
		// charge 2000 × 3600/604800 = 11.90 → 12, net 6: below 250.
		clockAdvance(t, o.Test, s.CurrentPeriodEnd-s.Created-3600)
		r := subUpdate(t, m, s.Id, map[string]any{"quantity": 2})
		if r.Status != http.StatusOK {
			t.Fatalf("small upgrade: %d %s", r.Status, r.Body)
		}
		up := catDecode[api.Subscription](t, r)
		if up.Quantity != 2 || up.Amount != 2000 || *up.LatestInvoice != *s.LatestInvoice || up.Status != wire.SubscriptionStatusActive {
			t.Fatalf("after the small upgrade %+v", up)
		}
		if n := len(evtList(t, o.Test, "invoice.finalized", 10).Data); n != 1 {
			t.Fatalf("invoice.finalized: %d, want the first invoice's only", n)
		}
		clockAdvance(t, o.Test, 3600)
		got := subGet(t, m, s.Id)
		if inv := subInvoice(t, o, *got.LatestInvoice); *got.LatestInvoice == *s.LatestInvoice || inv.Status != "paid" || inv.TotalAmount != 2000 ||
			inv.StartingBalance != 6 || inv.EndingBalance != 0 || inv.AmountPaid != 2006 {
			t.Fatalf("renewal invoice %+v", inv)
		}
	})
}

func TestBillingRulesTransitions(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "D14", "the event set of a renewal: invoice.finalized, payment_intent.succeeded, invoice.payment_succeeded, invoice.paid, and customer.subscription.updated (test clock)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		clockFreeze(t, o.Test)
		s := subActiveAt(t, o, 900)
		subWantEvents(t, o.Merchant, s.Id, "customer.subscription.created", "customer.subscription.updated")
		clockAdvance(t, o.Test, s.CurrentPeriodEnd-s.Created)
		got := subGet(t, o.Merchant, s.Id)
		if evs := invoiceEvents(t, o.Test, *got.LatestInvoice); strings.Join(evs, ",") != "invoice.finalized,payment_intent.succeeded,invoice.payment_succeeded,invoice.paid" {
			t.Fatalf("renewal invoice events %v", evs)
		}
		subWantEvents(t, o.Merchant, s.Id, "customer.subscription.created", "customer.subscription.updated", "customer.subscription.updated")
	})

	harness.Rule(t, "3.4", "an active subscription cancelled at period end stays active with customer.subscription.updated, is not renewed, and at the period end is canceled with ended_at and customer.subscription.deleted (test clock)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		clockFreeze(t, o.Test)
		s := subActiveAt(t, o, 900)
		c := catDecode[api.Subscription](t, catPost(t, o.Merchant.TestKey, "/v1/subscriptions/"+s.Id+"/cancel", map[string]any{}))
		if c.Status != wire.SubscriptionStatusActive || !c.CancelAtPeriodEnd || c.EndedAt != nil {
			t.Fatalf("pending cancellation %+v", c)
		}
		subWantEvents(t, o.Merchant, s.Id, "customer.subscription.created", "customer.subscription.updated", "customer.subscription.updated")
		clockAdvance(t, o.Test, s.CurrentPeriodEnd-s.Created-1)
		if got := subGet(t, o.Merchant, s.Id); got.Status != wire.SubscriptionStatusActive {
			t.Fatalf("before the period end: %s", got.Status)
		}
		clockAdvance(t, o.Test, 1)
		got := subGet(t, o.Merchant, s.Id)
		if got.Status != wire.SubscriptionStatusCanceled || got.EndedAt == nil || *got.EndedAt != s.CurrentPeriodEnd ||
			*got.LatestInvoice != *s.LatestInvoice {
			t.Fatalf("at the period end %+v", got)
		}
		subWantEvents(t, o.Merchant, s.Id, "customer.subscription.created", "customer.subscription.updated",
			"customer.subscription.updated", "customer.subscription.deleted")
		// No invoice later either.
		clockAdvance(t, o.Test, 40*day)
		if got := subGet(t, o.Merchant, s.Id); *got.LatestInvoice != *s.LatestInvoice {
			t.Fatal("a canceled subscription was invoiced")
		}
	})

	harness.Rule(t, "3.4", "cancelling an active subscription now (or a pending cancellation with at_period_end false) ends it at once with customer.subscription.deleted, and no invoice follows (test clock)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		now := clockFreeze(t, o.Test)
		now1 := subActiveAt(t, o, 900)
		pending := subActiveAt(t, o, 900)
		catDecode[api.Subscription](t, catPost(t, o.Merchant.TestKey, "/v1/subscriptions/"+pending.Id+"/cancel", map[string]any{"at_period_end": true}))
		clockAdvance(t, o.Test, day)
		for _, s := range []api.Subscription{now1, pending} {
			c := catDecode[api.Subscription](t, catPost(t, o.Merchant.TestKey, "/v1/subscriptions/"+s.Id+"/cancel", map[string]any{"at_period_end": false}))
			if c.Status != wire.SubscriptionStatusCanceled || c.EndedAt == nil || *c.EndedAt != now+day || c.CancelAtPeriodEnd {
				t.Fatalf("cancel now %+v", c)
			}
			if evs := subEvents(t, o.Merchant, s.Id); evs[len(evs)-1] != "customer.subscription.deleted" {
				t.Fatalf("events %v", evs)
			}
			catWantErr(t, catPost(t, o.Merchant.TestKey, "/v1/subscriptions/"+s.Id+"/cancel", map[string]any{}),
				http.StatusConflict, "resource_conflict", "subscription_already_canceled", "")
		}
		clockAdvance(t, o.Test, 40*day)
		for _, s := range []api.Subscription{now1, pending} {
			if got := subGet(t, o.Merchant, s.Id); got.Status != wire.SubscriptionStatusCanceled || *got.LatestInvoice != *s.LatestInvoice {
				t.Fatalf("after the period end %+v", got)
			}
		}
	})

	harness.Rule(t, "D14", "a trial shorter than 3 days gives customer.subscription.trial_will_end at the trial start (test clock)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		m := newMerchant(t, true)
		now := clockFreeze(t, m.Test)
		pr := subPrice(t, m, 900, nil)
		b := subBody(pr.Id)
		b["trial_days"] = 2
		s := subCreate(t, m, b)
		if s.TrialEnd == nil || *s.TrialEnd != now+2*day {
			t.Fatalf("trial_end %v, want %d", s.TrialEnd, now+2*day)
		}
		id, secret := subPI(t, s)
		subConfirm(t, secret, id, payCard(payCardOK))
		clockAdvance(t, m.Test, 1)
		subWantEvents(t, m, s.Id, "customer.subscription.created", "customer.subscription.updated", "customer.subscription.trial_will_end")
		if evs := evtList(t, m.Test, "customer.subscription.trial_will_end", 10).Data; len(evs) != 1 || evs[0].Created != now {
			t.Fatalf("trial_will_end events %+v, want one at %d", evs, now)
		}
	})

	harness.Rule(t, "D14", "the subscription's events through dunning: past_due and unpaid each fire customer.subscription.updated, and recovery on the hosted page fires invoice.paid and customer.subscription.updated (test clock)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		clockFreeze(t, o.Test)
		s := subTrialPaid(t, o, "4000000000000341")
		base := []string{"customer.subscription.created", "customer.subscription.updated", "customer.subscription.trial_will_end"}
		clockAdvance(t, o.Test, *s.TrialEnd-s.Created)
		subWantEvents(t, o.Merchant, s.Id, append(base, "customer.subscription.updated")...)
		// The retries at +3 and +7 days leave it past_due: no subscription event.
		clockAdvance(t, o.Test, 7*day)
		subWantEvents(t, o.Merchant, s.Id, append(base, "customer.subscription.updated")...)
		clockAdvance(t, o.Test, 7*day)
		got := subGet(t, o.Merchant, s.Id)
		if got.Status != wire.SubscriptionStatusUnpaid {
			t.Fatalf("after the last retry: %s", got.Status)
		}
		subWantEvents(t, o.Merchant, s.Id, append(base, "customer.subscription.updated", "customer.subscription.updated")...)
		inv := subInvoice(t, o, *got.LatestInvoice)
		if code, _, _ := hostedPost(t, "/i/"+*inv.PublicToken+"/pay", cardForm(payCardOK)); code != http.StatusSeeOther {
			t.Fatalf("paying the hosted invoice: %d", code)
		}
		if st := subGet(t, o.Merchant, s.Id).Status; st != wire.SubscriptionStatusActive {
			t.Fatalf("after paying: %s", st)
		}
		subWantEvents(t, o.Merchant, s.Id, append(base, "customer.subscription.updated", "customer.subscription.updated", "customer.subscription.updated")...)
		if evs := invoiceEvents(t, o.Test, inv.Id); evs[len(evs)-1] != "invoice.paid" || !slices.Contains(evs, "invoice.payment_succeeded") {
			t.Fatalf("invoice events %v", evs)
		}
	})
}

func TestBillingRulesLimits(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "D8", "the subscription list takes limit 1 to 100 and gives 10 by default", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		pr := subPrice(t, m, 900, nil)
		for range 11 {
			subCreate(t, m, subBody(pr.Id))
		}
		l := catDecode[api.SubscriptionList](t, catGet(t, m.TestKey, "/v1/subscriptions", nil))
		if len(l.Data) != 10 || !l.HasMore {
			t.Fatalf("default page: %d, has_more %v", len(l.Data), l.HasMore)
		}
		for n, want := range map[string]int{"1": 1, "100": 11} {
			if l := catDecode[api.SubscriptionList](t, catGet(t, m.TestKey, "/v1/subscriptions", url.Values{"limit": {n}})); len(l.Data) != want {
				t.Fatalf("limit %s: %d, want %d", n, len(l.Data), want)
			}
		}
		for _, n := range []string{"0", "-1", "x"} {
			catWantErr(t, catGet(t, m.TestKey, "/v1/subscriptions", url.Values{"limit": {n}}), http.StatusBadRequest, "invalid_request", "limit_invalid", "limit")
		}
	})

	harness.Rule(t, "D15", "an uncollectible invoice can still be paid on its hosted page: paid, invoice.paid", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		inv := sendInvoice(t, o, newDraft(t, o, freeLine("Work", 1, 1000, "0")).Id)
		mu, _ := o.Client.MarkInvoiceUncollectibleWithResponse(context.Background(), dashTest, inv.Id, nil)
		if mu.JSON200 == nil || mu.JSON200.Status != "uncollectible" {
			t.Fatalf("mark: %d %s", mu.StatusCode(), mu.Body)
		}
		if code, _, _ := hostedPost(t, "/i/"+*inv.PublicToken+"/pay", cardForm(payCardOK)); code != http.StatusSeeOther {
			t.Fatalf("paying an uncollectible invoice: %d", code)
		}
		got := subInvoice(t, o, inv.Id)
		if got.Status != "paid" || got.AmountPaid != 1000 || got.AmountDue != 0 {
			t.Fatalf("after paying %+v", got)
		}
		if evs := invoiceEvents(t, o.Test, inv.Id); strings.Join(evs, ",") != "invoice.finalized,invoice.marked_uncollectible,payment_intent.succeeded,invoice.paid" {
			t.Fatalf("events %v", evs)
		}
	})
}
