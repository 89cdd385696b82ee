package postgres_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/webhooks"
	"github.com/kassa-pay/kassa/openapi/webhook"
)

var errDeliveryNotFound = core.NotFound("webhook_delivery", "", "")

// deliveryOf returns the delivery of one event to one endpoint through the log.
func (e *whEnv) deliveryOf(t *testing.T, endpointID, eventID string) *webhooks.Delivery {
	t.Helper()
	page, err := e.svc.ListDeliveries(context.Background(), e.scope, endpointID, core.ListQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range page.Items {
		if d.EventID == eventID {
			return d
		}
	}
	t.Fatalf("no delivery of %s to %s", eventID, endpointID)
	return nil
}

func TestWebhookDeliveryLogShowsEveryAttempt(t *testing.T) {
	ctx := context.Background()
	e := newWhEnv(t)
	rc := newReceiver(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 1 {
			w.WriteHeader(503)
			_, _ = w.Write([]byte("maintenance"))
		}
	})
	ep, _ := e.endpoint(t, rc.URL)
	evt := e.event(t, "invoice.paid")
	w := e.worker(webhooks.WorkerOptions{})
	runOnce(t, w)
	d := e.deliveryOf(t, ep.ID(), evt)
	if d.Status != webhooks.DeliveryPending || d.Attempts != 1 || d.EventType != "invoice.paid" || d.NextAttemptAt == nil ||
		!d.NextAttemptAt.Equal(e.clock.Now().Add(5*time.Second)) || d.LastAttemptAt == nil || d.CompletedAt != nil {
		t.Fatalf("after a 503: %+v", d)
	}
	e.clock.Add(5 * time.Second)
	runOnce(t, w)
	got, err := e.svc.GetDelivery(ctx, e.scope, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != webhooks.DeliverySucceeded || got.Attempts != 2 || got.NextAttemptAt != nil || got.CompletedAt == nil ||
		got.EndpointID != ep.ID() || got.EventID != evt {
		t.Fatalf("delivery %+v", got.Delivery)
	}
	if len(got.AttemptLog) != 2 {
		t.Fatalf("attempts %+v", got.AttemptLog)
	}
	a1, a2 := got.AttemptLog[0], got.AttemptLog[1]
	if a1.Number != 1 || a1.Outcome.StatusCode != 503 || a1.Outcome.Excerpt != "maintenance" || a1.Outcome.Err != "" ||
		a2.Number != 2 || a2.Outcome.StatusCode != 200 || !a2.StartedAt.After(a1.StartedAt) {
		t.Fatalf("attempt log %+v", got.AttemptLog)
	}
}

func TestWebhookDeliveryLogPagesAndIsolation(t *testing.T) {
	ctx := context.Background()
	e := newWhEnv(t)
	rc := newReceiver(t, nil)
	ep, _ := e.endpoint(t, rc.URL)
	other, _ := e.endpoint(t, rc.URL+"/other", "invoice.voided")
	var ids []string
	for range 5 {
		ids = append(ids, e.event(t, "invoice.paid"))
	}
	otherEvt := e.event(t, "invoice.voided")
	runOnce(t, e.worker(webhooks.WorkerOptions{}))

	// Newest first, two by two.
	var seen []string
	q := core.ListQuery{Limit: 2}
	for {
		page, err := e.svc.ListDeliveries(ctx, e.scope, ep.ID(), q)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range page.Items {
			seen = append(seen, d.EventID)
		}
		if !page.HasMore {
			break
		}
		q.StartingAfter = page.Items[len(page.Items)-1].ID
	}
	// ep subscribes to "*": the five invoice.paid and the invoice.voided, newest first.
	if len(seen) != 6 || seen[0] != otherEvt || seen[1] != ids[4] || seen[5] != ids[0] {
		t.Fatalf("listed %v", seen)
	}
	// A cursor from another endpoint's log is not a cursor of this list.
	od := e.deliveryOf(t, other.ID(), otherEvt)
	if _, err := e.svc.ListDeliveries(ctx, e.scope, ep.ID(), core.ListQuery{StartingAfter: od.ID}); !errors.Is(err, core.Invalid("starting_after_invalid", "", "")) {
		t.Fatalf("foreign cursor: %v", err)
	}

	// Another merchant, and the other environment, see none of it.
	foreign := core.Scope{MerchantID: pgtest.Merchant(t, e.db).MerchantID, Env: core.EnvTest}
	live := core.Scope{MerchantID: e.scope.MerchantID, Env: core.EnvLive}
	for _, scope := range []core.Scope{foreign, live} {
		if _, err := e.svc.GetDelivery(ctx, scope, od.ID); !errors.Is(err, errDeliveryNotFound) {
			t.Errorf("%v get: %v", scope, err)
		}
		if _, err := e.svc.Redeliver(ctx, scope, od.ID); !errors.Is(err, errDeliveryNotFound) {
			t.Errorf("%v redeliver: %v", scope, err)
		}
		if _, err := e.svc.ListDeliveries(ctx, scope, ep.ID(), core.ListQuery{}); !errors.Is(err, core.NotFound("webhook_endpoint", "", "")) {
			t.Errorf("%v list: %v", scope, err)
		}
		if _, err := e.svc.SendTestEvent(ctx, scope, ep.ID()); !errors.Is(err, core.NotFound("webhook_endpoint", "", "")) {
			t.Errorf("%v test event: %v", scope, err)
		}
	}
	if _, err := e.svc.GetDelivery(ctx, e.scope, core.NewID(webhooks.PrefixDelivery)); !errors.Is(err, errDeliveryNotFound) {
		t.Errorf("unknown id: %v", err)
	}
}

func TestWebhookRedeliver(t *testing.T) {
	ctx := context.Background()
	e := newWhEnv(t)
	fail := true
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		if fail {
			w.WriteHeader(500)
		}
	})
	ep, _ := e.endpoint(t, rc.URL)
	w := e.worker(webhooks.WorkerOptions{})

	// A delivery that used up its schedule ends failed; a redelivery is one attempt more.
	evt := e.event(t, "invoice.paid")
	for i := range webhooks.MaxAttempts {
		runOnce(t, w)
		if i < len(webhooks.RetrySchedule) {
			e.clock.Add(webhooks.RetrySchedule[i])
		}
	}
	d := e.deliveryOf(t, ep.ID(), evt)
	if d.Status != webhooks.DeliveryFailed || d.Attempts != webhooks.MaxAttempts {
		t.Fatalf("exhausted: %+v", d)
	}
	r, err := e.svc.Redeliver(ctx, e.scope, d.ID)
	if err != nil || r.Status != webhooks.DeliveryPending || r.NextAttemptAt == nil || !r.NextAttemptAt.Equal(e.clock.Now()) || r.CompletedAt != nil {
		t.Fatalf("redeliver: %+v %v", r, err)
	}
	runOnce(t, w)
	if d := e.deliveryOf(t, ep.ID(), evt); d.Status != webhooks.DeliveryFailed || d.Attempts != webhooks.MaxAttempts+1 {
		t.Fatalf("failed redelivery: %+v", d)
	}

	// A succeeded delivery is sent again, under the next attempt number.
	fail = false
	if _, err := e.svc.Redeliver(ctx, e.scope, d.ID); err != nil {
		t.Fatal(err)
	}
	runOnce(t, w)
	hits := rc.got()
	last := hits[len(hits)-1]
	if last.header.Get("Service-Event-Id") != evt || last.header.Get("Service-Delivery-Attempt") != "12" {
		t.Fatalf("redelivered attempt: %v", last.header)
	}
	if _, err := e.svc.Redeliver(ctx, e.scope, d.ID); err != nil {
		t.Fatal(err)
	}
	runOnce(t, w)
	got, _ := e.svc.GetDelivery(ctx, e.scope, d.ID)
	if got.Status != webhooks.DeliverySucceeded || got.Attempts != 13 || len(got.AttemptLog) != 13 || got.AttemptLog[12].Outcome.StatusCode != 200 {
		t.Fatalf("after redeliveries: %+v, %d attempts", got.Delivery, len(got.AttemptLog))
	}

	// Nothing is sent to a disabled endpoint, by hand either.
	if _, err := e.svc.DisableEndpoint(ctx, e.scope, ep.ID()); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Redeliver(ctx, e.scope, d.ID); !errors.Is(err, webhooks.ErrEndpointDisabled) {
		t.Fatalf("disabled endpoint: %v", err)
	}
	if got, _ := e.svc.GetDelivery(ctx, e.scope, d.ID); got.Status != webhooks.DeliverySucceeded {
		t.Fatalf("refused redelivery changed the delivery: %+v", got.Delivery)
	}
}

