package wire

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/openapi"
	"github.com/kassa-pay/kassa/ports"
)

// noSubject is a domain event MerchantPayload does not know.
type noSubject struct{}

func (noSubject) EventObjectID() string { return "" }

// The payloads of the charges that created no payment keep their documented shape, with null
// for an absent card and redirect URL; a dispute follows the contract's Dispute schema.
func TestMerchantPayload(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 5, 1, 8, 30, 0, 0, time.UTC)
	scope := core.Scope{MerchantID: "mer_w", Env: core.EnvTest}
	render := func(typ core.EventType, sub core.DomainEvent) string {
		t.Helper()
		obj, err := MerchantPayload(core.NewEvent(typ, scope, at, sub))
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	card := &ports.CardInfo{Brand: "visa", Last4: "0002", Country: "DE", Funding: "credit"}
	cases := []struct {
		typ  core.EventType
		sub  core.DomainEvent
		want string
	}{
		{core.EventPaymentIntentPaymentFailed, payments.ChargeDeclined{SessionID: "cs_1", Amount: 2500, Currency: "EUR",
			Method: ports.MethodCard, FailureCode: payments.FailureCardDeclined, DeclineCode: "card_declined",
			FailureMessage: "Declined.", Card: card, At: at},
			`{"object":"payment_intent","session_id":"cs_1","amount":2500,"currency":"EUR","payment_method":"card",` +
				`"failure_code":"card_declined","decline_code":"card_declined","failure_message":"Declined.",` +
				`"card":{"brand":"visa","last4":"0002","country":"DE","funding":"credit"},"created":1777624200}`},
		{core.EventPaymentIntentPaymentFailed, payments.ChargeDeclined{SessionID: "cs_1", Amount: 2500, Currency: "EUR",
			Method: ports.MethodSEPADebit, FailureCode: payments.FailurePaymentMethodDeclined, DeclineCode: "invalid_iban", At: at},
			`{"object":"payment_intent","session_id":"cs_1","amount":2500,"currency":"EUR","payment_method":"sepa_debit",` +
				`"failure_code":"payment_method_declined","decline_code":"invalid_iban","failure_message":"","card":null,"created":1777624200}`},
		{core.EventPaymentIntentRequiresAction, payments.ChargeRequiresAction{SessionID: "cs_1", Amount: 2500, Currency: "EUR",
			Method: ports.MethodCard, Card: card, Action: ports.ChargeAction{Kind: ports.ActionThreeDSecure}, At: at},
			`{"object":"payment_intent","session_id":"cs_1","amount":2500,"currency":"EUR","status":"requires_action",` +
				`"payment_method":"card","next_action":{"type":"three_d_secure","redirect_url":null},` +
				`"card":{"brand":"visa","last4":"0002","country":"DE","funding":"credit"},"created":1777624200}`},
		{core.EventPaymentIntentPaymentFailed, payments.ChargeDeclined{InvoiceID: "in_1", Amount: 900, Currency: "EUR",
			Method: ports.MethodCard, FailureCode: payments.FailureCardDeclined, DeclineCode: "insufficient_funds", At: at},
			`{"object":"payment_intent","invoice_id":"in_1","amount":900,"currency":"EUR","payment_method":"card",` +
				`"failure_code":"card_declined","decline_code":"insufficient_funds","failure_message":"","card":null,"created":1777624200}`},
	}
	for _, c := range cases {
		if got := render(c.typ, c.sub); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.typ, got, c.want)
		}
	}

	doc, err := openapi.LoadMerchant()
	if err != nil {
		t.Fatal(err)
	}
	sid := core.NewID(core.PrefixSession)
	p, err := payments.NewPayment(payments.NewPaymentParams{Scope: scope, PayableKind: "checkout_session", SessionID: &sid, Amount: 2500, Currency: "EUR",
		Status: payments.StatusSucceeded, Method: payments.MethodCard,
		Card: &payments.Card{Brand: "visa", Last4: "0259", Country: "US", Funding: "credit"},
		Fee:  payments.Fee{Currency: "EUR", RateDate: at}, Created: at})
	if err != nil {
		t.Fatal(err)
	}
	d, err := payments.OpenDisputeOn(p, "fraudulent", at)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := MerchantPayload(core.NewEvent(core.EventChargeDisputeCreated, scope, at, payments.DisputeEvent{Dispute: d}))
	if err != nil {
		t.Fatal(err)
	}
	if got := validateAgainst(t, doc, "Dispute", obj); got["id"] != d.ID() || got["payment_id"] != p.ID() {
		t.Errorf("dispute %v", got)
	}
	obj, err = MerchantPayload(core.NewEvent(core.EventPaymentIntentSucceeded, scope, at, payments.PaymentEvent{Payment: p}))
	if err != nil {
		t.Fatal(err)
	}
	validateAgainst(t, doc, "Payment", obj)

	if _, err := MerchantPayload(core.NewEvent(core.EventPaymentIntentSucceeded, scope, at, noSubject{})); err == nil {
		t.Error("an unknown domain event rendered")
	}
}
