package conformance

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/conformance/harness"
	capi "github.com/kassa-pay/kassa/openapi/gen/checkoutapi"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
)

// Input checks, the client secret, cancel, expiry, exactly-once, isolation and the browser
// headers of the checkout browser API (interface 3.1, 5.2, 7; D6).
func TestCheckoutPayRules(t *testing.T) {
	t.Parallel()

	card := func(f func(c *capi.CardInput)) capi.ConfirmRequest {
		b := payCard(payCardOK)
		f(b.Card)
		return b
	}
	past := time.Now().AddDate(0, -2, 0)
	for _, tc := range []struct {
		name        string
		body        capi.ConfirmRequest
		code, param string
	}{
		{"a Luhn-invalid number", card(func(c *capi.CardInput) { c.Number = ptr("4242424242424241") }), "number_invalid", "card.number"},
		{"a too short number", card(func(c *capi.CardInput) { c.Number = ptr("42424242") }), "number_invalid", "card.number"},
		{"a missing number", card(func(c *capi.CardInput) { c.Number = nil }), "parameter_missing", "card.number"},
		{"exp_month 13", card(func(c *capi.CardInput) { c.ExpMonth = ptr(13) }), "exp_month_invalid", "card.exp_month"},
		{"exp_month 0", card(func(c *capi.CardInput) { c.ExpMonth = ptr(0) }), "exp_month_invalid", "card.exp_month"},
		{"a missing exp_year", card(func(c *capi.CardInput) { c.ExpYear = nil }), "parameter_missing", "card.exp_year"},
		{"exp_year 123", card(func(c *capi.CardInput) { c.ExpYear = ptr(123) }), "exp_year_invalid", "card.exp_year"},
		{"an expiry in the past", card(func(c *capi.CardInput) { c.ExpMonth, c.ExpYear = ptr(int(past.Month())), ptr(past.Year()) }), "card_expired", "card.exp_year"},
		{"a 2-digit CVC", card(func(c *capi.CardInput) { c.Cvc = ptr("12") }), "cvc_invalid", "card.cvc"},
		{"a 4-digit CVC on a visa", card(func(c *capi.CardInput) { c.Cvc = ptr("1234") }), "cvc_invalid", "card.cvc"},
		{"a non-digit CVC", card(func(c *capi.CardInput) { c.Cvc = ptr("12a") }), "cvc_invalid", "card.cvc"},
		{"a missing CVC", card(func(c *capi.CardInput) { c.Cvc = nil }), "parameter_missing", "card.cvc"},
		{"card method without card", capi.ConfirmRequest{PaymentMethod: "card"}, "parameter_missing", "card"},
		{"an unknown method", capi.ConfirmRequest{PaymentMethod: "klarna"}, "payment_method_invalid", "payment_method"},
		{"an invalid IBAN", paySEPA("DE89370400440532013001"), "iban_invalid", "sepa_debit.iban"},
		{"an IBAN of a non-SEPA country", paySEPA("US12345678901234567890"), "iban_invalid", "sepa_debit.iban"},
		{"a missing account holder", capi.ConfirmRequest{PaymentMethod: "sepa_debit", SepaDebit: &capi.SEPAInput{Iban: ptr(payIBANOK)}}, "parameter_missing", "sepa_debit.account_holder"},
		{"sepa_debit method without account", capi.ConfirmRequest{PaymentMethod: "sepa_debit"}, "parameter_missing", "sepa_debit"},
		{"an exp_year 51 years ahead", card(func(c *capi.CardInput) { c.ExpYear = ptr(time.Now().Year() + 51) }), "exp_year_invalid", "card.exp_year"},
		{"a cardholder name of 201 characters", card(func(c *capi.CardInput) { c.Name = ptr(strings.Repeat("a", 201)) }), "name_invalid", "card.name"},
		{"an account holder of 201 characters", capi.ConfirmRequest{PaymentMethod: "sepa_debit", SepaDebit: &capi.SEPAInput{
			Iban: ptr(payIBANOK), AccountHolder: ptr(strings.Repeat("a", 201))}}, "account_holder_invalid", "sepa_debit.account_holder"},
	} {
		harness.Rule(t, "D6", "confirm with "+tc.name+" is 400 "+tc.code+" naming "+tc.param+", nothing charged", func(t *testing.T) {
			t.Parallel()
			payNeedsCheckout(t)
			m := newMerchant(t, true)
			s := paySession(t, m)
			resp := payConfirm(t, s, tc.body)
			payWantErr(t, resp.HTTPResponse, resp.Body, 400, "invalid_request", tc.code, tc.param)
			if strings.Contains(string(resp.Body), "4242424242424241") || strings.Contains(string(resp.Body), "DE8937040044053201300") {
				t.Fatalf("the error repeats the number: %s", resp.Body)
			}
			payWantEvents(t, m, payEventFailed, s.Id, 0)
			if v := payView(t, s.Id, s.ClientSecret); v.JSON200 == nil || v.JSON200.Status != "open" {
				t.Fatalf("view after a bad input: %d %s", v.StatusCode(), v.Body)
			}
		})
	}

	harness.Rule(t, "D6", "sepa_debit on a non-EUR session is 400 payment_method_unsupported; the view offers only card", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		m := newMerchant(t, true)
		s := paySession(t, m, func(b *api.CheckoutSessionCreate) { b.Currency = "usd" })
		resp := payConfirm(t, s, paySEPA(payIBANOK))
		payWantErr(t, resp.HTTPResponse, resp.Body, 400, "invalid_request", "payment_method_unsupported", "payment_method")
		v := payView(t, s.Id, s.ClientSecret)
		if v.JSON200 == nil || len(v.JSON200.PaymentMethodTypes) != 1 || v.JSON200.PaymentMethodTypes[0] != "card" {
			t.Fatalf("view: %d %s", v.StatusCode(), v.Body)
		}
	})

	harness.Rule(t, "D3", "an unknown confirm field is 400 parameter_unknown", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		m := newMerchant(t, true)
		s := paySession(t, m)
		r := rawAt(t, target.CheckoutURL, "POST", "/api/v1/checkout/sessions/"+s.Id+"/confirm", s.ClientSecret,
			`{"payment_method":"card","card":{"number":"4242424242424242","exp_month":12,"exp_year":2040,"cvc":"123","pin":"1"}}`, nil)
		wantError(t, r.Status, r.Header, r.Body, 400, "invalid_request", "parameter_unknown", "card.pin")
	})

	harness.Rule(t, "5.2", "the view shows the public session, the merchant's name and never the secret, metadata or reference", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		m := newMerchant(t, true)
		s := paySession(t, m, func(b *api.CheckoutSessionCreate) {
			b.LineItems = &[]api.LineItemParams{{Name: "Book", Quantity: ptr(2), Amount: ptr(int64(1250))}}
		})
		v := payView(t, s.Id, s.ClientSecret)
		if v.JSON200 == nil {
			t.Fatalf("view: %d %s", v.StatusCode(), v.Body)
		}
		b := v.JSON200
		if b.Id != s.Id || b.Object != "checkout.session" || b.Mode != "test" || b.Status != "open" || b.Amount != 2500 ||
			b.Currency != "EUR" || b.CustomerEmail != "ada@example.com" || !strings.HasPrefix(b.MerchantName, "Conformance ") ||
			b.Description == nil || *b.Description != "Two books" || b.ExpiresAt != s.ExpiresAt || b.NextAction != nil || b.Payment != nil {
			t.Fatalf("view = %s", v.Body)
		}
		if len(b.LineItems) != 1 || b.LineItems[0].Name != "Book" || b.LineItems[0].Quantity != 2 || *b.LineItems[0].Amount != 1250 {
			t.Fatalf("line_items = %+v", b.LineItems)
		}
		if b.CancelUrl == nil || *b.CancelUrl != "https://shop.example/cart" || len(b.PaymentMethodTypes) != 2 {
			t.Fatalf("view = %s", v.Body)
		}
		for _, secret := range []string{s.ClientSecret, "order-1042", "order_id"} {
			if strings.Contains(string(v.Body), secret) {
				t.Fatalf("the view shows %q: %s", secret, v.Body)
			}
		}
	})

	harness.Rule(t, "5.2", "a wrong secret, another session's secret or an unknown id is 422 session_expired", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		m := newMerchant(t, true)
		a, b := paySession(t, m), paySession(t, m)
		wrong := a.ClientSecret[:len(a.ClientSecret)-4] + "AAAA"
		for _, c := range []struct{ id, secret string }{
			{a.Id, wrong}, {a.Id, b.ClientSecret}, {"cs_000000000000000000000000", a.ClientSecret}, {"cs_000000000000000000000000", "cs_000000000000000000000000_secret_" + strings.Repeat("x", 32)},
		} {
			v := payView(t, c.id, c.secret)
			payWantErr(t, v.HTTPResponse, v.Body, 422, "invalid_state", "session_expired", "")
			r, err := payClient(t, c.secret).ConfirmBuyerSessionWithResponse(context.Background(), c.id, payCard(payCardOK))
			if err != nil {
				t.Fatal(err)
			}
			payWantErr(t, r.HTTPResponse, r.Body, 422, "invalid_state", "session_expired", "")
		}
		if ms := csGet(t, m.Test, a.Id); ms.Status != "open" {
			t.Fatalf("session a is %s", ms.Status)
		}
	})

	harness.Rule(t, "5.2", "no bearer or a bearer that is not a client secret is 401 client_secret_missing", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		m := newMerchant(t, true)
		s := paySession(t, m)
		for _, secret := range []string{"", m.TestKey, "garbage"} {
			v := payView(t, s.Id, secret)
			payWantErr(t, v.HTTPResponse, v.Body, 401, "authentication_error", "client_secret_missing", "")
		}
	})

	harness.Rule(t, "5.2", "another merchant's secret never opens a session: 422 session_expired both ways", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		m1, m2 := newMerchant(t, true), newMerchant(t, true)
		s1, s2 := paySession(t, m1), paySession(t, m2)
		for _, c := range []struct{ id, secret string }{{s1.Id, s2.ClientSecret}, {s2.Id, s1.ClientSecret}} {
			r, err := payClient(t, c.secret).ConfirmBuyerSessionWithResponse(context.Background(), c.id, payCard(payCardOK))
			if err != nil {
				t.Fatal(err)
			}
			payWantErr(t, r.HTTPResponse, r.Body, 422, "invalid_state", "session_expired", "")
			x, err := payClient(t, c.secret).CancelBuyerSessionWithResponse(context.Background(), c.id)
			if err != nil {
				t.Fatal(err)
			}
			payWantErr(t, x.HTTPResponse, x.Body, 422, "invalid_state", "session_expired", "")
		}
		if a, b := csGet(t, m1.Test, s1.Id), csGet(t, m2.Test, s2.Id); a.Status != "open" || b.Status != "open" {
			t.Fatalf("statuses %s %s, want both open", a.Status, b.Status)
		}
	})

	harness.Rule(t, "3.1", "after success the secret is invalid: view, confirm and cancel answer 422 session_expired", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		m := newMerchant(t, true)
		s := paySession(t, m)
		payConfirmOK(t, s, payCard(payCardOK), capi.ConfirmResultStatusSucceeded)
		v := payView(t, s.Id, s.ClientSecret)
		payWantErr(t, v.HTTPResponse, v.Body, 422, "invalid_state", "session_expired", "")
		c := payConfirm(t, s, payCard(payCardOK))
		payWantErr(t, c.HTTPResponse, c.Body, 422, "invalid_state", "session_expired", "")
		x := payCancel(t, s)
		payWantErr(t, x.HTTPResponse, x.Body, 422, "invalid_state", "session_expired", "")
		payWantEvents(t, m, payEventCompleted, s.Id, 1)
		if ms := csGet(t, m.Test, s.Id); ms.Status != "complete" {
			t.Fatalf("status %s", ms.Status)
		}
	})

	harness.Rule(t, "D6", "cancel: canceled with customer_canceled, checkout.session.canceled once, redirect to cancel_url", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		m := newMerchant(t, true)
		s := paySession(t, m)
		x := payCancel(t, s)
		if x.JSON200 == nil {
			t.Fatalf("cancel: %d %s", x.StatusCode(), x.Body)
		}
		r := x.JSON200
		if r.Object != "checkout.cancellation" || r.Session.Status != "canceled" || r.RedirectUrl == nil || *r.RedirectUrl != "https://shop.example/cart" ||
			r.Session.CancellationReason == nil || *r.Session.CancellationReason != "customer_canceled" {
			t.Fatalf("cancel = %s", x.Body)
		}
		ms := csGet(t, m.Test, s.Id)
		if ms.Status != "canceled" || ms.CancellationReason == nil || *ms.CancellationReason != "customer_canceled" {
			t.Fatalf("merchant view = %+v", ms)
		}
		evs := payWantEvents(t, m, payEventCanceled, s.Id, 1)
		if evs[0].Data.Object["status"] != "canceled" {
			t.Fatalf("event = %v", evs[0].Data.Object)
		}
		again := payCancel(t, s)
		payWantErr(t, again.HTTPResponse, again.Body, 422, "invalid_state", "session_expired", "")
		c := payConfirm(t, s, payCard(payCardOK))
		payWantErr(t, c.HTTPResponse, c.Body, 422, "invalid_state", "session_expired", "")
		payWantEvents(t, m, payEventCanceled, s.Id, 1)
	})

	harness.Rule(t, "D6", "a session past its 24 hours is expired for the buyer: 422 session_expired and one expired event", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		m := newMerchant(t, true)
		s := paySession(t, m)
		clockAdvance(t, m.Test, 24*3600+1)
		v := payView(t, s.Id, s.ClientSecret)
		payWantErr(t, v.HTTPResponse, v.Body, 422, "invalid_state", "session_expired", "")
		c := payConfirm(t, s, payCard(payCardOK))
		payWantErr(t, c.HTTPResponse, c.Body, 422, "invalid_state", "session_expired", "")
		payWantEvents(t, m, csExpiredEvent, s.Id, 1)
		if ms := csGet(t, m.Test, s.Id); ms.Status != "expired" || ms.Payment != nil {
			t.Fatalf("merchant view: %s", ms.Status)
		}
	})

	harness.Rule(t, "D6", "a session expired by the merchant refuses its buyer with 422 session_expired", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		m := newMerchant(t, true)
		s := paySession(t, m)
		if r := csExpire(t, m.Test, s.Id); r.JSON200 == nil {
			t.Fatalf("expire: %d", r.StatusCode())
		}
		v := payView(t, s.Id, s.ClientSecret)
		payWantErr(t, v.HTTPResponse, v.Body, 422, "invalid_state", "session_expired", "")
	})

	harness.Rule(t, "D6", "expire on a complete session is 422 session_already_completed, on a canceled one 422 session_expired; neither writes an expired event", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		m := newMerchant(t, true)
		paid, canceled := paySession(t, m), paySession(t, m)
		payConfirmOK(t, paid, payCard(payCardOK), capi.ConfirmResultStatusSucceeded)
		if x := payCancel(t, canceled); x.JSON200 == nil {
			t.Fatalf("cancel: %d %s", x.StatusCode(), x.Body)
		}
		r := csExpire(t, m.Test, paid.Id)
		wantErr(t, r, r.HTTPResponse, r.Body, 422, "invalid_state", "session_already_completed", "")
		r = csExpire(t, m.Test, canceled.Id)
		wantErr(t, r, r.HTTPResponse, r.Body, 422, "invalid_state", "session_expired", "")
		for _, c := range []struct{ id, status string }{{paid.Id, "complete"}, {canceled.Id, "canceled"}} {
			if ms := csGet(t, m.Test, c.id); string(ms.Status) != c.status {
				t.Fatalf("session %s is %s after expire, want %s", c.id, ms.Status, c.status)
			}
			payWantEvents(t, m, csExpiredEvent, c.id, 0)
		}
	})

	harness.Rule(t, "D6", "exactly once: 10 concurrent confirms give one success, one payment, one completed event", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		m := newMerchant(t, true)
		s := paySession(t, m)
		const n = 10
		codes := make([]int, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				r, err := payClient(t, s.ClientSecret).ConfirmBuyerSessionWithResponse(context.Background(), s.Id, payCard(payCardOK))
				if err != nil {
					t.Error(err)
					return
				}
				codes[i] = r.StatusCode()
				if r.StatusCode() != 200 {
					payWantErr(t, r.HTTPResponse, r.Body, 422, "invalid_state", "session_expired", "")
				}
			}()
		}
		close(start)
		wg.Wait()
		ok := 0
		for _, c := range codes {
			if c == 200 {
				ok++
			}
		}
		if ok != 1 {
			t.Fatalf("%d confirms succeeded (%v), want exactly 1", ok, codes)
		}
		payWantEvents(t, m, payEventCompleted, s.Id, 1)
		payWantEvents(t, m, payEventSucceeded, s.Id, 1)
		if _, p := payPayment(t, m, s.Id); p == nil || p.Status != "succeeded" {
			t.Fatalf("payment = %+v", p)
		}
	})

	harness.Rule(t, "D6", "card-testing guard: after 10 declines the session refuses confirms with 422 session_confirm_limit", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		m := newMerchant(t, true)
		s := paySession(t, m)
		for i := range 10 {
			r := payConfirm(t, s, payCard(payCardDecline))
			if r.StatusCode() != 402 {
				t.Fatalf("decline %d: %d %s", i+1, r.StatusCode(), r.Body)
			}
		}
		r := payConfirm(t, s, payCard(payCardOK))
		payWantErr(t, r.HTTPResponse, r.Body, 422, "invalid_state", "session_confirm_limit", "")
		if ms := csGet(t, m.Test, s.Id); ms.Status != "open" || ms.Payment != nil {
			t.Fatalf("merchant view: %s", ms.Status)
		}
	})

	harness.Rule(t, "D6", "a live session is refused cleanly: 503 processor_unavailable, nothing charged", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		m := newMerchant(t, true)
		s := csCreate(t, m.Live, sessionBody())
		v := payView(t, s.Id, s.ClientSecret)
		if v.JSON200 == nil || v.JSON200.Mode != "live" {
			t.Fatalf("live view: %d %s", v.StatusCode(), v.Body)
		}
		r := payConfirm(t, s, payCard(payCardOK))
		payWantErr(t, r.HTTPResponse, r.Body, 503, "api_error", "processor_unavailable", "")
		if !strings.Contains(string(r.Body), "live processor adapter") {
			t.Fatalf("the refusal does not name the missing live processor adapter: %s", r.Body)
		}
		if ms := csGet(t, m.Live, s.Id); ms.Status != "open" || ms.Payment != nil {
			t.Fatalf("live session after refusal: %s", ms.Status)
		}
	})

	harness.Rule(t, "D6", "CORS: any origin, preflight answered with the allowed methods and headers, no credentials", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		m := newMerchant(t, true)
		s := paySession(t, m)
		req, _ := http.NewRequest(http.MethodOptions, target.CheckoutURL+"/api/v1/checkout/sessions/"+s.Id+"/confirm", nil)
		req.Header.Set("Origin", "https://shop.example")
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "authorization, content-type")
		resp, err := http.DefaultClient.Do(req) // a preflight is not an API operation: not validated
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		h := resp.Header
		if resp.StatusCode != 204 || h.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") ||
			!strings.Contains(strings.ToLower(h.Get("Access-Control-Allow-Headers")), "authorization") ||
			!strings.Contains(strings.ToLower(h.Get("Access-Control-Allow-Headers")), "content-type") || h.Get("Access-Control-Allow-Credentials") != "" {
			t.Fatalf("preflight: %d %v", resp.StatusCode, h)
		}
		v := payView(t, s.Id, s.ClientSecret)
		if v.HTTPResponse.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Fatalf("GET without Access-Control-Allow-Origin: %v", v.HTTPResponse.Header)
		}
	})

	harness.Rule(t, "5.2", "every browser API answer carries Cache-Control: no-store", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		m := newMerchant(t, true)
		s := paySession(t, m)
		check := func(what string, h http.Header) {
			if h.Get("Cache-Control") != "no-store" {
				t.Fatalf("%s: Cache-Control = %q", what, h.Get("Cache-Control"))
			}
		}
		check("view", payView(t, s.Id, s.ClientSecret).HTTPResponse.Header)
		check("401", payView(t, s.Id, "").HTTPResponse.Header)
		check("402", payConfirm(t, s, payCard(payCardDecline)).HTTPResponse.Header)
		check("200 confirm", payConfirm(t, s, payCard(payCardOK)).HTTPResponse.Header)
		check("422", payView(t, s.Id, s.ClientSecret).HTTPResponse.Header)
		check("404", rawAt(t, target.CheckoutURL, "GET", "/api/v1/nothing", "", "", nil).Header)
	})

	harness.Rule(t, "D6", "the browser API serves its OpenAPI document at /api/v1/openapi.json", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		r, err := payClient(t, "").GetCheckoutSpecWithResponse(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if r.JSON200 == nil || (*r.JSON200)["openapi"] != "3.0.3" {
			t.Fatalf("spec: %d %.200s", r.StatusCode(), r.Body)
		}
		if paths, _ := (*r.JSON200)["paths"].(map[string]any); paths["/api/v1/checkout/sessions/{id}/confirm"] == nil {
			t.Fatalf("spec paths = %v", fmt.Sprint(paths))
		}
	})
}
