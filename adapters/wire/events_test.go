package wire

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/billing"
	"github.com/kassa-pay/kassa/modules/checkout"
	"github.com/kassa-pay/kassa/modules/invoicing"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/openapi"
	"github.com/kassa-pay/kassa/ports"
)

// noSubject is a domain event EventObject does not know.
type noSubject struct{}

func (noSubject) EventObjectID() string { return "" }

// keep is what the outbox does with e: its object kind and its object at event time, as JSON.
func keep(t *testing.T, e core.Event) core.EventRecord {
	t.Helper()
	kind, obj, err := EventObject(e)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return core.EventRecord{ID: e.ID, Type: e.Type, Scope: e.Scope, Created: e.Created, ObjectKind: kind,
		ObjectID: e.ObjectID, Object: b}
}

// schemaMap reads a type → component schema map from an extension of the contract.
func schemaMap(t *testing.T, ext any) map[string]string {
	t.Helper()
	b, err := json.Marshal(ext)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil || len(m) == 0 {
		t.Fatalf("no event schema map (%v): %s", err, b)
	}
	return m
}

func validateRaw(t *testing.T, doc *openapi3.T, schema string, raw []byte) map[string]any {
	t.Helper()
	var decoded map[string]any
	if err := json.Unmarshal(raw, &decoded); err != nil {
		t.Fatal(err)
	}
	ref, ok := doc.Components.Schemas[schema]
	if !ok || ref.Value == nil {
		t.Fatalf("no schema %s", schema)
	}
	if err := ref.Value.VisitJSON(decoded, openapi3.MultiErrors()); err != nil {
		t.Fatalf("%s does not match its schema: %v\n%s", schema, err, raw)
	}
	return decoded
}