func TestWebhookSendTestEvent(t *testing.T) {
	ctx := context.Background()
	e := newWhEnv(t)
	rc := newReceiver(t, nil)
	bystander := newReceiver(t, nil)
	ep, secret := e.endpoint(t, rc.URL, "invoice.paid") // subscriptions do not matter
	e.endpoint(t, bystander.URL)

	d, err := e.svc.SendTestEvent(ctx, e.scope, ep.ID())
	if err != nil || d.Status != webhooks.DeliveryPending || d.EventType != webhooks.TestEventType || d.EndpointID != ep.ID() {
		t.Fatalf("send: %+v %v", d, err)
	}
	runOnce(t, e.worker(webhooks.WorkerOptions{}))
	if len(bystander.got()) != 0 || len(rc.got()) != 1 {
		t.Fatalf("hits: %d to the endpoint, %d to another", len(rc.got()), len(bystander.got()))
	}
	h := rc.got()[0]
	ev, err := webhook.ConstructEventAt(h.body, h.header.Get("Service-Signature"), secret, 0, e.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if ev.ID != d.EventID || ev.Type != "webhook.test" || ev.Environment != "test" || ev.Created != e.clock.Now().Unix() ||
		h.header.Get("Service-Event-Type") != "webhook.test" || h.header.Get("Service-Delivery-Attempt") != "1" {
		t.Fatalf("envelope %+v, headers %v", ev, h.header)
	}
	got, err := e.svc.GetDelivery(ctx, e.scope, d.ID)
	if err != nil || got.Status != webhooks.DeliverySucceeded || len(got.AttemptLog) != 1 {
		t.Fatalf("log: %+v %v", got, err)
	}
	// Not in the outbox: the merchant's event list never shows it.
	var n int
	if err := e.db.Get(&n, `SELECT count(*) FROM events WHERE id = $1`, d.EventID); err != nil || n != 0 {
		t.Fatalf("test event in the outbox: %d %v", n, err)
	}
	// It can be redelivered like any other.
	if _, err := e.svc.Redeliver(ctx, e.scope, d.ID); err != nil {
		t.Fatal(err)
	}
	runOnce(t, e.worker(webhooks.WorkerOptions{}))
	if hits := rc.got(); len(hits) != 2 || string(hits[1].body) != string(hits[0].body) {
		t.Fatalf("redelivered test event: %d hits", len(hits))
	}
	if _, err := e.svc.DisableEndpoint(ctx, e.scope, ep.ID()); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.SendTestEvent(ctx, e.scope, ep.ID()); !errors.Is(err, webhooks.ErrEndpointDisabled) {
		t.Fatalf("disabled endpoint: %v", err)
	}
}
