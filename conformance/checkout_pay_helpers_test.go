package conformance

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	capi "github.com/kassa-pay/kassa/openapi/gen/checkoutapi"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
)

// Helpers of the checkout browser API cases (checkout_pay_*_test.go): names start with pay.

// Sandbox test data (D6).
const (
	payCardOK           = "4242424242424242" // succeeds; issued in the US (non-EEA), visa credit
	payCardDecline      = "4000000000000002" // declined: generic_decline
	payCardEEA          = "4000002760000016" // any other Luhn-valid number succeeds; 400000276… is DE
	payCard3DS          = "4000002760003184"
	payCardDispute      = "4000000000000259" // succeeds, disputed one minute later
	payCardInstant      = "4000000000000077"
	payIBANOK           = "DE89370400440532013000" // processing → succeeded
	payIBANFailsLater   = "DE62370400440532013001" // processing → failed, insufficient_funds
	payEventCompleted   = "checkout.session.completed"
	payEventSucceeded   = "payment_intent.succeeded"
	payEventFailed      = "payment_intent.payment_failed"
	payEventAction      = "payment_intent.requires_action"
	payEventPending     = "checkout.session.async_payment_pending"
	payEventCanceled    = "checkout.session.canceled"
	payDeclineCardError = "card_error"
)

// payNeedsCheckout skips when the target's checkout origin is unknown (an external target
// without KASSA_CHECKOUT_URL).
func payNeedsCheckout(t *testing.T) {
	t.Helper()
	if target.CheckoutURL == "" {
		t.Skip("KASSA_CHECKOUT_URL is not set for this target")
	}
}

// payClient is a browser API client that sends secret as its bearer ("" sends none).
func payClient(t *testing.T, secret string) *capi.ClientWithResponses {
	t.Helper()
	c, err := capi.NewClientWithResponses(target.CheckoutURL, capi.WithHTTPClient(transport.Client()),
		capi.WithRequestEditorFn(capi.RequestEditorFn(bearer(secret))))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// paySession creates a test session for m; with mutators applied to the default body.
func paySession(t *testing.T, m *Merchant, mutate ...func(*api.CheckoutSessionCreate)) *api.CheckoutSession {
	t.Helper()
	b := sessionBody()
	b.Reference = ptr("order-1042")
	b.Description = ptr("Two books")
	b.SuccessUrl = ptr("https://shop.example/thanks")
	b.CancelUrl = ptr("https://shop.example/cart")
	b.Metadata = &api.Metadata{"order_id": "1042"}
	for _, f := range mutate {
		f(&b)
	}
	return csCreate(t, m.Test, b)
}

// payCard is a confirm body for a card number with a valid future expiry and CVC.
func payCard(number string) capi.ConfirmRequest {
	return capi.ConfirmRequest{PaymentMethod: "card", Card: &capi.CardInput{
		Number: ptr(number), ExpMonth: ptr(12), ExpYear: ptr(time.Now().Year() + 3), Cvc: ptr("123"), Name: ptr("Ada Lovelace"),
	}}
}

// paySEPA is a confirm body for a SEPA debit of iban.
func paySEPA(iban string) capi.ConfirmRequest {
	return capi.ConfirmRequest{PaymentMethod: "sepa_debit", SepaDebit: &capi.SEPAInput{Iban: ptr(iban), AccountHolder: ptr("Ada Lovelace")}}
}

// payConfirm confirms s with body using its client secret.
func payConfirm(t *testing.T, s *api.CheckoutSession, body capi.ConfirmRequest) *capi.ConfirmBuyerSessionResponse {
	t.Helper()
	resp, err := payClient(t, s.ClientSecret).ConfirmBuyerSessionWithResponse(context.Background(), s.Id, body)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// payConfirmOK confirms and fails unless it answers 200 with status want.
func payConfirmOK(t *testing.T, s *api.CheckoutSession, body capi.ConfirmRequest, want capi.ConfirmResultStatus) *capi.ConfirmResult {
	t.Helper()
	resp := payConfirm(t, s, body)
	if resp.JSON200 == nil {
		t.Fatalf("confirm %s: %d %s", s.Id, resp.StatusCode(), resp.Body)
	}
	if resp.JSON200.Status != want {
		t.Fatalf("confirm status = %s, want %s (%s)", resp.JSON200.Status, want, resp.Body)
	}
	return resp.JSON200
}

// payView reads the buyer's view of s with secret.
func payView(t *testing.T, id, secret string) *capi.GetBuyerSessionResponse {
	t.Helper()
	resp, err := payClient(t, secret).GetBuyerSessionWithResponse(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// payAction answers the 3-D Secure challenge of s.
func payAction(t *testing.T, s *api.CheckoutSession, approve bool) *capi.ResolveBuyerActionResponse {
	t.Helper()
	resp, err := payClient(t, s.ClientSecret).ResolveBuyerActionWithResponse(context.Background(), s.Id, capi.ActionRequest{Approve: approve})
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// payCancel cancels s as its buyer.
func payCancel(t *testing.T, s *api.CheckoutSession) *capi.CancelBuyerSessionResponse {
	t.Helper()
	resp, err := payClient(t, s.ClientSecret).CancelBuyerSessionWithResponse(context.Background(), s.Id)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// payWantErr asserts a browser API error answer (envelope, request id, type, code, param).
func payWantErr(t *testing.T, resp *http.Response, body []byte, status int, typ, code, param string) {
	t.Helper()
	wantError(t, resp.StatusCode, resp.Header, body, status, typ, code, param)
}

// payWantDecline asserts a 402 card_error / card_declined with decline_code.
func payWantDecline(t *testing.T, resp *http.Response, body []byte, declineCode string) {
	t.Helper()
	if resp.StatusCode != http.StatusPaymentRequired {
		t.Fatalf("status = %d, want 402; body %s", resp.StatusCode, body)
	}
	var e envelope
	payJSON(t, body, &e)
	if e.Error.Type != payDeclineCardError || e.Error.Code != "card_declined" || e.Error.DeclineCode == nil || *e.Error.DeclineCode != declineCode {
		t.Fatalf("decline = %s, want card_error/card_declined with decline_code %s", body, declineCode)
	}
	if e.Error.RequestID != resp.Header.Get("Request-Id") {
		t.Fatalf("request_id %q != Request-Id %q", e.Error.RequestID, resp.Header.Get("Request-Id"))
	}
}

// payPayment retrieves s through the merchant API and returns its embedded payment.
func payPayment(t *testing.T, m *Merchant, id string) (*api.CheckoutSession, *api.Payment) {
	t.Helper()
	s := csGet(t, m.Test, id)
	return s, s.Payment
}

// payEvents returns the events of type typ about session id: data.object.id for session
// events, data.object.session_id for payment and payment-intent events.
func payEvents(t *testing.T, c *api.ClientWithResponses, typ, id string) []api.Event {
	t.Helper()
	var out []api.Event
	for _, e := range evtList(t, c, typ, 100).Data {
		obj := e.Data.Object
		if obj["id"] == id || obj["session_id"] == id {
			out = append(out, e)
		}
	}
	return out
}

// payWantEvents asserts exactly n events of typ about session id and returns them.
func payWantEvents(t *testing.T, m *Merchant, typ, id string, n int) []api.Event {
	t.Helper()
	evs := payEvents(t, m.Test, typ, id)
	if len(evs) != n {
		t.Fatalf("%d %s events for %s, want %d", len(evs), typ, id, n)
	}
	return evs
}

// payJSON decodes body into v.
func payJSON(t *testing.T, body []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
}
