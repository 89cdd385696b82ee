package conformance

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"testing"

	"github.com/kassa-pay/kassa/conformance/harness"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

// kcTransactions is the customer's balance transactions, newest first, as "type amount
// subscription-or-invoice" strings.
func kcTransactions(t *testing.T, o *DashOwner, customer string) []string {
	t.Helper()
	r := cbList(t, o, dashTest, customer, &dash.ListCustomerBalanceTransactionsParams{})
	if r.JSON200 == nil {
		t.Fatalf("balance transactions: %d %s", r.StatusCode(), r.Body)
	}
	var out []string
	for _, x := range r.JSON200.Data {
		ref := ""
		if x.Invoice != nil {
			ref = *x.Invoice
		} else if x.Subscription != nil {
			ref = *x.Subscription
		}
		out = append(out, fmt.Sprintf("%s %d %s", x.Type, x.Amount, ref))
	}
	return out
}

var kcApplied = regexp.MustCompile(`id="invoice-applied-balance">([^<]*)<`)

// kcRenewalAddsOwed checks that invoice id (a 1000 renewal) added the 857 the customer owed:
// amount paid 1857, and its hosted page shows the applied balance as a positive 8.57.
func kcRenewalAddsOwed(t *testing.T, o *DashOwner, id string) {
	t.Helper()
	inv := subInvoice(t, o, id)
	if inv.Status != "paid" || inv.TotalAmount != 1000 || inv.StartingBalance != 857 || inv.EndingBalance != 0 ||
		inv.AmountDue != 0 || inv.AmountPaid != 1857 {
		t.Fatalf("renewal %+v", inv)
	}
	if p := subPaymentOf(t, o, inv); p.Amount != 1857 {
		t.Fatalf("renewal payment %+v", p)
	}
	code, page := hostedGet(t, "/i/"+*inv.PublicToken)
	m := kcApplied.FindStringSubmatch(page)
	if code != http.StatusOK || m == nil || m[1] != "8.57 €" {
		t.Fatalf("hosted page %d, applied balance %q", code, m)
	}
}

