package conformance

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/kassa-pay/kassa/conformance/harness"
	capi "github.com/kassa-pay/kassa/openapi/gen/checkoutapi"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

// Saving a card that asks for 3-D Secure (the sandbox's 4000002760003184) for a subscription,
// on each path that saves one, and collecting a renewal from such a card.

// subAction answers the 3-D Secure step of first payment id with its client secret.
func subAction(t *testing.T, secret, id string, approve bool) *capi.ResolveBuyerPaymentIntentActionResponse {
	t.Helper()
	resp, err := payClient(t, secret).ResolveBuyerPaymentIntentActionWithResponse(context.Background(), id, capi.ActionRequest{Approve: approve})
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// subWantAction fails unless v is the first payment waiting for 3-D Secure.
func subWantAction(t *testing.T, what string, v *capi.BuyerPaymentIntent, body []byte) {
	t.Helper()
	if v == nil || v.Status != capi.BuyerPaymentIntentStatusRequiresAction || v.NextAction == nil ||
		v.NextAction.Type != capi.NextActionTypeThreeDSecure || v.NextAction.RedirectUrl != nil || v.SubscriptionStatus != "incomplete" ||
		v.PaymentMethod != nil {
		t.Fatalf("%s: want requires_action with next_action three_d_secure: %s", what, body)
	}
}

// subWaiting3DS confirms subscription s's first payment with the 3-D Secure card: it waits
// for the challenge. It answers the first payment's id and client secret.
func subWaiting3DS(t *testing.T, s api.Subscription) (id, secret string) {
	t.Helper()
	id, secret = subPI(t, s)
	r := subConfirm(t, secret, id, payCard(payCard3DS))
	subWantAction(t, "confirm", r.JSON200, r.Body)
	return id, secret
}

// subTrial3DS creates a subscription with a 14-day trial on a frozen clock and saves
// 4000002760003184 for it through the challenge.
func subTrial3DS(t *testing.T, o *DashOwner) api.Subscription {
	t.Helper()
	s := subTrial(t, o.Merchant)
	id, secret := subWaiting3DS(t, s)
	if a := subAction(t, secret, id, true).JSON200; a == nil || a.SubscriptionStatus != "trialing" {
		t.Fatal("the trial's challenge did not save the card")
	}
	return s
}

func TestSubscriptionsThreeDSecure(t *testing.T) {
	t.Parallel()
	const day = int64(86400)
	// plainWaiting: a subscription without a trial whose first payment waits for the
	// challenge of saving the 3-D Secure card.
	plainWaiting := func(t *testing.T) (*DashOwner, api.Subscription, string, string) {
		t.Helper()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		s := subPlain(t, o)
		id, secret := subWaiting3DS(t, s)
		return o, s, id, secret
	}

	harness.Rule(t, "D14", "saving a card that asks for 3-D Secure for a trial answers requires_action; the challenge saves it, makes it the default and the subscription trialing", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		m := newMerchant(t, true)
		s := subTrial(t, m)
		id, secret := subWaiting3DS(t, s)
		v, err := payClient(t, secret).GetBuyerPaymentIntentWithResponse(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		subWantAction(t, "view while waiting", v.JSON200, v.Body)
		if got := subGet(t, m, s.Id); got.Status != wire.SubscriptionStatusIncomplete || got.DefaultPaymentMethod != nil {
			t.Fatalf("saved before the challenge: %+v", got)
		}
		a := subAction(t, secret, id, true)
		if a.JSON200 == nil || a.JSON200.Status != capi.BuyerPaymentIntentStatusSucceeded || a.JSON200.NextAction != nil ||
			a.JSON200.SubscriptionStatus != "trialing" || a.JSON200.PaymentMethod == nil || a.JSON200.PaymentMethod.Last4 != "3184" {
			t.Fatalf("after the challenge: %d %s", a.StatusCode(), a.Body)
		}
		got := subGet(t, m, s.Id)
		if got.Status != wire.SubscriptionStatusTrialing || got.DefaultPaymentMethod == nil || got.DefaultPaymentMethod.Last4 != "3184" {
			t.Fatalf("subscription %+v", got)
		}
		subWantEvents(t, m, s.Id, "customer.subscription.created", "customer.subscription.updated")
		// Nothing waits any more.
		again := subAction(t, secret, id, true)
		wantErr(t, again, again.HTTPResponse, again.Body, http.StatusUnprocessableEntity, "invalid_state", "payment_intent_unexpected_state", "")
	})

	harness.Rule(t, "D14", "without a trial, a card that asks for 3-D Secure is saved through its challenge, then the first invoice's charge is challenged and paid: active, the card the default", func(t *testing.T) {
		t.Parallel()
		o, s, id, secret := plainWaiting(t)
		if inv := subInvoice(t, o, *s.LatestInvoice); inv.Status != "open" || inv.AttemptCount != 0 {
			t.Fatalf("charged before the challenge: %+v", inv)
		}
		// The setup's challenge saves the card; its charge (on-session) asks again.
		a := subAction(t, secret, id, true)
		subWantAction(t, "after the setup's challenge", a.JSON200, a.Body)
		a = subAction(t, secret, id, true)
		if a.JSON200 == nil || a.JSON200.Status != capi.BuyerPaymentIntentStatusSucceeded || a.JSON200.SubscriptionStatus != "active" ||
			a.JSON200.PaymentMethod == nil || a.JSON200.PaymentMethod.Last4 != "3184" {
			t.Fatalf("after the charge's challenge: %d %s", a.StatusCode(), a.Body)
		}
		inv := subInvoice(t, o, *s.LatestInvoice)
		if inv.Status != "paid" || subPaymentOf(t, o, inv).Amount != 900 {
			t.Fatalf("first invoice %+v", inv)
		}
		if got := subGet(t, o.Merchant, s.Id); got.Status != wire.SubscriptionStatusActive || got.DefaultPaymentMethod == nil ||
			got.DefaultPaymentMethod.Last4 != "3184" {
			t.Fatalf("subscription %+v", got)
		}
	})

	harness.Rule(t, "D14", "a failed 3-D Secure challenge while saving is 402 card_declined / authentication_failed; the subscription stays incomplete for another card", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		m := newMerchant(t, true)
		s := subTrial(t, m)
		id, secret := subWaiting3DS(t, s)
		f := subAction(t, secret, id, false)
		wantErr(t, f, f.HTTPResponse, f.Body, http.StatusPaymentRequired, "card_error", "card_declined", "")
		if !strings.Contains(string(f.Body), `"decline_code":"authentication_failed"`) {
			t.Fatalf("failed challenge %s", f.Body)
		}
		if got := subGet(t, m, s.Id); got.Status != wire.SubscriptionStatusIncomplete || got.DefaultPaymentMethod != nil {
			t.Fatalf("after the failed challenge %+v", got)
		}
		none := subAction(t, secret, id, true)
		wantErr(t, none, none.HTTPResponse, none.Body, http.StatusUnprocessableEntity, "invalid_state", "no_action_pending", "")
		if v := subConfirm(t, secret, id, payCard(payCardOK)).JSON200; v == nil || v.SubscriptionStatus != "trialing" {
			t.Fatal("another card after the failed challenge was not saved")
		}
	})

	harness.Rule(t, "D14", "a subscription checkout session paid with a card that asks for 3-D Secure answers requires_action until its challenges pass, then completes with the subscription active", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		m := newMerchant(t, true)
		s, _ := subCheckoutSession(t, m, 0)
		c := payConfirmOK(t, s, payCard(payCard3DS), capi.ConfirmResultStatusRequiresAction)
		if c.NextAction == nil || c.NextAction.Type != capi.NextActionTypeThreeDSecure || c.Session.Status != capi.BuyerSessionStatusOpen {
			t.Fatalf("confirm: %+v", c)
		}
		if v := payView(t, s.Id, s.ClientSecret).JSON200; v == nil || v.NextAction == nil {
			t.Fatal("the session's view does not show the pending challenge")
		}
		// The setup's challenge, then the first invoice charge's.
		a := payAction(t, s, true)
		if a.JSON200 == nil || a.JSON200.Status != capi.ConfirmResultStatusRequiresAction {
			t.Fatalf("after the setup's challenge: %d %s", a.StatusCode(), a.Body)
		}
		a = payAction(t, s, true)
		if a.JSON200 == nil || a.JSON200.Status != capi.ConfirmResultStatusSucceeded {
			t.Fatalf("after the charge's challenge: %d %s", a.StatusCode(), a.Body)
		}
		got := csGet(t, m.Test, s.Id)
		if got.Status != wire.CheckoutSessionStatusComplete || got.Subscription == nil {
			t.Fatalf("session %s subscription %v", got.Status, got.Subscription)
		}
		sub := subGet(t, m, *got.Subscription)
		if sub.Status != wire.SubscriptionStatusActive || sub.DefaultPaymentMethod == nil || sub.DefaultPaymentMethod.Last4 != "3184" {
			t.Fatalf("subscription %+v", sub)
		}
	})

	harness.Rule(t, "D14", "a subscription checkout session with a trial: a failed 3-D Secure challenge is 402 authentication_failed, a passed one completes it trialing", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		m := newMerchant(t, true)
		s, _ := subCheckoutSession(t, m, 7)
		payConfirmOK(t, s, payCard(payCard3DS), capi.ConfirmResultStatusRequiresAction)
		f := payAction(t, s, false)
		wantErr(t, f, f.HTTPResponse, f.Body, http.StatusPaymentRequired, "card_error", "card_declined", "")
		if !strings.Contains(string(f.Body), `"decline_code":"authentication_failed"`) {
			t.Fatalf("failed challenge %s", f.Body)
		}
		payConfirmOK(t, s, payCard(payCard3DS), capi.ConfirmResultStatusRequiresAction)
		if a := payAction(t, s, true); a.JSON200 == nil || a.JSON200.Status != capi.ConfirmResultStatusSucceeded {
			t.Fatalf("after the challenge: %d %s", a.StatusCode(), a.Body)
		}
		got := csGet(t, m.Test, s.Id)
		if sub := subGet(t, m, *got.Subscription); sub.Status != wire.SubscriptionStatusTrialing || sub.DefaultPaymentMethod == nil ||
			sub.DefaultPaymentMethod.Last4 != "3184" {
			t.Fatalf("subscription %+v", sub)
		}
	})

	harness.Rule(t, "D8", "a renewal of a saved card that asks for 3-D Secure declines authentication_required: invoice.payment_failed, retried on the schedule, and an e-mail asking the customer to confirm the payment on the hosted page (test clock)", func(t *testing.T) {
		t.Parallel()
		o := subFrozenOwner(t)
		s, failed := subPastDue3DS(t, o)
		end := *s.TrialEnd
		next := end + 3*day // not a hard decline: the schedule goes on
		inv := subWantDunning(t, o, failed.Id, "notice", 1, &next)
		p := evtList(t, o.Test, "invoice.payment_failed", 10).Data
		if len(p) != 1 || p[0].Data.Object["id"] != inv.Id {
			t.Fatalf("invoice.payment_failed: %d", len(p))
		}
		mail := dunningMails(t, o, "Payment failed", 1)[0]
		if !strings.Contains(mail.Text, *inv.HostedInvoiceUrl) || !strings.Contains(mail.Text, "confirm the payment") ||
			!strings.Contains(mail.Text, "3-D Secure") || strings.Contains(mail.Text, "another card") {
			t.Fatalf("authentication_required e-mail: %s", mail.Text)
		}
		clockAdvance(t, o.Test, 3*day)
		next = end + 7*day
		subWantDunning(t, o, inv.Id, "warning", 2, &next)
		if w := dunningMails(t, o, "Second reminder", 1)[0]; !strings.Contains(w.Text, "confirm the payment") {
			t.Fatalf("warning e-mail: %s", w.Text)
		}
	})

	harness.Rule(t, "D15", "the customer pays a renewal that needs 3-D Secure on the hosted page: the card is saved through its challenge, the charge's challenge pays the invoice, the subscription is active with that card (test clock)", func(t *testing.T) {
		t.Parallel()
		o := subFrozenOwner(t)
		s, inv := subPastDue3DS(t, o)
		token, page := *inv.PublicToken, "/i/"+*inv.PublicToken
		// The browser API answers requires_action before anything is charged.
		r, err := payClient(t, "").ConfirmBuyerInvoiceWithResponse(context.Background(), token, payCard(payCard3DS))
		if err != nil {
			t.Fatal(err)
		}
		if r.JSON200 == nil || r.JSON200.Status != capi.InvoiceConfirmResultStatusRequiresAction || r.JSON200.NextAction == nil ||
			r.JSON200.NextAction.Type != capi.NextActionTypeThreeDSecure || r.JSON200.Invoice.Status != capi.BuyerInvoiceStatusOpen {
			t.Fatalf("confirm: %d %s", r.StatusCode(), r.Body)
		}
		if a := subInvoice(t, o, inv.Id); a.AttemptCount != 1 {
			t.Fatalf("charged before the challenge: %d attempts", a.AttemptCount)
		}
		// A failed challenge is the documented decline; the invoice stays open.
		code, body, _ := hostedPost(t, page+"/3ds", url.Values{"action": {"fail"}})
		if code != http.StatusPaymentRequired || !strings.Contains(body, "card_number") {
			t.Fatalf("failed challenge: %d", code)
		}
		// The page asks again with the form; the setup's challenge saves the card, the charge's pays.
		code, _, h := hostedPost(t, page+"/pay", cardForm(payCard3DS))
		if code != http.StatusSeeOther || h.Get("Location") != page+"?step=3ds" {
			t.Fatalf("pay: %d %v", code, h)
		}
		code, _, h = hostedPost(t, page+"/3ds", url.Values{"action": {"complete"}})
		if code != http.StatusSeeOther || h.Get("Location") != page+"?step=3ds" {
			t.Fatalf("the setup's challenge: %d %v", code, h)
		}
		code, _, h = hostedPost(t, page+"/3ds", url.Values{"action": {"complete"}})
		if code != http.StatusSeeOther || h.Get("Location") != page {
			t.Fatalf("the charge's challenge: %d %v", code, h)
		}
		paid := subInvoice(t, o, inv.Id)
		if paid.Status != "paid" || paid.NextPaymentAttempt != nil {
			t.Fatalf("invoice %+v", paid)
		}
		after := subGet(t, o.Merchant, s.Id)
		if after.Status != wire.SubscriptionStatusActive || after.DefaultPaymentMethod == nil || after.DefaultPaymentMethod.Last4 != "3184" {
			t.Fatalf("subscription %+v", after)
		}
		if evs := invoiceEvents(t, o.Test, inv.Id); !strings.Contains(strings.Join(evs, ","), "invoice.paid") {
			t.Fatalf("invoice events %v", evs)
		}
	})

	harness.Rule(t, "D14", "a first payment's 3-D Secure challenge left waiting lapses once the first invoice is paid with another card: answering it is 422 payment_intent_unexpected_state and saves and charges nothing", func(t *testing.T) {
		t.Parallel()
		o, s, id, secret := plainWaiting(t)
		// The customer pays the first invoice on its hosted page with another card instead.
		inv := subInvoice(t, o, *s.LatestInvoice)
		p, err := payClient(t, "").ConfirmBuyerInvoiceWithResponse(context.Background(), *inv.PublicToken, payCard(payCardOK))
		if err != nil {
			t.Fatal(err)
		}
		if p.JSON200 == nil || p.JSON200.Status != capi.InvoiceConfirmResultStatusSucceeded {
			t.Fatalf("paying with another card: %d %s", p.StatusCode(), p.Body)
		}
		old := subAction(t, secret, id, true)
		wantErr(t, old, old.HTTPResponse, old.Body, http.StatusUnprocessableEntity, "invalid_state", "payment_intent_unexpected_state", "")
		subWantSavedNothing(t, o, s.Id, inv.Id, "4242")
	})

	harness.Rule(t, "D14", "a first payment's 3-D Secure challenge left waiting lapses once the subscription is canceled: answering it is 422 payment_intent_unexpected_state and saves and charges nothing", func(t *testing.T) {
		t.Parallel()
		o, s, id, secret := plainWaiting(t)
		if c := catDecode[api.Subscription](t, catPost(t, o.TestKey, "/v1/subscriptions/"+s.Id+"/cancel", map[string]any{"at_period_end": false})); c.Status != wire.SubscriptionStatusCanceled {
			t.Fatalf("cancel: %s", c.Status)
		}
		old := subAction(t, secret, id, true)
		wantErr(t, old, old.HTTPResponse, old.Body, http.StatusUnprocessableEntity, "invalid_state", "payment_intent_unexpected_state", "")
		got := subGet(t, o.Merchant, s.Id)
		if got.Status != wire.SubscriptionStatusCanceled || got.DefaultPaymentMethod != nil {
			t.Fatalf("subscription %+v", got)
		}
		if inv := subInvoice(t, o, *s.LatestInvoice); inv.Status != "void" || inv.AmountPaid != 0 || inv.PaymentId != nil {
			t.Fatalf("invoice %+v", inv)
		}
		if n := len(evtList(t, o.Test, "payment_intent.succeeded", 10).Data); n != 0 {
			t.Fatalf("%d payments", n)
		}
	})

	// The hosted page of a renewal declined authentication_required, paid with the 3-D Secure
	// card again: its saving waits for the challenge, and the old answer comes after end(o, s)
	// settled the invoice. The page shows the invoice as it is (status: its class) and takes
	// no payment: 422 with the page, or back to the page, which shows no challenge.
	staleOnPage := func(t *testing.T, end func(o *DashOwner, s api.Subscription, inv *dash.Invoice), status string) (*DashOwner, api.Subscription, *dash.Invoice) {
		t.Helper()
		o := subFrozenOwner(t)
		s, inv := subPastDue3DS(t, o)
		page := "/i/" + *inv.PublicToken
		if code, _, h := hostedPost(t, page+"/pay", cardForm(payCard3DS)); code != http.StatusSeeOther || h.Get("Location") != page+"?step=3ds" {
			t.Fatalf("pay: %d %v", code, h)
		}
		end(o, s, inv)
		code, body, h := hostedPost(t, page+"/3ds", url.Values{"action": {"complete"}})
		if loc := h.Get("Location"); code == http.StatusSeeOther && (loc == page || loc == page+"?step=3ds") {
			code, body = hostedGet(t, loc)
		} else if code != http.StatusUnprocessableEntity {
			t.Fatalf("old answer: %d %v", code, h.Get("Location"))
		}
		if !strings.Contains(body, status) || strings.Contains(body, `id="card-form"`) || strings.Contains(body, `id="invoice-challenge-form"`) {
			t.Fatalf("old answer: %d %s", code, body)
		}
		return o, s, subInvoice(t, o, inv.Id)
	}

	harness.Rule(t, "D15", "on the hosted page of a renewal, a 3-D Secure challenge left waiting lapses once the invoice is paid with another card: answering it saves and charges nothing (test clock)", func(t *testing.T) {
		t.Parallel()
		o, s, inv := staleOnPage(t, func(o *DashOwner, _ api.Subscription, inv *dash.Invoice) {
			p, err := payClient(t, "").ConfirmBuyerInvoiceWithResponse(context.Background(), *inv.PublicToken, payCard(payCardOK))
			if err != nil {
				t.Fatal(err)
			}
			if p.JSON200 == nil || p.JSON200.Status != capi.InvoiceConfirmResultStatusSucceeded {
				t.Fatalf("paying with another card: %d %s", p.StatusCode(), p.Body)
			}
		}, "status-paid")
		subWantSavedNothing(t, o, s.Id, inv.Id, "4242")
	})

	harness.Rule(t, "D15", "on the hosted page of a renewal, a 3-D Secure challenge left waiting lapses once the subscription is canceled: answering it saves and charges nothing (test clock)", func(t *testing.T) {
		t.Parallel()
		o, s, inv := staleOnPage(t, func(o *DashOwner, s api.Subscription, _ *dash.Invoice) {
			catDecode[api.Subscription](t, catPost(t, o.TestKey, "/v1/subscriptions/"+s.Id+"/cancel", map[string]any{"at_period_end": false}))
		}, "status-void")
		if inv.Status != "void" || inv.AmountPaid != 0 || inv.PaymentId != nil {
			t.Fatalf("the canceled subscription's invoice %+v", inv)
		}
		if n := len(evtList(t, o.Test, "payment_intent.succeeded", 10).Data); n != 0 {
			t.Fatalf("%d payments", n)
		}
		if got := subGet(t, o.Merchant, s.Id); got.Status != wire.SubscriptionStatusCanceled {
			t.Fatalf("subscription %+v", got)
		}
	})
}

// subWantSavedNothing fails unless subscription id's default card ends in last4 and its
// invoice invoiceID was paid once, by that card: the only payment of the merchant.
func subWantSavedNothing(t *testing.T, o *DashOwner, id, invoiceID, last4 string) {
	t.Helper()
	got := subGet(t, o.Merchant, id)
	if got.Status != wire.SubscriptionStatusActive || got.DefaultPaymentMethod == nil || got.DefaultPaymentMethod.Last4 != last4 {
		t.Fatalf("subscription %+v", got)
	}
	inv := subInvoice(t, o, invoiceID)
	if inv.Status != "paid" || inv.AmountPaid != 900 {
		t.Fatalf("invoice %+v", inv)
	}
	if pay := subPaymentOf(t, o, inv); pay.Amount != 900 {
		t.Fatalf("payment %+v", pay)
	}
	if n := len(evtList(t, o.Test, "payment_intent.succeeded", 10).Data); n != 1 {
		t.Fatalf("%d payments, want 1", n)
	}
}
