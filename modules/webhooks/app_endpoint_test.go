package webhooks

import (
	"testing"

	"github.com/kassa-pay/kassa/core"
)

func TestAppSubscriptionMatchesExactStarAndPrefix(t *testing.T) {
	cases := []struct {
		events []string
		typ    string
		want   bool
	}{
		{[]string{"*"}, "checkout.session.completed", true},
		{[]string{"*"}, "charge.refunded", false}, // merchant channel only
		{[]string{"*"}, "invoice.paid", false},
		{[]string{"checkout.*"}, "checkout.session.expired", true},
		{[]string{"checkout.session.*"}, "checkout.session.refunded", true},
		{[]string{"checkout.*"}, "payment_intent.succeeded", false},
		{[]string{"payment_intent.succeeded"}, "payment_intent.succeeded", true},
		{[]string{"payment_intent.succeeded"}, "payment_intent.canceled", false},
		{[]string{"invoice.*"}, "invoice.payment_failed", true},
		{[]string{"invoice.*"}, "invoice.finalized", false},
		{[]string{"checkout"}, "checkout.session.completed", false},
	}
	for _, c := range cases {
		if got := AppSubscription(c.events, c.typ); got != c.want {
			t.Errorf("AppSubscription(%v, %s) = %v, want %v", c.events, c.typ, got, c.want)
		}
	}
}

func TestAppMayReadFollowsTheObjectsScope(t *testing.T) {
	cases := []struct {
		scopes []string
		typ    string
		want   bool
	}{
		{[]string{"payments:read"}, "checkout.session.completed", true},
		{[]string{"payments:read"}, "payment_intent.canceled", true},
		{[]string{"invoices:read"}, "payment_intent.succeeded", false},
		{[]string{"invoices:read"}, "invoice.payment_failed", true},
		{[]string{"payments:read"}, "invoice.payment_failed", false},
		{[]string{"subscriptions:read"}, "customer.subscription.deleted", true},
		{[]string{"payments:read", "invoices:read"}, "charge.refunded", false},
	}
	for _, c := range cases {
		if got := AppMayRead(c.scopes, c.typ); got != c.want {
			t.Errorf("AppMayRead(%v, %s) = %v, want %v", c.scopes, c.typ, got, c.want)
		}
	}
}

func TestAppEndpointParamsRefuseEventsOutsideTheAppCatalog(t *testing.T) {
	ok := []string{"*", "checkout.*", "checkout.session.*", "payment_intent.*", "invoice.*", "customer.*", "customer.subscription.deleted"}
	for _, e := range ok {
		if _, err := (AppEndpointParams{URL: "https://app.example/hooks", Events: []string{e}}).validate(Destinations{}); err != nil {
			t.Errorf("%s refused: %v", e, err)
		}
	}
	for _, e := range []string{"charge.refunded", "invoice.paid", "refund.*", ".*", "*.*", "checkout", "webhook.test", ""} {
		if _, err := (AppEndpointParams{URL: "https://app.example/hooks", Events: []string{e}}).validate(Destinations{}); err == nil {
			t.Errorf("%q accepted", e)
		}
	}
	p, err := AppEndpointParams{URL: "http://app.example/hooks", Events: []string{"*", "*"}}.validate(Destinations{})
	if err != nil || len(p.Events) != 1 {
		t.Fatalf("http URL (sandbox events) or duplicate events: %v %v", err, p.Events)
	}
	if _, err := (AppEndpointParams{URL: "https://app.example/hooks"}).validate(Destinations{}); err == nil {
		t.Fatal("no events accepted")
	}
}

func TestAppEnvelopeCarriesTheInstallation(t *testing.T) {
	ev := OutboxEvent{ID: "evt_1", Type: core.EventCheckoutSessionExpired, Scope: core.Scope{MerchantID: "mer_1", Env: core.EnvTest}}
	b, err := AppEnvelope(ev, "3f0c2a4e-8b1d-4c6f-9a2e-5d7b8c9e0f1a", []byte(`{"id":"cs_1"}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"evt_1","object":"event","type":"checkout.session.expired","environment":"test","installation":"3f0c2a4e-8b1d-4c6f-9a2e-5d7b8c9e0f1a","api_version":"` +
		core.APIVersion + `","created":` + "-62135596800" + `,"data":{"object":{"id":"cs_1"}}}`
	if string(b) != want {
		t.Fatalf("envelope %s\nwant     %s", b, want)
	}
}
