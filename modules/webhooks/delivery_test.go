package webhooks

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/kassa-pay/kassa/core"
)

func TestSendTestEvent(t *testing.T) {
	ctx := context.Background()
	st := newFakeStore()
	svc := mustService(t, st)
	e, secret, err := svc.CreateEndpoint(ctx, testScp, EndpointParams{URL: "https://a.example/hook", EnabledEvents: []string{"invoice.paid"}})
	if err != nil {
		t.Fatal(err)
	}
	d, err := svc.SendTestEvent(ctx, testScp, e.ID())
	if err != nil || d.Status != DeliveryPending || d.EventType != TestEventType {
		t.Fatalf("send: %+v %v", d, err)
	}
	ev := st.testEvents()[0]
	if !core.HasIDShape(ev.ID, core.PrefixEvent) || ev.Scope != testScp || !ev.Created.Equal(t0) || IsMerchantEvent(string(ev.Type)) {
		t.Errorf("event %+v", ev)
	}
	var obj map[string]any
	if err := json.Unmarshal(ev.Object, &obj); err != nil || obj["id"] != e.ID() || obj["object"] != "webhook_endpoint" ||
		ev.ObjectKind != core.ObjectWebhookEndpoint || ev.ObjectID != e.ID() {
		t.Errorf("data.object %s %s %s", ev.ObjectKind, ev.ObjectID, ev.Object)
	}
	if strings.Contains(string(ev.Object), secret) {
		t.Error("the test event carries the secret")
	}
	body, err := Envelope(ev, ev.Object)
	if err != nil || !strings.Contains(string(body), `"type":"webhook.test"`) {
		t.Errorf("envelope %s %v", body, err)
	}

	// Refusals: another scope's endpoint, a malformed id, a disabled endpoint.
	if _, err := svc.SendTestEvent(ctx, liveScp, e.ID()); !errors.Is(err, notFound("")) {
		t.Errorf("foreign scope: %v", err)
	}
	if _, err := svc.SendTestEvent(ctx, testScp, "we_nope"); !errors.Is(err, notFound("")) {
		t.Errorf("bad id: %v", err)
	}
	if _, err := svc.DisableEndpoint(ctx, testScp, e.ID()); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.SendTestEvent(ctx, testScp, e.ID()); !errors.Is(err, ErrEndpointDisabled) {
		t.Errorf("disabled: %v", err)
	}
	if len(st.testEvents()) != 1 {
		t.Errorf("store saw %d test events", len(st.testEvents()))
	}
}

func TestDeliveryIDsChecked(t *testing.T) {
	ctx := context.Background()
	svc := mustService(t, newFakeStore())
	for _, id := range []string{"", "wd_short", "we_" + strings.Repeat("a", 24), "wd_" + strings.Repeat("-", 24)} {
		if _, err := svc.GetDelivery(ctx, testScp, id); !errors.Is(err, deliveryNotFound("")) {
			t.Errorf("get %q: %v", id, err)
		}
		if _, err := svc.Redeliver(ctx, testScp, id); !errors.Is(err, deliveryNotFound("")) {
			t.Errorf("redeliver %q: %v", id, err)
		}
	}
	if _, err := svc.ListDeliveries(ctx, testScp, "we_x", core.ListQuery{}); !errors.Is(err, notFound("")) {
		t.Errorf("list of unknown endpoint: %v", err)
	}
	if _, err := svc.ListDeliveries(ctx, testScp, "we_x", core.ListQuery{Limit: 101}); err == nil {
		t.Error("limit 101 accepted")
	}
}
