package conformance

import (
	"testing"

	"github.com/kassa-pay/kassa/conformance/harness"
	capi "github.com/kassa-pay/kassa/openapi/gen/checkoutapi"
)

// The outcomes of every sandbox test card and IBAN (D6) through the browser API.
func TestCheckoutPayOutcomes(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "D6", "4242424242424242 succeeds: session complete, one payment, completed and payment_intent.succeeded once", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		m := newMerchant(t, true)
		s := paySession(t, m)
		res := payConfirmOK(t, s, payCard(payCardOK), capi.ConfirmResultStatusSucceeded)
		if res.Object != "checkout.confirmation" || res.Session.Status != "complete" || res.NextAction != nil {
			t.Fatalf("result = %+v", res)
		}
		if res.RedirectUrl == nil || *res.RedirectUrl != "https://shop.example/thanks" {
			t.Fatalf("redirect_url = %v, want the success_url", res.RedirectUrl)
		}
		if p := res.Session.Payment; p == nil || p.Status != "succeeded" || p.Card == nil || p.Card.Last4 != "4242" {
			t.Fatalf("buyer payment = %+v", p)
		}
		ms, p := payPayment(t, m, s.Id)
		if ms.Status != "complete" || p == nil || p.Status != "succeeded" || p.Amount != 2500 || p.Currency != "EUR" {
			t.Fatalf("merchant view: session %s payment %+v", ms.Status, p)
		}
		payWantEvents(t, m, payEventCompleted, s.Id, 1)
		payWantEvents(t, m, payEventSucceeded, s.Id, 1)
	})

	for _, tc := range []struct{ number, decline string }{
		{"4000000000000002", "generic_decline"},
		{"4000000000009995", "insufficient_funds"},
		{"4000000000009987", "lost_card"},
		{"4000000000000069", "expired_card"},
		{"4000000000000127", "incorrect_cvc"},
	} {
		harness.Rule(t, "D6", tc.number+" is declined "+tc.decline+" (402 card_declined) and the session stays open for a retry", func(t *testing.T) {
			t.Parallel()
			payNeedsCheckout(t)
			m := newMerchant(t, true)
			s := paySession(t, m)
			resp := payConfirm(t, s, payCard(tc.number))
			payWantDecline(t, resp.HTTPResponse, resp.Body, tc.decline)
			v := payView(t, s.Id, s.ClientSecret)
			if v.JSON200 == nil || v.JSON200.Status != "open" {
				t.Fatalf("after a decline the view is %d %s, want the open session", v.StatusCode(), v.Body)
			}
			evs := payWantEvents(t, m, payEventFailed, s.Id, 1)
			obj := evs[0].Data.Object
			if obj["decline_code"] != tc.decline || obj["failure_code"] != "card_declined" || obj["payment_method"] != "card" {
				t.Fatalf("payment_failed data.object = %v", obj)
			}
			if card, _ := obj["card"].(map[string]any); card == nil || card["last4"] != tc.number[12:] {
				t.Fatalf("payment_failed card = %v, want last4 %s", obj["card"], tc.number[12:])
			}
			if ms := csGet(t, m.Test, s.Id); ms.Status != "open" || ms.Payment != nil {
				t.Fatalf("merchant view after decline: %s %+v", ms.Status, ms.Payment)
			}
			// The buyer tries again with a good card.
			payConfirmOK(t, s, payCard(payCardOK), capi.ConfirmResultStatusSucceeded)
			payWantEvents(t, m, payEventCompleted, s.Id, 1)
		})
	}

	harness.Rule(t, "D6", "3-D Secure approved: requires_action with payment_intent.requires_action, then complete", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		m := newMerchant(t, true)
		s := paySession(t, m)
		res := payConfirmOK(t, s, payCard(payCard3DS), capi.ConfirmResultStatusRequiresAction)
		if res.NextAction == nil || res.NextAction.Type != "three_d_secure" || res.Session.Status != "open" || res.RedirectUrl != nil {
			t.Fatalf("requires_action result = %+v", res)
		}
		v := payView(t, s.Id, s.ClientSecret)
		if v.JSON200 == nil || v.JSON200.NextAction == nil || v.JSON200.NextAction.Type != "three_d_secure" {
			t.Fatalf("view while pending: %d %s", v.StatusCode(), v.Body)
		}
		evs := payWantEvents(t, m, payEventAction, s.Id, 1)
		if obj := evs[0].Data.Object; obj["status"] != "requires_action" || obj["amount"] != float64(2500) {
			t.Fatalf("requires_action data.object = %v", obj)
		}
		payWantEvents(t, m, payEventCompleted, s.Id, 0)
		a := payAction(t, s, true)
		if a.JSON200 == nil || a.JSON200.Status != "succeeded" || a.JSON200.Session.Status != "complete" {
			t.Fatalf("approve: %d %s", a.StatusCode(), a.Body)
		}
		_, p := payPayment(t, m, s.Id)
		if p == nil || p.Status != "succeeded" || p.Card == nil || p.Card.Country != "DE" || p.Card.Last4 != "3184" {
			t.Fatalf("payment after 3-D Secure = %+v", p)
		}
		payWantEvents(t, m, payEventCompleted, s.Id, 1)
	})

	harness.Rule(t, "D6", "3-D Secure failed: 402 authentication_failed, session open, no pending action left", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		m := newMerchant(t, true)
		s := paySession(t, m)
		payConfirmOK(t, s, payCard(payCard3DS), capi.ConfirmResultStatusRequiresAction)
		a := payAction(t, s, false)
		payWantDecline(t, a.HTTPResponse, a.Body, "authentication_failed")
		v := payView(t, s.Id, s.ClientSecret)
		if v.JSON200 == nil || v.JSON200.Status != "open" || v.JSON200.NextAction != nil {
			t.Fatalf("view after a failed challenge: %d %s", v.StatusCode(), v.Body)
		}
		again := payAction(t, s, true)
		payWantErr(t, again.HTTPResponse, again.Body, 422, "invalid_state", "no_action_pending", "")
		payWantEvents(t, m, payEventAction, s.Id, 1)
		evs := payWantEvents(t, m, payEventFailed, s.Id, 1)
		if evs[0].Data.Object["decline_code"] != "authentication_failed" {
			t.Fatalf("payment_failed = %v", evs[0].Data.Object)
		}
	})

	for _, number := range []string{payCardDispute, payCardInstant} {
		harness.Rule(t, "D6", number+" succeeds at once", func(t *testing.T) {
			t.Parallel()
			payNeedsCheckout(t)
			m := newMerchant(t, true)
			s := paySession(t, m)
			payConfirmOK(t, s, payCard(number), capi.ConfirmResultStatusSucceeded)
			if _, p := payPayment(t, m, s.Id); p == nil || p.Status != "succeeded" {
				t.Fatalf("payment = %+v", p)
			}
		})
	}

	for _, iban := range []string{payIBANOK, payIBANFailsLater} {
		harness.Rule(t, "D6", "SEPA "+iban+" is processing: session complete, payment processing, checkout.session.completed once and async_payment_pending", func(t *testing.T) {
			t.Parallel()
			payNeedsCheckout(t)
			m := newMerchant(t, true)
			s := paySession(t, m)
			res := payConfirmOK(t, s, paySEPA(iban), capi.ConfirmResultStatusProcessing)
			if res.Session.Status != "complete" || res.RedirectUrl == nil || *res.RedirectUrl != "https://shop.example/thanks" {
				t.Fatalf("processing result = %+v", res)
			}
			ms, p := payPayment(t, m, s.Id)
			if ms.Status != "complete" || p == nil || p.Status != "processing" || p.PaymentMethod != "sepa_debit" || p.Card != nil {
				t.Fatalf("merchant view: %s %+v", ms.Status, p)
			}
			payWantEvents(t, m, payEventPending, s.Id, 1)
			payWantEvents(t, m, payEventCompleted, s.Id, 1)
			// The secret is no longer valid once the session is complete (interface 3.1).
			v := payView(t, s.Id, s.ClientSecret)
			payWantErr(t, v.HTTPResponse, v.Body, 422, "invalid_state", "session_expired", "")
		})
	}
}