// eventSamples gives one event of every type a module writes today, in each of its forms (a
// charge declined at once and a debit returned at settlement for payment_failed).
func eventSamples(t *testing.T) []core.Event {
	t.Helper()
	at := time.Date(2026, 5, 1, 8, 30, 0, 0, time.UTC)
	scope := core.Scope{MerchantID: core.NewID(core.PrefixMerchant), Env: core.EnvTest}
	sid := core.NewID(core.PrefixSession)
	ref := "order-9"
	snap := checkout.SessionSnapshot{
		ID: sid, Scope: scope, Mode: checkout.ModePayment, Status: checkout.StatusOpen, Amount: 2500, Currency: "EUR",
		ClientSecret: sid + "_secret_x", CheckoutURL: "https://pay.example/c/" + sid, EmbedURL: "https://pay.example/embed/" + sid,
		CustomerName: "Ada", CustomerEmail: "ada@example.com", Reference: &ref, Created: at, ExpiresAt: at.Add(checkout.Lifetime),
	}
	card := &payments.Card{Brand: "visa", Last4: "4242", Country: "DE", Funding: "credit"}
	paid, err := payments.NewPayment(payments.NewPaymentParams{Scope: scope, PayableKind: "checkout_session", SessionID: &sid, Amount: 2500, Currency: "EUR",
		Status: payments.StatusSucceeded, Method: payments.MethodCard, Card: card,
		Fee:      payments.Fee{ServiceFeeEUR: 70, PSPFeeEUR: 40, ServiceFeeChargeCurrency: 70, Currency: "EUR", RateDate: at},
		Customer: payments.Customer{Name: "Ada", Email: "ada@example.com"}, Reference: &ref,
		Metadata: map[string]string{"k": "v"}, Created: at})
	if err != nil {
		t.Fatal(err)
	}
	debit, err := payments.NewPayment(payments.NewPaymentParams{Scope: scope, PayableKind: "checkout_session", SessionID: &sid, Amount: 2500, Currency: "EUR",
		Status: payments.StatusProcessing, Method: payments.MethodSEPADebit,
		Fee: payments.Fee{Currency: "EUR", RateDate: at}, Created: at})
	if err != nil {
		t.Fatal(err)
	}
	failed := debit.Snapshot()
	code, msg := "insufficient_funds", "The account has insufficient funds."
	failed.Status, failed.FailureCode, failed.FailureMessage = payments.StatusFailed, &code, &msg
	returned := payments.RehydratePayment(failed)
	dispute, err := payments.OpenDisputeOn(paid, "fraudulent", at)
	if err != nil {
		t.Fatal(err)
	}
	refunded, err := payments.NewPayment(payments.NewPaymentParams{Scope: scope, PayableKind: "checkout_session", SessionID: &sid, Amount: 2500,
		Currency: "EUR", Status: payments.StatusSucceeded, Method: payments.MethodCard, Card: card,
		Fee:      payments.Fee{ServiceFeeEUR: 70, PSPFeeEUR: 40, ServiceFeeChargeCurrency: 70, Currency: "EUR", RateDate: at},
		Customer: payments.Customer{Name: "Ada", Email: "ada@example.com"}, Created: at})
	if err != nil {
		t.Fatal(err)
	}
	refund := payments.NewRefund(refunded, 1000, payments.ReasonRequestedByCustomer, at, at)
	if _, err := refunded.ApplyRefund(1000); err != nil {
		t.Fatal(err)
	}
	complete := snap
	complete.Status, complete.Payment = checkout.StatusComplete, paid
	expired := snap
	expired.Status = checkout.StatusExpired
	canceled := snap
	canceled.Status = checkout.StatusCanceled
	pending := snap
	pending.Status, pending.Payment = checkout.StatusComplete, debit
	asyncFailed := snap
	asyncFailed.Status, asyncFailed.Payment = checkout.StatusComplete, returned
	session := func(s checkout.SessionSnapshot) core.DomainEvent {
		return checkout.SessionEvent{Session: checkout.RehydrateSession(s)}
	}
	portsCard := &ports.CardInfo{Brand: "visa", Last4: "0002", Country: "DE", Funding: "credit"}
	return []core.Event{
		core.NewEvent(core.EventCheckoutSessionCompleted, scope, at, session(complete)),
		core.NewEvent(core.EventCheckoutSessionExpired, scope, at, session(expired)),
		core.NewEvent(core.EventCheckoutSessionCanceled, scope, at, session(canceled)),
		core.NewEvent(core.EventCheckoutSessionAsyncPaymentPending, scope, at, session(pending)),
		core.NewEvent(core.EventCheckoutSessionAsyncPaymentSucceeded, scope, at, session(complete)),
		core.NewEvent(core.EventCheckoutSessionAsyncPaymentFailed, scope, at, session(asyncFailed)),
		core.NewEvent(core.EventPaymentIntentSucceeded, scope, at, payments.PaymentEvent{Payment: paid}),
		core.NewEvent(core.EventPaymentIntentPaymentFailed, scope, at, payments.PaymentEvent{Payment: returned}),
		core.NewEvent(core.EventPaymentIntentPaymentFailed, scope, at, payments.ChargeDeclined{SessionID: sid, Amount: 2500,
			Currency: "EUR", Method: ports.MethodCard, FailureCode: payments.FailureCardDeclined, DeclineCode: "insufficient_funds",
			FailureMessage: "Your card has insufficient funds.", Card: portsCard, At: at}),
		core.NewEvent(core.EventPaymentIntentPaymentFailed, scope, at, payments.ChargeDeclined{InvoiceID: "in_1", Amount: 900,
			Currency: "EUR", Method: ports.MethodSEPADebit, FailureCode: payments.FailurePaymentMethodDeclined, DeclineCode: "invalid_iban", At: at}),
		core.NewEvent(core.EventPaymentIntentRequiresAction, scope, at, payments.ChargeRequiresAction{SessionID: sid, Amount: 2500,
			Currency: "EUR", Method: ports.MethodCard, Card: portsCard, Action: ports.ChargeAction{Kind: ports.ActionThreeDSecure}, At: at}),
		core.NewEvent(core.EventPaymentIntentCanceled, scope, at, payments.ChargeCanceled{SessionID: sid, Amount: 2500,
			Currency: "EUR", Method: ports.MethodCard, Card: portsCard, At: at}),
		core.NewEvent(core.EventChargeDisputeCreated, scope, at, payments.DisputeEvent{Dispute: dispute}),
		core.NewEvent(core.EventChargeRefunded, scope, at, payments.RefundEvent{Refund: refund, Payment: refunded}),
		core.NewEvent(core.EventCheckoutSessionRefunded, scope, at, payments.SessionRefundEvent{Refund: refund, Payment: refunded}),
		core.NewEvent(core.EventInvoiceFinalized, scope, at, invoiceSample(t, scope, at, "")),
		core.NewEvent(core.EventInvoicePaid, scope, at, invoiceSample(t, scope, at, "")), // the shape is the same once paid
		core.NewEvent(core.EventInvoiceVoided, scope, at, invoiceSample(t, scope, at, "void")),
		core.NewEvent(core.EventInvoiceMarkedUncollectible, scope, at, invoiceSample(t, scope, at, "uncollectible")),
		core.NewEvent(core.EventInvoicePaymentFailed, scope, at, invoiceSample(t, scope, at, "")),
		core.NewEvent(core.EventSubscriptionCreated, scope, at, subscriptionSample(scope, at, false)),
		core.NewEvent(core.EventSubscriptionDeleted, scope, at, subscriptionSample(scope, at, true)),
		core.NewEvent(core.EventSubscriptionUpdated, scope, at, subscriptionSample(scope, at, true)),
		core.NewEvent(core.EventSubscriptionTrialWillEnd, scope, at, subscriptionSample(scope, at, true)),
	}
}

