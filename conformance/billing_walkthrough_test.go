package conformance

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/conformance/harness"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

// The newcomer's recurring billing path of docs/walkthrough.md ("Then try recurring billing"),
// step by step with its request bodies: a monthly price with a 7-day trial, a subscription
// checkout paid on the hosted page, the test clock through the trial end and a renewal, a
// failed charge of a card saved from 4000000000000341 with its dunning e-mails, the recovery
// on the hosted invoice page, and all of it in the dashboard and as signed webhooks at a
// local receiver.

func init() { sectionTitles["WALK"] = "the recurring billing walkthrough (docs/walkthrough.md)" }

// walkSubscribe creates the walkthrough's subscription checkout for name and email, pays it on
// the hosted page with card and returns the subscription it started.
func walkSubscribe(t *testing.T, m *Merchant, price, name, email, card string) api.Subscription {
	t.Helper()
	s := csWantOK(t, raw(t, http.MethodPost, "/v1/checkout/sessions", m.TestKey, `{"mode": "subscription", "currency": "eur",
		"customer_name": "`+name+`", "customer_email": "`+email+`", "success_url": "https://shop.example/welcome",
		"line_items": [{"name": "Pro plan", "price_id": "`+price+`", "quantity": 1}]}`, nil))
	pgWant(t, pgGet(t, s.CheckoutUrl), http.StatusOK, "7-day free trial", "then 9.00 € every month", "0.00 €", "Start trial")
	if p := pgPost(t, s, "/c/"+s.Id+"/pay", pgCardForm(card)); p.Status != http.StatusSeeOther {
		t.Fatalf("paying the hosted page with %s: %d\n%.2000s", card, p.Status, p.Body)
	}
	got := csGet(t, m.Test, s.Id)
	if got.Status != wire.CheckoutSessionStatusComplete || got.Subscription == nil {
		t.Fatalf("session after paying: %s, subscription %v", got.Status, got.Subscription)
	}
	sub := subGet(t, m, *got.Subscription)
	if sub.Status != wire.SubscriptionStatusTrialing || sub.TrialEnd == nil || *sub.TrialEnd-sub.Created != 7*day {
		t.Fatalf("subscription %+v", sub)
	}
	return sub
}

// walkAdvance is the walkthrough's advance request.
func walkAdvance(t *testing.T, m *Merchant, seconds string) {
	t.Helper()
	r := raw(t, http.MethodPost, "/v1/test_helpers/clock/advance", m.TestKey, `{"seconds": `+seconds+`}`, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("advance %s: %d %s", seconds, r.Status, r.Body)
	}
}

// walkFailed is the newest invoice.payment_failed's invoice: stage and hosted link.
func walkFailed(t *testing.T, m *Merchant) (stage, hosted string) {
	t.Helper()
	evs := evtList(t, m.Test, "invoice.payment_failed", 1).Data
	if len(evs) == 0 {
		t.Fatal("no invoice.payment_failed")
	}
	o := evs[0].Data.Object
	stage, _ = o["dunning_stage"].(string)
	hosted, _ = o["hosted_invoice_url"].(string)
	return stage, hosted
}

