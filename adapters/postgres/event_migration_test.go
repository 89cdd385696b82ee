package postgres_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/wire"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/events"
	"github.com/kassa-pay/kassa/modules/webhooks"
	"github.com/kassa-pay/kassa/openapi/webhook"
)

// Migration 00024 keeps every event written before it, and loses no undelivered one: an event
// queued by the old trigger and not fanned out yet, and a delivery still pending, are both
// delivered after it with the payload they had; the events keep their merchant rendering
// (payment_intent.payment_failed in its one shape) and gain an app rendering.
func TestEventsMigrationLosesNoUndeliveredEvent(t *testing.T) {
	ctx := context.Background()
	e := newWhEnv(t)
	rc := newReceiver(t, nil)
	ep, secret := e.endpoint(t, rc.URL)
	if err := postgres.MigrateTo(ctx, e.db, 21); err != nil {
		t.Fatal(err)
	}
	session := `{"id":"cs_m1","object":"checkout.session","status":"expired","amount":2500,"currency":"EUR","created":1777624200,"expires_at":1777710600,"line_items":[],"metadata":{},"customer_name":"","customer_email":""}`
	decline := `{"object":"payment_intent","session_id":"cs_m1","amount":2500,"currency":"EUR","payment_method":"card","failure_code":"card_declined","decline_code":"insufficient_funds","failure_message":"Declined.","card":null,"created":1777624200}`
	ins := func(id, typ, data string, objectID any) {
		t.Helper()
		if _, err := e.db.Exec(`INSERT INTO events (id, merchant_id, environment, type, created, data, object_id)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`, id, e.scope.MerchantID, string(e.scope.Env), typ, e.clock.Now(), data, objectID); err != nil {
			t.Fatal(err)
		}
	}
	// Queued by the old trigger (the scope has an enabled endpoint), not fanned out yet.
	ins("evt_m_queued", "checkout.session.expired", session, "cs_m1")
	ins("evt_m_decline", "payment_intent.payment_failed", decline, nil)
	// Fanned out already: its delivery is pending.
	ins("evt_m_pending", "checkout.session.expired", session, "cs_m1")
	if _, err := e.db.Exec(`DELETE FROM webhook_fanout WHERE event_id = 'evt_m_pending'`); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.Exec(`INSERT INTO webhook_deliveries (merchant_id, environment, id, endpoint_id, event_id, event_type,
		status, next_attempt_at, created) VALUES ($1, $2, $3, $4, 'evt_m_pending', 'checkout.session.expired', 'pending', $5, $5)`,
		e.scope.MerchantID, string(e.scope.Env), core.NewID(webhooks.PrefixDelivery), ep.ID(), e.clock.Now()); err != nil {
		t.Fatal(err)
	}

	if _, err := postgres.MigrateUp(ctx, e.db); err != nil {
		t.Fatal(err)
	}
	var queued []string
	if err := e.db.Select(&queued, `SELECT event_id FROM event_fanout WHERE merchant_id = $1 ORDER BY seq`, e.scope.MerchantID); err != nil {
		t.Fatal(err)
	}
	if len(queued) != 2 || queued[0] != "evt_m_queued" || queued[1] != "evt_m_decline" {
		t.Fatalf("queued after the migration: %v", queued)
	}
	var kept []struct {
		ID   string `db:"id"`
		Kind string `db:"object_kind"`
	}
	if err := e.db.Select(&kept, `SELECT id, object_kind FROM events WHERE merchant_id = $1`, e.scope.MerchantID); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{}
	for _, k := range kept {
		kinds[k.ID] = k.Kind
	}
	if kinds["evt_m_queued"] != "checkout.session" || kinds["evt_m_decline"] != "charge" || kinds["evt_m_pending"] != "checkout.session" {
		t.Fatalf("object kinds %v", kinds)
	}

	// Both undelivered events go out, with the payload they were written with.
	if n := runOnce(t, e.worker(webhooks.WorkerOptions{})); n != 2 {
		t.Fatalf("attempts made: %d, want 2", n)
	}
	got := map[string]string{}
	for _, h := range rc.got() {
		ev, err := webhook.ConstructEventAt(h.body, h.header.Get("Service-Signature"), secret, 0, e.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		got[ev.ID] = canonicalJSON(t, ev.Data.Object)
	}
	if len(got) != 2 || got["evt_m_queued"] != canonicalJSON(t, []byte(session)) || got["evt_m_pending"] != canonicalJSON(t, []byte(session)) {
		t.Fatalf("delivered %v", got)
	}
	if n := countRows(t, e.db, `SELECT count(*) FROM event_fanout WHERE merchant_id = $1`, e.scope.MerchantID); n != 0 {
		t.Fatalf("%d events left queued", n)
	}

	// The decline kept before the migration renders in the one shape of its type.
	ev, err := mustEvents(t, e).Get(ctx, e.scope, "evt_m_decline")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := wire.RenderEvent(*ev, core.ChannelMerchant)
	if err != nil {
		t.Fatal(err)
	}
	var pi map[string]any
	if err := json.Unmarshal(raw, &pi); err != nil {
		t.Fatal(err)
	}
	if pi["object"] != "payment_intent" || pi["status"] != "failed" || pi["id"] != nil || pi["decline_code"] != "insufficient_funds" {
		t.Fatalf("decline after the migration: %s", raw)
	}
	if _, err := wire.RenderEvent(*ev, core.ChannelApp); err != nil {
		t.Fatalf("app rendering of a kept decline: %v", err)
	}
}

func mustEvents(t *testing.T, e *whEnv) *events.Service {
	t.Helper()
	return events.NewService(postgres.NewEventStore(e.db))
}

func canonicalJSON(t *testing.T, raw []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The outbox writer's probe of the fan-out queue (is it empty, so that the workers must be
// woken?) reads the queue's index once the table has pages to speak of, with or without
// statistics: between two vacuums the table's pages are mostly rows the fan-out deleted, and
// a sequential scan made every event write read them. (A small table is read whole, which
// costs less than the index.)
func TestOutboxQueueProbeUsesTheIndex(t *testing.T) {
	t.Parallel()
	e := newWhEnv(t)
	// A busy queue the fan-out has just emptied: 20,000 rows deleted, not vacuumed yet.
	if _, err := e.db.Exec(`INSERT INTO event_fanout (merchant_id, environment, event_id)
		SELECT $1, 'test', 'evt_' || g FROM generate_series(1, 20000) g`, e.scope.MerchantID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.Exec(`DELETE FROM event_fanout`); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		var lines []string
		if err := e.db.Select(&lines, `EXPLAIN SELECT (`+postgres.FanoutQueued+`) IS NOT NULL`); err != nil {
			t.Fatal(err)
		}
		plan := strings.Join(lines, "\n")
		if !strings.Contains(plan, "event_fanout_order") || strings.Contains(plan, "Seq Scan") {
			t.Errorf("%s: the queue probe does not read event_fanout_order:\n%s", when, plan)
		}
	}
	check("cold statistics")
	e.event(t, "invoice.paid")
	if _, err := e.db.Exec(`ANALYZE event_fanout`); err != nil {
		t.Fatal(err)
	}
	check("after ANALYZE")
}
