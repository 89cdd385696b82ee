package conformance

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/kassa-pay/kassa/conformance/harness"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

// balWeekly creates a weekly 10.00 € subscription of quantity qty for email and pays its
// first invoice (subPaidWith; the clock is frozen by the caller).
func balWeekly(t *testing.T, o *DashOwner, email string, qty int) api.Subscription {
	t.Helper()
	body := subBody(subPrice(t, o.Merchant, 1000, &api.RecurringParams{Interval: wire.RecurringIntervalWeek}).Id)
	body["quantity"], body["customer_email"] = qty, email
	return subPaidWith(t, o.Merchant, body)
}

// balOf is the customer's balance per currency as the dashboard's customer detail shows it.
func balOf(t *testing.T, o *DashOwner, customer string) map[string]int64 {
	t.Helper()
	d, err := o.Client.GetCustomerWithResponse(context.Background(), dashTest, customer)
	if err != nil || d.JSON200 == nil {
		t.Fatalf("customer %s: %v %s", customer, err, d.Body)
	}
	return d.JSON200.Balances
}

// balPayments counts the environment's payments (a charge makes one).
func balPayments(t *testing.T, o *DashOwner) int {
	t.Helper()
	limit := 100
	r, err := o.Client.ListPaymentsWithResponse(context.Background(), dashTest, &dash.ListPaymentsParams{Limit: &limit})
	if err != nil || r.JSON200 == nil {
		t.Fatalf("payments: %v", err)
	}
	return len(r.JSON200.Data)
}

// balKeep changes s to quantity qty with create_prorations: the proration is kept for the
// next renewal.
func balKeep(t *testing.T, m *Merchant, s api.Subscription, qty int) {
	t.Helper()
	r := subUpdate(t, m, s.Id, map[string]any{"quantity": qty, "proration_behavior": "create_prorations"})
	if r.Status != http.StatusOK {
		t.Fatalf("create_prorations: %d %s", r.Status, r.Body)
	}
}

// balRenewed advances the clock by seconds and answers the subscription's new latest invoice.
func balRenewed(t *testing.T, o *DashOwner, s api.Subscription, seconds int64) (api.Subscription, string) {
	t.Helper()
	before := subGet(t, o.Merchant, s.Id)
	clockAdvance(t, o.Test, seconds)
	after := subGet(t, o.Merchant, s.Id)
	if after.LatestInvoice == nil || (before.LatestInvoice != nil && *after.LatestInvoice == *before.LatestInvoice) ||
		after.CurrentPeriodStart != before.CurrentPeriodEnd {
		t.Fatalf("not renewed: %+v", after)
	}
	return after, *after.LatestInvoice
}

