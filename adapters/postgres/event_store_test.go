package postgres_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lib/pq"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/checkout"
	"github.com/kassa-pay/kassa/modules/events"
	"github.com/kassa-pay/kassa/modules/payments"
)

// The events about an object are found by the object_id each event is written with, through
// the events_object index: the query never reads the merchant's other events, whether or not
// the planner has statistics for the table (a new merchant's history meets cold statistics).
func TestEventsAboutUseTheObjectIndex(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	scope := pgtest.Merchant(t, db)
	other := core.Scope{MerchantID: scope.MerchantID, Env: core.EnvLive}
	t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)

	// The merchant's busy history: many events about other objects.
	if _, err := db.Exec(`INSERT INTO events (id, merchant_id, environment, type, created, object, object_id, object_kind)
		SELECT 'evt_bulk' || g, $1, $2, 'checkout.session.expired', $3, jsonb_build_object('id', 'cs_bulk' || g), 'cs_bulk' || g,
			'checkout.session'
		FROM generate_series(1, 5000) g`, scope.MerchantID, string(scope.Env), t0); err != nil {
		t.Fatal(err)
	}
	sess := core.NewID(core.PrefixSession)
	session := checkout.RehydrateSession(checkout.SessionSnapshot{ID: sess, Scope: scope, Mode: checkout.ModePayment,
		Status: checkout.StatusComplete, Amount: 2500, Currency: "EUR", Created: t0, ExpiresAt: t0.Add(checkout.Lifetime)})
	payment, err := payments.NewPayment(payments.NewPaymentParams{Scope: scope, PayableKind: checkout.Kind.Name, SessionID: &sess, Amount: 2500, Currency: "EUR",
		Status: payments.StatusSucceeded, Method: payments.MethodSEPADebit, Fee: payments.Fee{Currency: "EUR", RateDate: t0}, Created: t0})
	if err != nil {
		t.Fatal(err)
	}
	pay := payment.ID()
	evs := []core.Event{
		core.NewEvent(core.EventPaymentIntentPaymentFailed, scope, t0, payments.ChargeDeclined{SessionID: sess, At: t0}),
		core.NewEvent(core.EventPaymentIntentSucceeded, scope, t0.Add(time.Second), payments.PaymentEvent{Payment: payment}),
		core.NewEvent(core.EventCheckoutSessionCompleted, scope, t0.Add(time.Second), checkout.SessionEvent{Session: session}),
		core.NewEvent(core.EventCheckoutSessionCompleted, other, t0, checkout.SessionEvent{Session: session}), // another environment
	}
	if err := postgres.InsertEvents(ctx, db, evs); err != nil {
		t.Fatal(err)
	}
	var nulls int
	if err := db.Get(&nulls, `SELECT count(*) FROM events WHERE merchant_id = $1 AND object_id IS NULL`, scope.MerchantID); err != nil || nulls != 1 {
		t.Fatalf("events without an object: %d %v, want the decline only", nulls, err)
	}

	got, err := events.NewService(postgres.NewEventStore(db)).About(ctx, scope, pay, sess, pay)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range got {
		ids = append(ids, e.ID)
	}
	if want := []string{evs[2].ID, evs[1].ID}; !slices.Equal(ids, want) {
		t.Fatalf("events about %s and %s: %v, want %v (newest first)", pay, sess, ids, want)
	}

	plan := func() string {
		t.Helper()
		var lines []string
		if err := db.Select(&lines, `EXPLAIN `+postgres.EventsAboutQuery,
			scope.MerchantID, string(scope.Env), pq.Array([]string{pay, sess, pay}), events.MaxEventsAbout); err != nil {
			t.Fatal(err)
		}
		return strings.Join(lines, "\n")
	}
	check := func(when string) {
		t.Helper()
		p := plan()
		t.Logf("%s:\n%s", when, p)
		if !strings.Contains(p, "events_object") || strings.Contains(p, "Seq Scan") || strings.Contains(p, "events_scope") {
			t.Errorf("%s: the events about an object are not read through events_object:\n%s", when, p)
		}
	}
	check("cold statistics")
	if _, err := db.Exec(`ANALYZE events`); err != nil {
		t.Fatal(err)
	}
	check("after ANALYZE")
}

// Migration 00016 gives the events written before it their object_id from data.id.
func TestEventObjectIDBackfill(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	scope := pgtest.Merchant(t, db)
	if err := postgres.MigrateTo(ctx, db, 15); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO events (id, merchant_id, environment, type, created, data) VALUES
		('evt_a', $1, $2, 'payment_intent.succeeded', now(), '{"id": "py_a", "object": "payment"}'),
		('evt_b', $1, $2, 'payment_intent.payment_failed', now(), '{"object": "payment_intent"}')`,
		scope.MerchantID, string(scope.Env)); err != nil {
		t.Fatal(err)
	}
	if err := postgres.MigrateTo(ctx, db, 16); err != nil {
		t.Fatal(err)
	}
	var got []struct {
		ID       string  `db:"id"`
		ObjectID *string `db:"object_id"`
	}
	if err := db.Select(&got, `SELECT id, object_id FROM events WHERE merchant_id = $1 ORDER BY id`, scope.MerchantID); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ObjectID == nil || *got[0].ObjectID != "py_a" || got[1].ObjectID != nil {
		t.Fatalf("backfilled %+v", got)
	}
	if _, err := postgres.MigrateUp(ctx, db); err != nil {
		t.Fatal(err)
	}
}
