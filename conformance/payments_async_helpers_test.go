package conformance

import (
	"testing"

	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
)

// Delays of the sandbox processor (D6); its test numbers are the pay* constants.
const (
	asyncSettleDelay = 120 // seconds from confirmation to settlement
	asyncDisputeWait = 60  // seconds from success to the dispute
)

// asyncPay creates an EUR session for m's test environment and pays it the way a buyer's
// browser does: the browser API on the checkout origin, authorised by the client secret
// (D6), with a card number or an IBAN. It returns the session as the merchant API shows it
// afterwards.
func asyncPay(t *testing.T, m *Merchant, source string) api.CheckoutSession {
	t.Helper()
	payNeedsCheckout(t)
	s := csCreate(t, m.Test, sessionBody())
	body := payCard(source)
	if len(source) == 22 {
		body = paySEPA(source)
	}
	if resp := payConfirm(t, s, body); resp.StatusCode() != 200 {
		t.Fatalf("confirm with %s: %d %s", source, resp.StatusCode(), resp.Body)
	}
	return *csGet(t, m.Test, s.Id)
}

// asyncPayment returns the payment embedded in session id, failing when there is none.
func asyncPayment(t *testing.T, m *Merchant, id string) api.Payment {
	t.Helper()
	s := csGet(t, m.Test, id)
	if s.Payment == nil {
		t.Fatalf("session %s has no payment", id)
	}
	return *s.Payment
}

// asyncEvents returns the events of type typ whose data.object field key equals value, newest
// first.
func asyncEvents(t *testing.T, m *Merchant, typ, key, value string) []api.Event {
	t.Helper()
	var out []api.Event
	for _, e := range evtList(t, m.Test, typ, 100).Data {
		if v, _ := e.Data.Object[key].(string); v == value {
			out = append(out, e)
		}
	}
	return out
}

// asyncOne is asyncEvents expecting exactly one event.
func asyncOne(t *testing.T, m *Merchant, typ, key, value string) api.Event {
	t.Helper()
	evs := asyncEvents(t, m, typ, key, value)
	if len(evs) != 1 {
		t.Fatalf("%d %s events with %s = %s, want 1", len(evs), typ, key, value)
	}
	return evs[0]
}

// asyncEmbedded returns data.object.payment of a session event.
func asyncEmbedded(t *testing.T, e api.Event) map[string]any {
	t.Helper()
	p, ok := e.Data.Object["payment"].(map[string]any)
	if !ok {
		t.Fatalf("%s: data.object has no payment: %v", e.Type, e.Data.Object)
	}
	return p
}
