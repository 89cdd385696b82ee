package conformance

import (
	"encoding/json"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/kassa-pay/kassa/conformance/harness"
	"github.com/kassa-pay/kassa/openapi"
	capi "github.com/kassa-pay/kassa/openapi/gen/checkoutapi"
)

// TestEventsPayloadSchemas drives every event the platform writes today through the real
// server and checks each data.object GET /v1/events lists against the one schema merchant.yaml
// documents for its type (Event's x-data-object).
func TestEventsPayloadSchemas(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "D10", "every event's data.object is the one schema documented for its type", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		doc, err := openapi.LoadMerchant()
		if err != nil {
			t.Fatal(err)
		}
		raw, err := json.Marshal(doc.Components.Schemas["Event"].Value.Extensions["x-data-object"])
		if err != nil {
			t.Fatal(err)
		}
		var schemas map[string]string
		if err := json.Unmarshal(raw, &schemas); err != nil || len(schemas) == 0 {
			t.Fatalf("Event has no x-data-object (%v): %s", err, raw)
		}

		m := newMerchant(t, true)
		clockFreeze(t, m.Test)
		// expired, canceled
		if r := csExpire(t, m.Test, csCreate(t, m.Test, sessionBody()).Id); r.StatusCode() != 200 {
			t.Fatalf("expire: %d %s", r.StatusCode(), r.Body)
		}
		if r := payCancel(t, paySession(t, m)); r.StatusCode() != 200 {
			t.Fatalf("cancel: %d %s", r.StatusCode(), r.Body)
		}
		// a card declined at once, a charge waiting on 3-D Secure, a completed card payment
		declined := paySession(t, m)
		if r := payConfirm(t, declined, payCard(payCardDecline)); r.StatusCode() != 402 {
			t.Fatalf("decline: %d %s", r.StatusCode(), r.Body)
		}
		payConfirmOK(t, paySession(t, m), payCard(payCard3DS), capi.ConfirmResultStatusRequiresAction)
		payConfirmOK(t, paySession(t, m), payCard(payCardDispute), capi.ConfirmResultStatusSucceeded)
		// SEPA debits that settle and fail, then a dispute on the card payment
		asyncPay(t, m, payIBANOK)
		asyncPay(t, m, payIBANFailsLater)
		clockAdvance(t, m.Test, asyncSettleDelay+5)

		seen := map[string]int{}
		for _, e := range evtList(t, m.Test, "", 100).Data {
			schema, ok := schemas[e.Type]
			if !ok {
				t.Errorf("%s: no schema documented for its data.object", e.Type)
				continue
			}
			ref := doc.Components.Schemas[schema]
			if ref == nil || ref.Value == nil {
				t.Fatalf("x-data-object names %s, which is not a schema", schema)
			}
			if err := ref.Value.VisitJSON(map[string]any(e.Data.Object), openapi3.MultiErrors()); err != nil {
				t.Errorf("%s %s: data.object does not match %s: %v", e.Type, e.Id, schema, err)
			}
			seen[e.Type]++
		}
		for _, typ := range []string{"checkout.session.expired", "checkout.session.canceled", "checkout.session.completed",
			"checkout.session.async_payment_pending", "checkout.session.async_payment_succeeded",
			"checkout.session.async_payment_failed", "payment_intent.succeeded", "payment_intent.requires_action",
			"charge.dispute.created"} {
			if seen[typ] == 0 {
				t.Errorf("no %s event was written", typ)
			}
		}
		// payment_intent.payment_failed: a decline and a returned debit, one shape.
		if seen["payment_intent.payment_failed"] != 2 {
			t.Errorf("%d payment_intent.payment_failed events, want 2 (a decline, a returned debit)", seen["payment_intent.payment_failed"])
		}
	})
}
