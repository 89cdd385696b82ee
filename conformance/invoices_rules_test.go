package conformance

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/kassa-pay/kassa/conformance/harness"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

// More rules the audit of issue 16's test list found without a case: idempotency of the
// invoice POSTs not yet replayed, environment isolation of every subscription endpoint, and
// a subscription's first invoice paid on its hosted page (D14: the method becomes the
// default).

func TestInvoicesRulesIdempotency(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "8", "replaying an invoice's update, mark_uncollectible and void with the same Idempotency-Key changes once and answers the same; another body is 409 idempotency_key_reused", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		d := newDraft(t, o, freeLine("Work", 1, 1000, "0"))
		base := "/api/v1/test/invoices/" + d.Id
		replay := func(path, body, otherBody string) {
			t.Helper()
			key := map[string]string{"Idempotency-Key": "k-" + core62()}
			first := ownerRaw(t, o, http.MethodPost, path, body, key)
			second := ownerRaw(t, o, http.MethodPost, path, body, key)
			if first.Status != 200 || second.Status != 200 || string(first.Body) != string(second.Body) || second.Header.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("%s replay: %d %d %s", path, first.Status, second.Status, second.Body)
			}
			other := ownerRaw(t, o, http.MethodPost, path, otherBody, key)
			wantError(t, other.Status, other.Header, other.Body, 409, "idempotency_error", "idempotency_key_reused", "")
		}
		replay(base, `{"memo": "First"}`, `{"memo": "Second"}`)
		if got := subInvoice(t, o, d.Id); got.Memo == nil || *got.Memo != "First" {
			t.Fatalf("memo after the replays: %v", got.Memo)
		}
		sendInvoice(t, o, d.Id)
		replay(base+"/mark_uncollectible", "", `{"x": 1}`)
		replay(base+"/void", "", `{"x": 1}`)
		if got := invoiceEvents(t, o.Test, d.Id); !slices.Equal(got, []string{"invoice.finalized", "invoice.marked_uncollectible", "invoice.voided"}) {
			t.Fatalf("events %v", got)
		}
	})
}

func TestSubscriptionsRulesEnvironments(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "ISO", "a test subscription is 404 subscription_not_found with the same merchant's live key on every endpoint, and unchanged", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		s := subCreate(t, m, subBody(subPrice(t, m, 900, nil).Id))
		for _, c := range []struct{ method, path, body string }{
			{http.MethodGet, "/v1/subscriptions/" + s.Id, ""},
			{http.MethodPost, "/v1/subscriptions/" + s.Id, `{"metadata": {"a": "b"}}`},
			{http.MethodPost, "/v1/subscriptions/" + s.Id + "/cancel", `{"at_period_end": false}`},
			{http.MethodPost, "/v1/subscriptions/" + s.Id + "/pause", `{}`},
			{http.MethodPost, "/v1/subscriptions/" + s.Id + "/resume", `{}`},
		} {
			catWantErr(t, raw(t, c.method, c.path, m.LiveKey, c.body, nil), http.StatusNotFound, "not_found", "subscription_not_found", "id")
		}
		if l := catDecode[api.SubscriptionList](t, catGet(t, m.LiveKey, "/v1/subscriptions", url.Values{"customer": {s.Customer}})); len(l.Data) != 0 {
			t.Fatalf("the live list shows the test customer's subscriptions: %d", len(l.Data))
		}
		if got := subGet(t, m, s.Id); got.Status != wire.SubscriptionStatusIncomplete || len(got.Metadata) != 0 {
			t.Fatalf("the live key changed it: %+v", got)
		}
	})
}

func TestSubscriptionsRulesFirstInvoiceHostedPage(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "D14", "paying a subscription's first invoice on its hosted page makes it active with that card as default_payment_method, and the renewal charges it (test clock)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		clockFreeze(t, o.Test)
		s := subPlain(t, o)
		inv := subInvoice(t, o, *s.LatestInvoice)
		if code, _, _ := hostedPost(t, "/i/"+*inv.PublicToken+"/pay", cardForm(payCardOK)); code != http.StatusSeeOther {
			t.Fatalf("paying the first invoice on its page: %d", code)
		}
		got := subGet(t, o.Merchant, s.Id)
		if got.Status != wire.SubscriptionStatusActive {
			t.Fatalf("after paying: %s", got.Status)
		}
		if got.DefaultPaymentMethod == nil || got.DefaultPaymentMethod.Last4 != "4242" {
			t.Fatalf("default_payment_method %+v, want the card that paid", got.DefaultPaymentMethod)
		}
		clockAdvance(t, o.Test, got.CurrentPeriodEnd-s.Created)
		if r := subGet(t, o.Merchant, s.Id); r.Status != wire.SubscriptionStatusActive || subInvoice(t, o, *r.LatestInvoice).Status != "paid" {
			t.Fatalf("after the renewal %+v", r)
		}
	})
}

