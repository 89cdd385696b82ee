package conformance

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/kassa-pay/kassa/conformance/harness"
	capi "github.com/kassa-pay/kassa/openapi/gen/checkoutapi"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

// subTrial creates a subscription with a 14-day trial and returns it.
func subTrial(t *testing.T, m *Merchant) api.Subscription {
	t.Helper()
	pr := subPrice(t, m, 900, &api.RecurringParams{Interval: wire.RecurringIntervalMonth, TrialPeriodDays: ptr(14)})
	return subCreate(t, m, subBody(pr.Id))
}

// subPI is the first payment's id: the client secret before _secret_.
func subPI(t *testing.T, s api.Subscription) (id, secret string) {
	t.Helper()
	if s.ClientSecret == nil {
		t.Fatalf("subscription %s has no client secret", s.Id)
	}
	id, _, ok := strings.Cut(*s.ClientSecret, "_secret_")
	if !ok || !strings.HasPrefix(id, "pi_") {
		t.Fatalf("client secret %q", *s.ClientSecret)
	}
	return id, *s.ClientSecret
}

func subConfirm(t *testing.T, secret, id string, body capi.ConfirmRequest) *capi.ConfirmBuyerPaymentIntentResponse {
	t.Helper()
	resp, err := payClient(t, secret).ConfirmBuyerPaymentIntentWithResponse(context.Background(), id, body)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestSubscriptionsFirstPayment(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "D14", "a subscription with a trial returns client_secret pi_…_secret_… and no invoice", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		m := newMerchant(t, true)
		s := subTrial(t, m)
		id, secret := subPI(t, s)
		resp, err := payClient(t, secret).GetBuyerPaymentIntentWithResponse(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		v := resp.JSON200
		if v == nil || v.Id != id || v.Status != capi.BuyerPaymentIntentStatusRequiresPaymentMethod || v.Amount != 0 ||
			v.RecurringAmount != 900 || v.TrialEnd == nil || *v.TrialEnd != *s.TrialEnd || v.PaymentMethod != nil || v.Mode != "test" {
			t.Fatalf("view: %d %s", resp.StatusCode(), resp.Body)
		}
		if s.LatestInvoice != nil {
			t.Fatalf("a trial has an invoice: %s", *s.LatestInvoice)
		}
	})

	harness.Rule(t, "3.4", "confirming the first payment of a trial saves the card, makes it the default and the subscription trialing, with customer.subscription.updated", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		m := newMerchant(t, true)
		s := subTrial(t, m)
		id, secret := subPI(t, s)
		resp := subConfirm(t, secret, id, payCard("4242424242424242"))
		v := resp.JSON200
		if v == nil || v.Status != capi.BuyerPaymentIntentStatusSucceeded || v.SubscriptionStatus != "trialing" || v.Amount != 0 ||
			v.PaymentMethod == nil || v.PaymentMethod.Last4 != "4242" || v.PaymentMethod.Brand != "visa" {
			t.Fatalf("confirm: %d %s", resp.StatusCode(), resp.Body)
		}
		got := subGet(t, m, s.Id)
		if got.Status != wire.SubscriptionStatusTrialing || got.DefaultPaymentMethod == nil || got.DefaultPaymentMethod.Last4 != "4242" ||
			got.DefaultPaymentMethod.Type != "card" || got.DefaultPaymentMethod.ExpMonth != 12 || strings.Contains(string(resp.Body), "424242424242") {
			t.Fatalf("subscription %+v", got)
		}
		subWantEvents(t, m, s.Id, "customer.subscription.created", "customer.subscription.updated")
		// Nothing was charged: no payment event.
		if evs := evtList(t, m.Test, "payment_intent.succeeded", 10).Data; len(evs) != 0 {
			t.Fatalf("a trial's confirmation charged: %d payment_intent.succeeded", len(evs))
		}
	})

	harness.Rule(t, "D14", "a SEPA account saves its mandate at once for a trial", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		m := newMerchant(t, true)
		s := subTrial(t, m)
		id, secret := subPI(t, s)
		if v := subConfirm(t, secret, id, paySEPA("DE89370400440532013000")).JSON200; v == nil || v.PaymentMethod == nil ||
			v.PaymentMethod.Type != "sepa_debit" || v.PaymentMethod.Last4 != "3000" || v.SubscriptionStatus != "trialing" {
			t.Fatalf("confirm %+v", v)
		}
	})

	harness.Rule(t, "D14", "a decline is 402 card_declined with decline_code and keeps the subscription incomplete for another try", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		m := newMerchant(t, true)
		s := subTrial(t, m)
		id, secret := subPI(t, s)
		r := subConfirm(t, secret, id, payCard("4000000000000002"))
		wantErr(t, r, r.HTTPResponse, r.Body, http.StatusPaymentRequired, "card_error", "card_declined", "")
		if !strings.Contains(string(r.Body), `"decline_code":"generic_decline"`) {
			t.Fatalf("decline body %s", r.Body)
		}
		if got := subGet(t, m, s.Id); got.Status != wire.SubscriptionStatusIncomplete || got.DefaultPaymentMethod != nil {
			t.Fatalf("after a decline %+v", got)
		}
		if v := subConfirm(t, secret, id, payCard("4242424242424242")).JSON200; v == nil || v.SubscriptionStatus != "trialing" {
			t.Fatalf("retry after the decline failed")
		}
	})

	harness.Rule(t, "D14", "the confirm body is checked as a session's confirm, naming the field", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		m := newMerchant(t, true)
		s := subTrial(t, m)
		id, secret := subPI(t, s)
		bad := payCard("4242424242424241")
		r := subConfirm(t, secret, id, bad)
		wantErr(t, r, r.HTTPResponse, r.Body, http.StatusBadRequest, "invalid_request", "number_invalid", "card.number")
		r = subConfirm(t, secret, id, paySEPA("DE00123"))
		wantErr(t, r, r.HTTPResponse, r.Body, http.StatusBadRequest, "invalid_request", "iban_invalid", "sepa_debit.iban")
	})

	harness.Rule(t, "D14", "confirming a first payment already confirmed, expired, or with a wrong secret is 422 payment_intent_unexpected_state", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		m := newMerchant(t, true)
		clockFreeze(t, m.Test)
		s := subTrial(t, m)
		id, secret := subPI(t, s)
		wrong := secret[:len(secret)-1] + "x"
		if strings.HasSuffix(secret, "x") {
			wrong = secret[:len(secret)-1] + "y"
		}
		r := subConfirm(t, wrong, id, payCard("4242424242424242"))
		wantErr(t, r, r.HTTPResponse, r.Body, http.StatusUnprocessableEntity, "invalid_state", "payment_intent_unexpected_state", "")
		other := subTrial(t, m)
		_, otherSecret := subPI(t, other)
		r = subConfirm(t, otherSecret, id, payCard("4242424242424242"))
		wantErr(t, r, r.HTTPResponse, r.Body, http.StatusUnprocessableEntity, "invalid_state", "payment_intent_unexpected_state", "")
		if v := subConfirm(t, secret, id, payCard("4242424242424242")).JSON200; v == nil {
			t.Fatal("first confirmation failed")
		}
		r = subConfirm(t, secret, id, payCard("4242424242424242"))
		wantErr(t, r, r.HTTPResponse, r.Body, http.StatusUnprocessableEntity, "invalid_state", "payment_intent_unexpected_state", "")
		// Expired: 23 hours after creation.
		late := subTrial(t, m)
		lid, lsecret := subPI(t, late)
		clockAdvance(t, m.Test, 23*3600)
		r = subConfirm(t, lsecret, lid, payCard("4242424242424242"))
		wantErr(t, r, r.HTTPResponse, r.Body, http.StatusUnprocessableEntity, "invalid_state", "payment_intent_unexpected_state", "")
		resp, err := payClient(t, lsecret).GetBuyerPaymentIntentWithResponse(context.Background(), lid)
		if err != nil || resp.JSON200 == nil || resp.JSON200.Status != capi.BuyerPaymentIntentStatusCanceled {
			t.Fatalf("expired view: %v %s", err, resp.Body)
		}
		// Without a bearer of the right form: 401.
		noSecret := subConfirm(t, "", lid, payCard("4242424242424242"))
		wantErr(t, noSecret, noSecret.HTTPResponse, noSecret.Body, http.StatusUnauthorized, "authentication_error", "client_secret_missing", "")
	})

	harness.Rule(t, "D14", "customer.subscription.trial_will_end fires 3 days before the trial end (test clock)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		m := newMerchant(t, true)
		clockFreeze(t, m.Test)
		s := subTrial(t, m)
		id, secret := subPI(t, s)
		subConfirm(t, secret, id, payCard("4242424242424242"))
		lead := *s.TrialEnd - 3*86400 - s.Created
		clockAdvance(t, m.Test, lead-1)
		subWantEvents(t, m, s.Id, "customer.subscription.created", "customer.subscription.updated")
		clockAdvance(t, m.Test, 1)
		subWantEvents(t, m, s.Id, "customer.subscription.created", "customer.subscription.updated", "customer.subscription.trial_will_end")
		evs := evtList(t, m.Test, "customer.subscription.trial_will_end", 10).Data
		if len(evs) != 1 || evs[0].Created != *s.TrialEnd-3*86400 {
			t.Fatalf("trial_will_end events %+v", evs)
		}
	})

	harness.Rule(t, "3.4", "a trialing subscription cancelled at period end stays trialing, then is canceled at the trial end with customer.subscription.deleted (test clock)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		m := newMerchant(t, true)
		clockFreeze(t, m.Test)
		s := subTrial(t, m)
		id, secret := subPI(t, s)
		subConfirm(t, secret, id, payCard("4242424242424242"))
		c := catDecode[api.Subscription](t, catPost(t, m.TestKey, "/v1/subscriptions/"+s.Id+"/cancel", map[string]any{"at_period_end": true}))
		if c.Status != wire.SubscriptionStatusTrialing || !c.CancelAtPeriodEnd || c.CanceledAt == nil || c.EndedAt != nil {
			t.Fatalf("pending cancellation %+v", c)
		}
		again := catDecode[api.Subscription](t, catPost(t, m.TestKey, "/v1/subscriptions/"+s.Id+"/cancel", map[string]any{"at_period_end": true}))
		if again.CanceledAt == nil || *again.CanceledAt != *c.CanceledAt {
			t.Fatalf("cancelled again with true changed it: %+v", again)
		}
		clockAdvance(t, m.Test, *s.TrialEnd-s.Created-1)
		if got := subGet(t, m, s.Id); got.Status != wire.SubscriptionStatusTrialing {
			t.Fatalf("before the period end: %s", got.Status)
		}
		clockAdvance(t, m.Test, 1)
		got := subGet(t, m, s.Id)
		if got.Status != wire.SubscriptionStatusCanceled || got.EndedAt == nil || *got.EndedAt != *s.TrialEnd || got.CancelAtPeriodEnd {
			t.Fatalf("at the period end: %+v", got)
		}
		subWantEvents(t, m, s.Id, "customer.subscription.created", "customer.subscription.updated", "customer.subscription.updated",
			"customer.subscription.trial_will_end", "customer.subscription.deleted")
	})

	harness.Rule(t, "D14", "cancel_at_period_end false through the update takes back a pending cancellation", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		m := newMerchant(t, true)
		clockFreeze(t, m.Test)
		s := subTrial(t, m)
		id, secret := subPI(t, s)
		subConfirm(t, secret, id, payCard("4242424242424242"))
		catDecode[api.Subscription](t, catPost(t, m.TestKey, "/v1/subscriptions/"+s.Id+"/cancel", map[string]any{}))
		u := catDecode[api.Subscription](t, catPost(t, m.TestKey, "/v1/subscriptions/"+s.Id, map[string]any{"cancel_at_period_end": false}))
		if u.CancelAtPeriodEnd || u.CanceledAt != nil || u.Status != wire.SubscriptionStatusTrialing {
			t.Fatalf("resumed %+v", u)
		}
		clockAdvance(t, m.Test, *s.TrialEnd-s.Created+1)
		if got := subGet(t, m, s.Id); got.Status != wire.SubscriptionStatusActive {
			t.Fatalf("a resumed subscription did not renew at the trial end: %s", got.Status)
		}
	})
}

