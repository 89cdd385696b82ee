package core

import (
	"slices"
	"testing"
)

func TestEventCatalogChannels(t *testing.T) {
	seen := map[EventType]bool{}
	for _, s := range EventCatalog() {
		if seen[s.Type] {
			t.Errorf("%s twice in the catalog", s.Type)
		}
		seen[s.Type] = true
		if s.Object == "" {
			t.Errorf("%s: no object kind", s.Type)
		}
	}
	// D10: the events of interface 6.1 plus the four checkout.session completion events, and
	// the dispute events of D16.
	merchant := []string{
		"checkout.session.completed", "checkout.session.expired",
		"checkout.session.async_payment_pending", "checkout.session.async_payment_succeeded",
		"checkout.session.async_payment_failed", "charge.refunded",
		"charge.dispute.created", "charge.dispute.updated", "charge.dispute.closed", "invoice.finalized",
		"invoice.paid", "invoice.payment_failed", "invoice.voided", "invoice.payment_succeeded",
		"customer.subscription.created", "customer.subscription.updated",
		"customer.subscription.deleted", "customer.subscription.trial_will_end",
		"payout.created", "payout.paid",
	}
	if got := EventTypesOn(ChannelMerchant); !slices.Equal(got, merchant) {
		t.Errorf("merchant channel:\n got %v\nwant %v", got, merchant)
	}
	// Interface 6.2, exactly and in its order.
	app := []string{
		"checkout.session.completed", "checkout.session.expired", "checkout.session.canceled",
		"checkout.session.async_payment_pending", "checkout.session.async_payment_failed",
		"checkout.session.refunded", "payment_intent.succeeded", "payment_intent.payment_failed",
		"payment_intent.requires_action", "payment_intent.canceled", "invoice.payment_failed",
		"customer.subscription.deleted",
	}
	if got := EventTypesOn(ChannelApp); !slices.Equal(got, app) {
		t.Errorf("app channel:\n got %v\nwant %v", got, app)
	}
	if !IsEventOn("charge.dispute.created", ChannelMerchant) || IsEventOn("charge.dispute.created", ChannelApp) {
		t.Error("charge.dispute.created is not on the merchant channel alone")
	}
	if _, ok := LookupEventType("charge.dispute.created"); !ok {
		t.Error("charge.dispute.created is not in the catalog")
	}
	if IsEventOn("webhook.test", ChannelMerchant) {
		t.Error("webhook.test is in the catalog")
	}
}

// D17: the scope that reads an app event's object.
func TestAppReadScope(t *testing.T) {
	want := map[string]string{
		"checkout.session.completed": "payments:read", "checkout.session.refunded": "payments:read",
		"payment_intent.payment_failed": "payments:read", "payment_intent.canceled": "payments:read",
		"invoice.payment_failed": "invoices:read", "customer.subscription.deleted": "subscriptions:read",
	}
	for _, typ := range EventTypesOn(ChannelApp) {
		got, ok := AppReadScope(EventType(typ))
		if !ok || got == "" {
			t.Errorf("%s: no scope", typ)
		}
		if w, listed := want[typ]; listed && got != w {
			t.Errorf("%s: scope %s, want %s", typ, got, w)
		}
	}
	for _, typ := range []EventType{EventChargeRefunded, EventPayoutCreated, EventPayoutPaid} {
		if _, ok := AppReadScope(typ); ok {
			t.Errorf("%s is not an app event", typ)
		}
	}
}