func TestSubscriptionsRulesHostedPageSavesMethod(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "D14", "a past_due subscription paid on its hosted page with another card keeps that card as default_payment_method, and the next renewal charges it (test clock)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		clockFreeze(t, o.Test)
		// 4000000000000341 saves, then declines every charge: the renewal at the trial's end fails.
		s := subTrialPaid(t, o, "4000000000000341")
		clockAdvance(t, o.Test, *s.TrialEnd-s.Created)
		due := subGet(t, o.Merchant, s.Id)
		if due.Status != wire.SubscriptionStatusPastDue {
			t.Fatalf("after the failed renewal: %s", due.Status)
		}
		inv := subInvoice(t, o, *due.LatestInvoice)
		if code, _, _ := hostedPost(t, "/i/"+*inv.PublicToken+"/pay", cardForm(payCardEEA)); code != http.StatusSeeOther {
			t.Fatalf("paying the hosted invoice: %d", code)
		}
		got := subGet(t, o.Merchant, s.Id)
		if got.Status != wire.SubscriptionStatusActive || got.DefaultPaymentMethod == nil || got.DefaultPaymentMethod.Last4 != "0016" {
			t.Fatalf("after paying: %s, default %+v, want the card that paid", got.Status, got.DefaultPaymentMethod)
		}
		clockAdvance(t, o.Test, got.CurrentPeriodEnd-*s.TrialEnd)
		r := subGet(t, o.Merchant, s.Id)
		next := subInvoice(t, o, *r.LatestInvoice)
		if r.Status != wire.SubscriptionStatusActive || next.Id == inv.Id || next.Status != "paid" {
			t.Fatalf("after the next renewal: %s, invoice %s %s", r.Status, next.Id, next.Status)
		}
		if p := subPaymentOf(t, o, next); p.Card == nil || p.Card.Last4 != "0016" {
			t.Fatalf("the renewal was charged to %+v, want the card saved on the hosted page", p.Card)
		}
	})

	harness.Rule(t, "D14", "a subscription's first invoice paid on its hosted page by SEPA debit makes the bank account default_payment_method once the debit settles (test clock)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		clockFreeze(t, o.Test)
		s := subPlain(t, o)
		inv := subInvoice(t, o, *s.LatestInvoice)
		if code, _, _ := hostedPost(t, "/i/"+*inv.PublicToken+"/pay", pgSEPAForm(payIBANOK)); code != http.StatusSeeOther {
			t.Fatalf("paying the first invoice by SEPA debit on its page: %d", code)
		}
		clockAdvance(t, o.Test, 3*day) // the debit settles
		got := subGet(t, o.Merchant, s.Id)
		if got.Status != wire.SubscriptionStatusActive || subInvoice(t, o, inv.Id).Status != "paid" {
			t.Fatalf("after the settlement: %s", got.Status)
		}
		if dm := got.DefaultPaymentMethod; dm == nil || string(dm.Type) != "sepa_debit" || dm.Last4 != "3000" {
			t.Fatalf("default_payment_method %+v, want the bank account that paid", dm)
		}
	})

	harness.Rule(t, "8", "paying a one-off invoice on its hosted page saves no payment method, even for the e-mail of a customer with a subscription", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		email := "ada-" + strings.ToLower(o.ID[4:12]) + "@example.com"
		body := subBody(subPrice(t, o.Merchant, 900, nil).Id)
		body["customer_email"] = email
		s := subPaidWith(t, o.Merchant, body)
		inv := sendInvoice(t, o, newDraft(t, o, freeLine("Work", 1, 1000, "0")).Id)
		if code, _, _ := hostedPost(t, "/i/"+*inv.PublicToken+"/pay", cardForm(payCardEEA)); code != http.StatusSeeOther {
			t.Fatalf("paying the one-off invoice: %d", code)
		}
		if got := subInvoice(t, o, inv.Id); got.Status != "paid" {
			t.Fatalf("one-off invoice %s", got.Status)
		}
		d, err := o.Client.GetCustomerWithResponse(context.Background(), dashTest, s.Customer)
		if err != nil || d.JSON200 == nil {
			t.Fatalf("customer: %v", err)
		}
		if pms := d.JSON200.PaymentMethods; len(pms) != 1 || pms[0].Last4 != "4242" {
			t.Fatalf("saved methods %+v, want only the subscription's card", pms)
		}
		if dm := subGet(t, o.Merchant, s.Id).DefaultPaymentMethod; dm == nil || dm.Last4 != "4242" {
			t.Fatalf("default_payment_method %+v", dm)
		}
	})
}
