package wire

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/checkout"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/openapi"
)

// validateAgainst encodes v and validates it against the named component schema of the
// merchant contract.
func validateAgainst(t *testing.T, doc *openapi3.T, schema string, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var decoded map[string]any
	if err := json.Unmarshal(b, &decoded); err != nil {
		t.Fatal(err)
	}
	ref, ok := doc.Components.Schemas[schema]
	if !ok || ref.Value == nil {
		t.Fatalf("no schema %s", schema)
	}
	if err := ref.Value.VisitJSON(decoded, openapi3.MultiErrors()); err != nil {
		t.Fatalf("%s does not match its schema: %v\n%s", schema, err, b)
	}
	return decoded
}

func TestPresentSessionEmbedsItsPaymentPerContract(t *testing.T) {
	doc, err := openapi.LoadMerchant()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 5, 1, 8, 30, 0, 0, time.UTC)
	scope := core.Scope{MerchantID: core.NewID(core.PrefixMerchant), Env: core.EnvTest}
	id := core.NewID(core.PrefixSession)
	ref := "order-9"
	snap := checkout.SessionSnapshot{
		ID: id, Scope: scope, Mode: checkout.ModePayment, Status: checkout.StatusOpen, Amount: 2500, Currency: "EUR",
		ClientSecret: id + "_secret_x", CheckoutURL: "https://pay.example/c/" + id, EmbedURL: "https://pay.example/embed/" + id,
		CustomerName: "Ada", CustomerEmail: "ada@example.com", Reference: &ref, Created: now, ExpiresAt: now.Add(checkout.Lifetime),
	}
	open := validateAgainst(t, doc, "CheckoutSession", Session(checkout.RehydrateSession(snap)))
	if v, ok := open["payment"]; !ok || v != nil {
		t.Fatalf("open session: payment %v (present %v), want null", v, ok)
	}

	for _, method := range []payments.PaymentMethod{payments.MethodCard, payments.MethodSEPADebit} {
		params := payments.NewPaymentParams{Scope: scope, PayableKind: "checkout_session", SessionID: &id, Amount: 2500, Currency: "EUR",
			Status: payments.StatusSucceeded, Method: method,
			Fee:      payments.Fee{ServiceFeeEUR: 70, PSPFeeEUR: 40, ServiceFeeChargeCurrency: 70, Currency: "EUR", RateDate: now},
			Customer: payments.Customer{Name: "Ada", Email: "ada@example.com"}, Reference: &ref,
			Metadata: map[string]string{"k": "v"}, Created: now}
		if method == payments.MethodCard {
			params.Card = &payments.Card{Brand: "visa", Last4: "4242", Country: "DE", Funding: "credit"}
		} else {
			params.Status = payments.StatusProcessing
		}
		p, err := payments.NewPayment(params)
		if err != nil {
			t.Fatal(err)
		}
		done := snap
		done.Status, done.Payment = checkout.StatusComplete, p
		s := checkout.RehydrateSession(done)
		got := validateAgainst(t, doc, "CheckoutSession", Session(s))
		pay, ok := got["payment"].(map[string]any)
		if !ok || pay["id"] != p.ID() || pay["object"] != "payment" || pay["session_id"] != id {
			t.Fatalf("%s: embedded payment %v", method, got["payment"])
		}
		alone := validateAgainst(t, doc, "Payment", Payment(p))
		if (alone["card"] == nil) != (method != payments.MethodCard) {
			t.Errorf("%s: card %v", method, alone["card"])
		}
		if fee := alone["fee"].(map[string]any); fee["service_fee_eur"] != 70.0 || fee["psp_fee_eur"] != 40.0 {
			t.Errorf("fee %v", fee)
		}
		if method == payments.MethodCard {
			d, err := payments.OpenDisputeOn(p, "fraudulent", now)
			if err != nil {
				t.Fatal(err)
			}
			got := validateAgainst(t, doc, "Dispute", Dispute(d))
			if got["payment_id"] != p.ID() || got["object"] != "dispute" || got["status"] != "needs_response" {
				t.Errorf("dispute %v", got)
			}
		}
	}
}