func TestSubscriptionsLive(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "D14", "live subscriptions are their own: a live price subscribes in live, and confirming its first payment is 503 processor_unavailable (no live processor)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		m := newMerchant(t, true)
		p := catProduct(t, m.Live, "Live plan")
		pr := catCreatePrice(t, m.Live, p.Id, api.PriceCreate{Currency: "eur", UnitAmount: 900,
			Recurring: &api.RecurringParams{Interval: wire.RecurringIntervalMonth, TrialPeriodDays: ptr(7)}})
		s := catDecode[api.Subscription](t, catPost(t, m.LiveKey, "/v1/subscriptions", subBody(pr.Id)))
		catWantErr(t, catGet(t, m.TestKey, "/v1/subscriptions/"+s.Id, nil), http.StatusNotFound, "not_found", "subscription_not_found", "id")
		id, secret := subPI(t, s)
		r := subConfirm(t, secret, id, payCard("4242424242424242"))
		wantErr(t, r, r.HTTPResponse, r.Body, http.StatusServiceUnavailable, "api_error", "processor_unavailable", "")
		if got := catDecode[api.Subscription](t, catGet(t, m.LiveKey, "/v1/subscriptions/"+s.Id, nil)); got.Status != wire.SubscriptionStatusIncomplete {
			t.Fatalf("live subscription after the refused confirmation: %s", got.Status)
		}
	})
}