func TestBillingWalkthrough(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "WALK", "the walkthrough's steps: a monthly price with a 7-day trial, a subscription checkout, trial end and a renewal, a failed charge with 4000000000000341 and its dunning e-mails, recovery on the hosted invoice page, all in the dashboard and as signed webhooks (test clock)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		m := o.Merchant
		rc := newHookReceiver(t, nil)
		secret := hookEndpoint(t, o, dashTest, rc.URL).Secret

		// 1. A monthly price with a 7-day trial.
		prod := catDecode[api.Product](t, raw(t, http.MethodPost, "/v1/products", m.TestKey, `{"name": "Pro plan", "price": {"currency": "eur", "unit_amount": 900,
			"recurring": {"interval": "month", "trial_period_days": 7}}}`, nil))
		if prod.DefaultPrice == nil {
			t.Fatalf("product without default_price: %+v", prod)
		}
		price := *prod.DefaultPrice

		// 2. Ada starts her trial through a subscription checkout.
		ada := walkSubscribe(t, m, price, "Ada Lovelace", "ada@example.com", "4242424242424242")

		// 3. Past the trial end, then over a renewal.
		walkAdvance(t, m, "604800")
		got := subGet(t, m, ada.Id)
		if got.Status != wire.SubscriptionStatusActive || got.CurrentPeriodStart != *ada.TrialEnd {
			t.Fatalf("after the trial end %+v", got)
		}
		trialInvoice := *got.LatestInvoice
		walkAdvance(t, m, "2678400")
		got = subGet(t, m, ada.Id)
		if got.Status != wire.SubscriptionStatusActive || *got.LatestInvoice == trialInvoice || got.CurrentPeriodStart != subNextMonth(*ada.TrialEnd) {
			t.Fatalf("after the renewal %+v", got)
		}
		for _, id := range []string{trialInvoice, *got.LatestInvoice} {
			if inv := subInvoice(t, o, id); inv.Status != "paid" || inv.TotalAmount != 900 {
				t.Fatalf("Ada's invoice %s: %s %d", id, inv.Status, inv.TotalAmount)
			}
		}

		// 4. Grace's card saved from 0341 declines at her trial end: dunning.
		grace := walkSubscribe(t, m, price, "Grace Hopper", "grace@example.com", "4000000000000341")
		walkAdvance(t, m, "604800")
		if st := subGet(t, m, grace.Id).Status; st != wire.SubscriptionStatusPastDue {
			t.Fatalf("after the failed charge: %s", st)
		}
		stage, hosted := walkFailed(t, m)
		if stage != "notice" || !strings.HasPrefix(hosted, target.CheckoutURL+"/i/") {
			t.Fatalf("first failure: stage %q, hosted %q", stage, hosted)
		}
		if mail := dunningMails(t, o, "Payment failed", 1)[0]; mail.To != "grace@example.com" || !strings.Contains(mail.Text, hosted) {
			t.Fatalf("notice e-mail to %s:\n%s", mail.To, mail.Text)
		}
		walkAdvance(t, m, "259200")
		if stage, _ = walkFailed(t, m); stage != "warning" {
			t.Fatalf("second failure: stage %q", stage)
		}
		dunningMails(t, o, "Second reminder", 1)

		// 5. Grace pays on the hosted invoice page.
		page := strings.TrimPrefix(hosted, target.CheckoutURL)
		if code, body := hostedGet(t, page); code != http.StatusOK || !strings.Contains(body, "9.00") {
			t.Fatalf("hosted invoice page: %d", code)
		}
		if code, _, _ := hostedPost(t, page+"/pay", cardForm("4242424242424242")); code != http.StatusSeeOther {
			t.Fatalf("paying the hosted invoice: %d", code)
		}
		if st := subGet(t, m, grace.Id).Status; st != wire.SubscriptionStatusActive {
			t.Fatalf("after paying: %s", st)
		}

		// 6. The dashboard shows it all.
		ctx := context.Background()
		for _, s := range []api.Subscription{ada, grace} {
			d, err := o.Client.GetDashboardSubscriptionWithResponse(ctx, dashTest, s.Id)
			if err != nil || d.JSON200 == nil {
				t.Fatalf("dashboard subscription %s: %v", s.Id, err)
			}
			if d.JSON200.Subscription.Status != wire.SubscriptionStatusActive || len(d.JSON200.Invoices) == 0 || len(d.JSON200.Events) == 0 {
				t.Fatalf("dashboard subscription %s: %s, %d invoices, %d events", s.Id, d.JSON200.Subscription.Status, len(d.JSON200.Invoices), len(d.JSON200.Events))
			}
		}
		li, err := o.Client.ListInvoicesWithResponse(ctx, dashTest, &dash.ListInvoicesParams{Status: ptr(dash.ListInvoicesParamsStatus("paid"))})
		if err != nil || li.JSON200 == nil || len(li.JSON200.Data) != 3 {
			t.Fatalf("dashboard paid invoices: %v %s", err, li.Body)
		}
		var subjects []string
		for _, msg := range receiptsIn(t, o, 7, 15*time.Second) {
			subjects = append(subjects, msg.To+": "+msg.Subject)
		}
		for _, want := range [][2]string{{"ada@example.com", "trial ends"}, {"ada@example.com", "receipt"},
			{"grace@example.com", "Payment failed"}, {"grace@example.com", "Second reminder"}, {"grace@example.com", "receipt"}} {
			if !slices.ContainsFunc(subjects, func(s string) bool { return strings.HasPrefix(s, want[0]+": ") && strings.Contains(s, want[1]) }) {
				t.Fatalf("test mailbox lacks %q to %s: %q", want[1], want[0], subjects)
			}
		}

		// Every event of the path arrived signed with the endpoint's secret.
		want := []string{"customer.subscription.created", "checkout.session.completed", "customer.subscription.trial_will_end",
			"invoice.finalized", "invoice.payment_succeeded", "invoice.paid",
			"customer.subscription.updated", "invoice.payment_failed"}
		deadline := time.Now().Add(30 * time.Second)
		for {
			seen := map[string]bool{}
			for _, h := range rc.got() {
				if !hookSignedBy(t, h, secret) {
					t.Fatalf("a delivery not signed with the endpoint's secret: %s", h.Body)
				}
				var e struct {
					Type string `json:"type"`
				}
				_ = json.Unmarshal(h.Body, &e)
				seen[e.Type] = true
			}
			missing := slices.DeleteFunc(slices.Clone(want), func(s string) bool { return seen[s] })
			if len(missing) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the receiver got no signed %v", missing)
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
}