func TestSubscriptionsCustomerBalance(t *testing.T) {
	t.Parallel()
	const day = 86400

	harness.Rule(t, "D14", "an always_invoice downgrade's net credit goes to the customer's balance; the next renewal takes it as far as it leaves the minimum charge, then the rest (test clock)", func(t *testing.T) {
		t.Parallel()
		o := subFrozenOwner(t)
		m := o.Merchant
		s := balWeekly(t, o, "grace@example.com", 2)
		clockAdvance(t, o.Test, day)
		// One day in, six of seven days remain. Quantity 2 → 1 of 1000: credit 2000 × 6/7 =
		// 1714.29 → 1714, charge 1000 × 6/7 = 857.14 → 857: a net credit of 857. Sent twice with
		// one Idempotency-Key: one change, one credit.
		pays := balPayments(t, o)
		key := map[string]string{"Idempotency-Key": "downgrade-" + m.ID}
		body := rawJSON(t, map[string]any{"quantity": 1})
		first := raw(t, http.MethodPost, "/v1/subscriptions/"+s.Id, m.TestKey, body, key)
		again := raw(t, http.MethodPost, "/v1/subscriptions/"+s.Id, m.TestKey, body, key)
		if first.Status != http.StatusOK || string(first.Body) != string(again.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("first %d %s, again %d %s", first.Status, first.Body, again.Status, again.Body)
		}
		down := catDecode[api.Subscription](t, first)
		if down.Quantity != 1 || down.Amount != 1000 || *down.LatestInvoice != *s.LatestInvoice {
			t.Fatalf("after the downgrade %+v", down)
		}
		if b := balOf(t, o, s.Customer); len(b) != 1 || b["EUR"] != -857 {
			t.Fatalf("balance after the downgrade %v, want EUR -857", b)
		}
		if n := balPayments(t, o); n != pays {
			t.Fatalf("the downgrade charged: %d payments, was %d", n, pays)
		}
		// The renewal of day 7: total 1000; the whole credit would leave 143, below the minimum
		// charge, so it takes 750 and charges 250; 107 of credit stays.
		_, id := balRenewed(t, o, s, 6*day)
		inv := subInvoice(t, o, id)
		if inv.Status != "paid" || inv.TotalAmount != 1000 || inv.StartingBalance != -857 || inv.EndingBalance != -107 ||
			inv.AmountPaid != 250 || inv.AmountDue != 0 {
			t.Fatalf("first renewal %+v", inv)
		}
		if p := subPaymentOf(t, o, inv); p.Amount != 250 {
			t.Fatalf("first renewal payment %+v", p)
		}
		if b := balOf(t, o, s.Customer); b["EUR"] != -107 {
			t.Fatalf("balance after the first renewal %v, want EUR -107", b)
		}
		// The next renewal: total 1000 − 107 = 893 charged; the balance is 0.
		_, id = balRenewed(t, o, s, 7*day)
		inv = subInvoice(t, o, id)
		if inv.Status != "paid" || inv.StartingBalance != -107 || inv.EndingBalance != 0 || inv.AmountPaid != 893 {
			t.Fatalf("second renewal %+v", inv)
		}
		if b := balOf(t, o, s.Customer); b["EUR"] != 0 {
			t.Fatalf("balance after the second renewal %v, want EUR 0", b)
		}
	})

	harness.Rule(t, "D14", "a renewal the customer's credit covers is paid when it is made, with no payment and no charge; the credit left goes to the next invoice (test clock)", func(t *testing.T) {
		t.Parallel()
		o := subFrozenOwner(t)
		m := o.Merchant
		s := balWeekly(t, o, "grace@example.com", 3)
		clockAdvance(t, o.Test, day)
		// Quantity 3 → 1 one day in: credit 3000 × 6/7 = 2571.43 → 2571, charge 857: net −1714.
		subUpdate(t, m, s.Id, map[string]any{"quantity": 1})
		if b := balOf(t, o, s.Customer); b["EUR"] != -1714 {
			t.Fatalf("balance %v, want EUR -1714", b)
		}
		pays := balPayments(t, o)
		// Day 7: the 1000 renewal is paid from the credit: 714 is left.
		renewed, id := balRenewed(t, o, s, 6*day)
		inv := subInvoice(t, o, id)
		if inv.Status != "paid" || inv.TotalAmount != 1000 || inv.StartingBalance != -1714 || inv.EndingBalance != -714 ||
			inv.AmountDue != 0 || inv.AmountPaid != 0 || inv.PaymentId != nil {
			t.Fatalf("renewal paid by the credit %+v", inv)
		}
		if renewed.Status != wire.SubscriptionStatusActive {
			t.Fatalf("subscription %+v", renewed)
		}
		if n := balPayments(t, o); n != pays {
			t.Fatalf("a renewal the credit paid made a payment: %d, was %d", n, pays)
		}
		if evs := invoiceEvents(t, o.Test, inv.Id); strings.Join(evs, ",") != "invoice.finalized,invoice.payment_succeeded,invoice.paid" {
			t.Fatalf("invoice events %v", evs)
		}
		// Day 14: 1000 − 714 = 286 is charged.
		_, id = balRenewed(t, o, s, 7*day)
		inv = subInvoice(t, o, id)
		if inv.Status != "paid" || inv.StartingBalance != -714 || inv.EndingBalance != 0 || inv.AmountPaid != 286 {
			t.Fatalf("next renewal %+v", inv)
		}
		if p := subPaymentOf(t, o, inv); p.Amount != 286 {
			t.Fatalf("next renewal payment %+v", p)
		}
	})

	harness.Rule(t, "D14", "an always_invoice upgrade's invoice takes the customer's credit: the amount due is the net proration less the credit (test clock)", func(t *testing.T) {
		t.Parallel()
		o := subFrozenOwner(t)
		m := o.Merchant
		s := balWeekly(t, o, "grace@example.com", 3)
		clockAdvance(t, o.Test, day)
		subUpdate(t, m, s.Id, map[string]any{"quantity": 1}) // net −1714, as above
		clockAdvance(t, o.Test, day)
		// Two days in, five remain. Quantity 1 → 4: credit 1000 × 5/7 = 714.29 → 714, charge
		// 4000 × 5/7 = 2857.14 → 2857, net 2143; less the credit of 1714: 429 charged.
		up := catDecode[api.Subscription](t, subUpdate(t, m, s.Id, map[string]any{"quantity": 4}))
		inv := subInvoice(t, o, *up.LatestInvoice)
		if inv.Status != "paid" || inv.TotalAmount != 2143 || inv.StartingBalance != -1714 || inv.EndingBalance != 0 || inv.AmountPaid != 429 {
			t.Fatalf("proration invoice %+v", inv)
		}
		if p := subPaymentOf(t, o, inv); p.Amount != 429 {
			t.Fatalf("proration payment %+v", p)
		}
		if b := balOf(t, o, s.Customer); b["EUR"] != 0 {
			t.Fatalf("balance %v, want EUR 0", b)
		}
	})

	harness.Rule(t, "D14", "an always_invoice net charge below the minimum charge is carried on the customer's balance and billed with the next renewal (test clock)", func(t *testing.T) {
		t.Parallel()
		o := subFrozenOwner(t)
		m := o.Merchant
		s := balWeekly(t, o, "grace@example.com", 1)
		clockAdvance(t, o.Test, 6*day)
		// Six days in, one of seven remains. Quantity 1 → 2: credit 1000 × 1/7 = 142.86 → 143,
		// charge 2000 × 1/7 = 285.71 → 286, net 143: below 250, so no invoice; it is owed.
		pays := balPayments(t, o)
		up := catDecode[api.Subscription](t, subUpdate(t, m, s.Id, map[string]any{"quantity": 2}))
		if up.Amount != 2000 || *up.LatestInvoice != *s.LatestInvoice {
			t.Fatalf("after the upgrade %+v", up)
		}
		if b := balOf(t, o, s.Customer); b["EUR"] != 143 {
			t.Fatalf("balance %v, want EUR 143", b)
		}
		if n := balPayments(t, o); n != pays {
			t.Fatalf("the small upgrade charged: %d payments, was %d", n, pays)
		}
		// Day 7: 2000 + 143 = 2143 charged.
		_, id := balRenewed(t, o, s, day)
		inv := subInvoice(t, o, id)
		if inv.Status != "paid" || inv.TotalAmount != 2000 || inv.StartingBalance != 143 || inv.EndingBalance != 0 || inv.AmountPaid != 2143 {
			t.Fatalf("renewal %+v", inv)
		}
		if b := balOf(t, o, s.Customer); b["EUR"] != 0 {
			t.Fatalf("balance after the renewal %v, want EUR 0", b)
		}
	})

	harness.Rule(t, "D14", "a customer's balance belongs to its merchant, environment and customer: another merchant's customer with the same e-mail and another customer are billed in full (test clock)", func(t *testing.T) {
		t.Parallel()
		o, other := subFrozenOwner(t), subFrozenOwner(t)
		s := balWeekly(t, o, "grace@example.com", 3)
		bob := balWeekly(t, o, "bob@example.com", 1)
		theirs := balWeekly(t, other, "grace@example.com", 1)
		clockAdvance(t, o.Test, day)
		subUpdate(t, o.Merchant, s.Id, map[string]any{"quantity": 1}) // net −1714
		if b := balOf(t, o, s.Customer); b["EUR"] != -1714 {
			t.Fatalf("balance %v", b)
		}
		if b := balOf(t, o, bob.Customer); len(b) != 0 {
			t.Fatalf("another customer's balance %v", b)
		}
		if b := balOf(t, other, theirs.Customer); len(b) != 0 {
			t.Fatalf("another merchant's customer's balance %v", b)
		}
		live, err := o.Client.GetCustomerWithResponse(context.Background(), dashLive, s.Customer)
		if err != nil || live.StatusCode() != http.StatusNotFound {
			t.Fatalf("live read of a test customer: %v %d", err, live.StatusCode())
		}
		_, id := balRenewed(t, o, bob, 6*day)
		if inv := subInvoice(t, o, id); inv.StartingBalance != 0 || inv.AmountPaid != 1000 {
			t.Fatalf("another customer's renewal %+v", inv)
		}
		clockAdvance(t, other.Test, day)
		_, id = balRenewed(t, other, theirs, 6*day)
		if inv := subInvoice(t, other, id); inv.StartingBalance != 0 || inv.AmountPaid != 1000 {
			t.Fatalf("another merchant's renewal %+v", inv)
		}
	})

	harness.Rule(t, "D14", "a subscription that ends before the renewal its create_prorations lines were kept for puts their net credit on the customer's balance, canceled now or at the period end (test clock)", func(t *testing.T) {
		t.Parallel()
		o := subFrozenOwner(t)
		m := o.Merchant
		now := balWeekly(t, o, "grace@example.com", 3)
		atEnd := balWeekly(t, o, "ada@example.com", 3)
		clockAdvance(t, o.Test, day)
		// One day in, six of seven days remain. Quantity 3 → 2 of 1000: credit 3000 × 6/7 =
		// 2571.43 → 2571, charge 2000 × 6/7 = 1714.29 → 1714, kept for the renewal: net −857.
		balKeep(t, m, now, 2)
		balKeep(t, m, atEnd, 2)
		pays := balPayments(t, o)
		for _, s := range []api.Subscription{now, atEnd} {
			if b := balOf(t, o, s.Customer); len(b) != 0 {
				t.Fatalf("balance before the end %v", b)
			}
		}
		cancel := func(s api.Subscription, atPeriodEnd bool) {
			t.Helper()
			catDecode[api.Subscription](t, catPost(t, m.TestKey, "/v1/subscriptions/"+s.Id+"/cancel", map[string]any{"at_period_end": atPeriodEnd}))
		}
		cancel(now, false)
		cancel(atEnd, true)
		if b := balOf(t, o, now.Customer); b["EUR"] != -857 {
			t.Fatalf("balance after canceling now %v, want EUR -857", b)
		}
		if b := balOf(t, o, atEnd.Customer); len(b) != 0 && b["EUR"] != 0 {
			t.Fatalf("balance before the period end %v", b)
		}
		// Day 7: the period ends; the subscription ends with no renewal, its credit kept.
		clockAdvance(t, o.Test, 6*day)
		if got := subGet(t, m, atEnd.Id); got.Status != wire.SubscriptionStatusCanceled || *got.LatestInvoice != *atEnd.LatestInvoice {
			t.Fatalf("at the period end %+v", got)
		}
		if b := balOf(t, o, atEnd.Customer); b["EUR"] != -857 {
			t.Fatalf("balance after the period end %v, want EUR -857", b)
		}
		if n := balPayments(t, o); n != pays {
			t.Fatalf("ending charged: %d payments, was %d", n, pays)
		}
	})
}