// subscriptionSample is a new subscription with a trial, or an active one with a saved card
// and a pending cancellation.
func subscriptionSample(scope core.Scope, at time.Time, active bool) billing.SubscriptionEvent {
	end := at.AddDate(0, 0, 7)
	s := billing.SubscriptionSnapshot{ID: "sub_1", Scope: scope, Status: billing.StatusIncomplete, Customer: "cus_1",
		PriceID: "price_1", Quantity: 2, Currency: "EUR", UnitAmount: 900, Interval: billing.IntervalMonth, IntervalCount: 1,
		Anchor: end, PeriodStart: at, PeriodEnd: end, TrialStart: &at, TrialEnd: &end, Metadata: map[string]string{"k": "v"},
		Created: at, Updated: at}
	if active {
		s.Status, s.CancelAtPeriodEnd, s.CanceledAt = billing.StatusActive, true, &at
		s.DefaultMethod = &billing.DefaultMethod{ID: "pm_1", Summary: billing.Summary{Type: ports.MethodCard, Brand: "visa",
			Last4: "4242", ExpMonth: 12, ExpYear: 2030}}
	}
	return billing.SubscriptionEvent{Subscription: billing.RehydrateSubscription(s)}
}

// invoiceSample is a sent invoice with a free-form and a catalog line, moved on to state.
func invoiceSample(t *testing.T, scope core.Scope, at time.Time, state string) invoicing.InvoiceEvent {
	t.Helper()
	pid, prod := "price_1", "prod_1"
	inv := invoicing.NewDraft(scope, invoicing.Draft{Currency: "EUR", CustomerName: "Ada", CustomerEmail: "ada@example.com",
		Lines: []invoicing.Line{{Description: "Work", Quantity: 2, UnitAmount: 1000, VATRate: 1900},
			{Description: "Notebook", Quantity: 1, UnitAmount: 1500, VATRate: 750, PriceID: &pid, ProductID: &prod, Locked: true, Currency: "EUR"}},
		DaysUntilDue: 30}, at)
	if err := inv.Finalize("ACME", 1, "tok", at); err != nil {
		t.Fatal(err)
	}
	var err error
	switch state {
	case "void":
		err = inv.Void(at)
	case "uncollectible":
		err = inv.MarkUncollectible(at)
	}
	if err != nil {
		t.Fatal(err)
	}
	u := "https://pay.example/i/tok"
	return invoicing.InvoiceEvent{Invoice: inv, HostedURL: &u}
}