func TestSubscriptionsKeptProrationCharge(t *testing.T) {
	t.Parallel()
	const day = 86400

	harness.Rule(t, "D14", "a subscription canceled now with create_prorations lines that net to a charge puts the charge on the customer's balance as owed, once: a retried cancel with the same Idempotency-Key and a second cancel add nothing; the customer's next subscription invoice in that currency adds it and shows it as a positive applied balance (test clock)", func(t *testing.T) {
		t.Parallel()
		o := subFrozenOwner(t)
		m := o.Merchant
		s := balWeekly(t, o, "grace@example.com", 1)
		other := balWeekly(t, o, "grace@example.com", 1)
		if other.Customer != s.Customer {
			t.Fatalf("two customers: %s %s", s.Customer, other.Customer)
		}
		clockAdvance(t, o.Test, day)
		// One day in, six of seven days remain. Quantity 1 → 2 of 1000: credit 1000 × 6/7 =
		// 857.14 → 857, charge 2000 × 6/7 = 1714.29 → 1714, kept for the renewal: net +857.
		balKeep(t, m, s, 2)
		if b := balOf(t, o, s.Customer); len(b) != 0 {
			t.Fatalf("balance before the cancel %v", b)
		}
		pays := balPayments(t, o)
		key := map[string]string{"Idempotency-Key": idemKey()}
		body := rawJSON(t, map[string]any{"at_period_end": false})
		first := raw(t, http.MethodPost, "/v1/subscriptions/"+s.Id+"/cancel", m.TestKey, body, key)
		wantReplay(t, first, raw(t, http.MethodPost, "/v1/subscriptions/"+s.Id+"/cancel", m.TestKey, body, key))
		if c := catDecode[api.Subscription](t, first); c.Status != wire.SubscriptionStatusCanceled {
			t.Fatalf("canceled %+v", c)
		}
		catWantErr(t, catPost(t, m.TestKey, "/v1/subscriptions/"+s.Id+"/cancel", map[string]any{"at_period_end": false}),
			http.StatusConflict, "resource_conflict", "subscription_already_canceled", "")
		if b := balOf(t, o, s.Customer); len(b) != 1 || b["EUR"] != 857 {
			t.Fatalf("balance after the cancel %v, want EUR 857 owed", b)
		}
		if got := kcTransactions(t, o, s.Customer); fmt.Sprint(got) != "[proration_charge_at_cancel 857 "+s.Id+"]" {
			t.Fatalf("balance transactions %v", got)
		}
		if n := balPayments(t, o); n != pays {
			t.Fatalf("the cancel charged: %d payments, was %d", n, pays)
		}
		// Day 7: the customer's other subscription renews for 1000 and adds the 857 owed.
		_, id := balRenewed(t, o, other, 6*day)
		kcRenewalAddsOwed(t, o, id)
		if b := balOf(t, o, s.Customer); b["EUR"] != 0 {
			t.Fatalf("balance after the renewal %v, want EUR 0", b)
		}
		if got := kcTransactions(t, o, s.Customer); fmt.Sprint(got) != "[applied_to_invoice -857 "+id+" proration_charge_at_cancel 857 "+s.Id+"]" {
			t.Fatalf("balance transactions after the renewal %v", got)
		}
	})

	harness.Rule(t, "D14", "the dashboard's cancel (now, clicked twice with one Idempotency-Key) puts kept create_prorations lines that net to a charge on the customer's balance as owed, once (test clock)", func(t *testing.T) {
		t.Parallel()
		o := subFrozenOwner(t)
		s := balWeekly(t, o, "bob@example.com", 1)
		clockAdvance(t, o.Test, day)
		balKeep(t, o.Merchant, s, 2) // net +857, as above
		no, key := false, "dash-cancel-"+o.Merchant.ID
		for range 2 {
			x, err := o.Client.CancelDashboardSubscriptionWithResponse(context.Background(), dashTest, s.Id,
				&dash.CancelDashboardSubscriptionParams{IdempotencyKey: &key}, dash.SubscriptionCancel{AtPeriodEnd: &no})
			if err != nil || x.JSON200 == nil || x.JSON200.Status != wire.SubscriptionStatusCanceled {
				t.Fatalf("dashboard cancel: %v %d %s", err, x.StatusCode(), x.Body)
			}
		}
		if got := kcTransactions(t, o, s.Customer); fmt.Sprint(got) != "[proration_charge_at_cancel 857 "+s.Id+"]" {
			t.Fatalf("balance transactions %v", got)
		}
	})

	harness.Rule(t, "D14", "a subscription canceled at the period end with create_prorations lines that net to a charge puts the charge on the customer's balance as owed when the period ends, once; the first renewal of the customer's other subscription in that currency adds it (test clock)", func(t *testing.T) {
		t.Parallel()
		o := subFrozenOwner(t)
		m := o.Merchant
		s := balWeekly(t, o, "ada@example.com", 1)
		clockAdvance(t, o.Test, day)
		balKeep(t, m, s, 2) // net +857, as above
		// The customer's second subscription, a day later: it renews on day 8.
		other := balWeekly(t, o, "ada@example.com", 1)
		pend := catDecode[api.Subscription](t, catPost(t, m.TestKey, "/v1/subscriptions/"+s.Id+"/cancel", map[string]any{"at_period_end": true}))
		if !pend.CancelAtPeriodEnd || pend.Status != wire.SubscriptionStatusActive {
			t.Fatalf("pending cancellation %+v", pend)
		}
		if b := balOf(t, o, s.Customer); len(b) != 0 {
			t.Fatalf("balance before the period end %v", b)
		}
		pays := balPayments(t, o)
		// Day 7: the period ends, the subscription with it, without an invoice.
		clockAdvance(t, o.Test, 6*day)
		if got := subGet(t, m, s.Id); got.Status != wire.SubscriptionStatusCanceled || *got.LatestInvoice != *s.LatestInvoice {
			t.Fatalf("at the period end %+v", got)
		}
		if b := balOf(t, o, s.Customer); b["EUR"] != 857 {
			t.Fatalf("balance after the period end %v, want EUR 857 owed", b)
		}
		if n := balPayments(t, o); n != pays {
			t.Fatalf("ending charged: %d payments, was %d", n, pays)
		}
		catWantErr(t, catPost(t, m.TestKey, "/v1/subscriptions/"+s.Id+"/cancel", map[string]any{"at_period_end": false}),
			http.StatusConflict, "resource_conflict", "subscription_already_canceled", "")
		if got := kcTransactions(t, o, s.Customer); fmt.Sprint(got) != "[proration_charge_at_cancel 857 "+s.Id+"]" {
			t.Fatalf("balance transactions %v", got)
		}
		// Day 8: the other subscription's first renewal adds it.
		_, id := balRenewed(t, o, other, day)
		kcRenewalAddsOwed(t, o, id)
		if b := balOf(t, o, s.Customer); b["EUR"] != 0 {
			t.Fatalf("balance after the renewal %v, want EUR 0", b)
		}
	})
}