// Every event a module writes renders, on each channel that carries it (and on the merchant
// channel, which GET /v1/events lists, for every type), to the one schema its contract
// documents for its type: merchant.yaml's Event x-data-object, app-events.yaml's x-events.
func TestEventPayloadsMatchTheirChannelSchemas(t *testing.T) {
	t.Parallel()
	merchant, err := openapi.LoadMerchant()
	if err != nil {
		t.Fatal(err)
	}
	app, err := openapi.LoadAppEvents()
	if err != nil {
		t.Fatal(err)
	}
	merchantSchemas := schemaMap(t, merchant.Components.Schemas["Event"].Value.Extensions["x-data-object"])
	appSchemas := schemaMap(t, app.Extensions["x-events"])
	for _, e := range eventSamples(t) {
		r := keep(t, e)
		raw, err := RenderEvent(r, core.ChannelMerchant)
		if err != nil {
			t.Fatal(err)
		}
		schema, ok := merchantSchemas[string(e.Type)]
		if !ok {
			t.Fatalf("%s: no merchant schema documented", e.Type)
		}
		validateRaw(t, merchant, schema, raw)
		if !core.IsEventOn(string(e.Type), core.ChannelApp) {
			if _, err := RenderEvent(r, core.ChannelApp); err == nil {
				t.Errorf("%s rendered for apps, which do not receive it", e.Type)
			}
			continue
		}
		schema, ok = appSchemas[string(e.Type)]
		if !ok {
			t.Fatalf("%s: no app schema documented", e.Type)
		}
		raw, err = RenderEvent(r, core.ChannelApp)
		if err != nil {
			t.Fatal(err)
		}
		validateRaw(t, app, schema, raw)
		body, err := AppEvent(r, "7c9e6679-7425-40de-944b-e07fc1f090ae")
		if err != nil {
			t.Fatal(err)
		}
		env := validateRaw(t, app, "AppEvent", body)
		if env["installation"] != "7c9e6679-7425-40de-944b-e07fc1f090ae" || env["type"] != string(e.Type) {
			t.Errorf("app envelope %v", env)
		}
	}
	// A documented schema names a type of the catalog on its channel.
	for typ := range appSchemas {
		if !core.IsEventOn(typ, core.ChannelApp) {
			t.Errorf("app-events.yaml documents %s, which apps do not receive", typ)
		}
	}
	for typ := range merchantSchemas {
		if _, ok := core.LookupEventType(typ); !ok {
			t.Errorf("merchant.yaml documents %s, which is not in the catalog", typ)
		}
	}
	// The app channel types no module writes yet are the ones app-events.yaml says so of.
	var undocumented []string
	for _, typ := range core.EventTypesOn(core.ChannelApp) {
		if _, ok := appSchemas[typ]; !ok {
			undocumented = append(undocumented, typ)
		}
	}
	if want := []string(nil); !slices.Equal(undocumented, want) {
		t.Errorf("app types without a schema %v, want %v", undocumented, want)
	}
}

// payment_intent.payment_failed has one shape: a card declined at once (no payment) and a
// debit returned at settlement (a payment) both render the PaymentIntent, on both channels.
func TestPaymentFailedHasOneShape(t *testing.T) {
	t.Parallel()
	var shapes [][]string
	for _, e := range eventSamples(t) {
		if e.Type != core.EventPaymentIntentPaymentFailed {
			continue
		}
		r := keep(t, e)
		for _, ch := range []core.Channel{core.ChannelMerchant, core.ChannelApp} {
			raw, err := RenderEvent(r, ch)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatal(err)
			}
			if m["object"] != "payment_intent" || m["status"] != "failed" {
				t.Errorf("%s: %s", r.ObjectKind, raw)
			}
			var keys []string
			for k := range m {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			shapes = append(shapes, keys)
		}
	}
	if len(shapes) != 6 {
		t.Fatalf("%d renderings", len(shapes))
	}
	for i := 2; i < len(shapes); i++ {
		if !slices.Equal(shapes[i], shapes[i%2]) {
			t.Errorf("shape %d differs: %v vs %v", i, shapes[i], shapes[i%2])
		}
	}
}

// The exact merchant payloads: a decline (null id and payment), a debit returned at settlement
// (the payment's id and the payment), and app forms in ISO 8601 with money objects.
func TestRenderedPayloads(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 5, 1, 8, 30, 0, 0, time.UTC)
	scope := core.Scope{MerchantID: "mer_w", Env: core.EnvTest}
	card := &ports.CardInfo{Brand: "visa", Last4: "0002", Country: "DE", Funding: "credit"}
	decline := keep(t, core.NewEvent(core.EventPaymentIntentPaymentFailed, scope, at, payments.ChargeDeclined{SessionID: "cs_1",
		Amount: 2500, Currency: "EUR", Method: ports.MethodCard, FailureCode: payments.FailureCardDeclined,
		DeclineCode: "card_declined", FailureMessage: "Declined.", Card: card, At: at}))
	if decline.ObjectKind != core.ObjectCharge || decline.ObjectID != "" {
		t.Errorf("decline kept as %s %q", decline.ObjectKind, decline.ObjectID)
	}
	cases := []struct {
		r    core.EventRecord
		ch   core.Channel
		want string
	}{
		{decline, core.ChannelMerchant, `{"amount":2500,"card":{"brand":"visa","country":"DE","funding":"credit","last4":"0002"},` +
			`"created":1777624200,"currency":"EUR","decline_code":"card_declined","failure_code":"card_declined",` +
			`"failure_message":"Declined.","id":null,"invoice_id":null,"next_action":null,"object":"payment_intent",` +
			`"payment":null,"payment_method":"card","session_id":"cs_1","status":"failed"}`},
		{decline, core.ChannelApp, `{"id":null,"object":"payment_intent","session_id":"cs_1","invoice_id":null,` +
			`"amount":{"amount":2500,"currency":"eur"},"status":"failed","payment_method":"card","failure_code":"card_declined",` +
			`"decline_code":"card_declined","failure_message":"Declined.","next_action":null,` +
			`"card":{"brand":"visa","last4":"0002","country":"DE","funding":"credit"},"payment":null,"created":"2026-05-01T08:30:00Z"}`},
		// Kept before the PaymentIntent had a status and an id (migration 00024 keeps it so).
		{core.EventRecord{Type: core.EventPaymentIntentRequiresAction, Scope: scope, Created: at, ObjectKind: core.ObjectCharge,
			Object: json.RawMessage(`{"object":"payment_intent","session_id":"cs_1","amount":2500,"currency":"EUR",` +
				`"status":"requires_action","payment_method":"card","next_action":{"type":"three_d_secure","redirect_url":null},` +
				`"card":null,"created":1777624200}`)}, core.ChannelMerchant,
			`{"amount":2500,"card":null,"created":1777624200,"currency":"EUR","decline_code":null,"failure_code":null,` +
				`"failure_message":null,"id":null,"invoice_id":null,"next_action":{"redirect_url":null,"type":"three_d_secure"},` +
				`"object":"payment_intent","payment":null,"payment_method":"card","session_id":"cs_1","status":"requires_action"}`},
	}
	for i, c := range cases {
		raw, err := RenderEvent(c.r, c.ch)
		if err != nil {
			t.Fatal(err)
		}
		if got := canonical(t, raw); got != canonical(t, []byte(c.want)) {
			t.Errorf("case %d:\n got %s\nwant %s", i, got, c.want)
		}
	}
	if _, _, err := EventObject(core.NewEvent(core.EventPaymentIntentSucceeded, scope, at, noSubject{})); err == nil {
		t.Error("an unknown domain event was kept")
	}
}

func canonical(t *testing.T, raw []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
