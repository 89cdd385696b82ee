// Package webhookstest is the behaviour every webhooks.Store shows, written once and run
// against each implementation: adapters/postgres runs it on a database, the module's tests on
// their in-memory fake, so that the fake the use-case tests rely on cannot drift from what
// production does. It imports testing and is imported by tests only.
package webhookstest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/webhooks"
)

// Harness is one store under test with storage of its own (the fan-out and the claim span
// every scope, so no other case may share it), a way to get scopes it accepts, and the outbox
// writer over the same storage.
type Harness struct {
	Store webhooks.Store
	// NewScope returns the test scope of a merchant no other test uses (Postgres: a fresh
	// merchant row).
	NewScope func(t *testing.T) core.Scope
	// Publish writes events to the outbox and commits them, as a unit of work's
	// Outbox().Add does.
	Publish func(t *testing.T, evs ...core.EventRecord)
}

// RunStore runs the suite; newHarness is called once per case, which runs in parallel with
// the others.
func RunStore(t *testing.T, newHarness func(t *testing.T) Harness) {
	cases := []struct {
		name string
		run  func(t *testing.T, h Harness)
	}{
		{"endpoint round trip", endpointRoundTrip},
		{"unknown ids and other scopes", unknownAndOtherScopes},
		{"endpoint limit", endpointLimit},
		{"failed update writes nothing", failedUpdate},
		{"concurrent updates lose nothing", concurrentUpdates},
		{"fan-out to subscribers only", fanOutToSubscribers},
		{"concurrent fan-outs deliver once", concurrentFanOuts},
		{"one claimant per attempt", oneClaimant},
		{"an expired lease is claimed again", expiredLease},
		{"an outcome recorded late", lateOutcome},
		{"disabling ends pending deliveries", disablingEndsPending},
		{"redeliver", redeliver},
		{"test delivery", testDelivery},
		{"delivery log pages newest first", deliveryLog},
		{"delete takes the deliveries", deleteTakesDeliveries},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, newHarness(t))
		})
	}
}

// t0 is a time every store keeps exactly (whole seconds, UTC).
var t0 = time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)

var ctx = context.Background()

// endpoint builds an enabled endpoint of scope subscribed to events.
func endpoint(scope core.Scope, created time.Time, events ...string) *webhooks.Endpoint {
	if len(events) == 0 {
		events = []string{webhooks.AllEvents}
	}
	id := core.NewID(webhooks.PrefixEndpoint)
	return webhooks.RehydrateEndpoint(webhooks.EndpointSnapshot{ID: id, Scope: scope, URL: "https://shop.example/hooks/" + id,
		EnabledEvents: events, Status: webhooks.StatusEnabled, Secret: webhooks.NewSecret(), Created: created})
}

func insert(t *testing.T, h Harness, scope core.Scope, events ...string) *webhooks.Endpoint {
	t.Helper()
	e := endpoint(scope, t0, events...)
	if err := h.Store.InsertEndpoint(ctx, e); err != nil {
		t.Fatal(err)
	}
	return e
}

// event is an outbox event of typ about a session.
func event(scope core.Scope, typ core.EventType) core.EventRecord {
	sid := core.NewID(core.PrefixSession)
	return core.EventRecord{ID: core.NewID(core.PrefixEvent), Type: typ, Scope: scope, Created: t0,
		ObjectKind: core.ObjectCheckoutSession, ObjectID: sid, Object: []byte(`{"id":"` + sid + `","object":"checkout.session"}`)}
}

// sameJSON reports whether a and b are the same JSON value (a store may keep JSON in a
// normalised form).
func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

func subscribes(e *webhooks.Endpoint, typ string) bool { return e.Subscribes(typ) }

// fanOutAll fans out until the queue is empty and returns how many events it took.
func fanOutAll(t *testing.T, h Harness, now time.Time) int {
	t.Helper()
	total := 0
	for {
		n, err := h.Store.FanOut(ctx, 100, now, subscribes)
		if err != nil {
			t.Fatal(err)
		}
		total += n
		if n == 0 {
			return total
		}
	}
}

func claim(t *testing.T, h Harness, now time.Time) []*webhooks.Job {
	t.Helper()
	jobs, err := h.Store.ClaimDue(ctx, now, time.Minute, 100)
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

func record(t *testing.T, h Harness, j *webhooks.Job, o webhooks.Outcome, now time.Time, next webhooks.Next) {
	t.Helper()
	if err := h.Store.RecordAttempt(ctx, j, webhooks.Attempt{Number: j.Attempt, StartedAt: now, Outcome: o}, now,
		func(*webhooks.Endpoint) webhooks.Next { return next }); err != nil {
		t.Fatal(err)
	}
}

func delivery(t *testing.T, h Harness, scope core.Scope, id string) *webhooks.DeliveryDetail {
	t.Helper()
	d, err := h.Store.GetDelivery(ctx, scope, id)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// deliveriesOf returns the deliveries of an endpoint, newest first.
func deliveriesOf(t *testing.T, h Harness, scope core.Scope, endpointID string) []*webhooks.Delivery {
	t.Helper()
	p, err := h.Store.ListDeliveries(ctx, scope, endpointID, core.ListQuery{Limit: core.MaxListLimit})
	if err != nil {
		t.Fatal(err)
	}
	return p.Items
}

func endpointRoundTrip(t *testing.T, h Harness) {
	scope := h.NewScope(t)
	a := insert(t, h, scope)
	b := endpoint(scope, t0.Add(time.Second), "checkout.session.completed", "invoice.paid")
	if err := b.Update(webhooks.EndpointParams{URL: b.URL(), EnabledEvents: b.EnabledEvents(), Description: "orders"}, webhooks.Destinations{}); err != nil {
		t.Fatal(err)
	}
	if err := h.Store.InsertEndpoint(ctx, b); err != nil {
		t.Fatal(err)
	}
	got, err := h.Store.GetEndpoint(ctx, scope, b.ID())
	if err != nil {
		t.Fatal(err)
	}
	want, have := b.Snapshot(), got.Snapshot()
	if have.ID != want.ID || have.Scope != want.Scope || have.URL != want.URL || !slices.Equal(have.EnabledEvents, want.EnabledEvents) ||
		have.Description != "orders" || have.Status != webhooks.StatusEnabled || have.Secret != want.Secret ||
		have.Previous != nil || !have.Created.Equal(want.Created) || have.SecretUnavailable {
		t.Fatalf("round trip:\n got %+v\nwant %+v", have, want)
	}
	list, err := h.Store.ListEndpoints(ctx, scope)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID() != b.ID() || list[1].ID() != a.ID() {
		t.Fatalf("list: %v, want %s then %s (newest first)", ids(list), b.ID(), a.ID())
	}
	// A rotation keeps the previous secret with its expiry.
	rotated, err := h.Store.UpdateEndpoint(ctx, scope, a.ID(), t0, func(e *webhooks.Endpoint) error { e.RotateSecret(t0); return nil })
	if err != nil {
		t.Fatal(err)
	}
	again, err := h.Store.GetEndpoint(ctx, scope, a.ID())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(again.ActiveSecrets(t0), rotated.ActiveSecrets(t0)) || len(again.ActiveSecrets(t0)) != 2 ||
		!again.PreviousSecretExpiresAt(t0).Equal(t0.Add(webhooks.SecretOverlap)) {
		t.Fatalf("rotation kept %v, want %v", again.ActiveSecrets(t0), rotated.ActiveSecrets(t0))
	}
}

func ids(es []*webhooks.Endpoint) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.ID()
	}
	return out
}

func unknownAndOtherScopes(t *testing.T, h Harness) {
	scope := h.NewScope(t)
	other := core.Scope{MerchantID: scope.MerchantID, Env: core.EnvLive}
	e := insert(t, h, scope)
	unknown := core.NewID(webhooks.PrefixEndpoint)
	for name, err := range map[string]error{
		"get other scope": func() error { _, err := h.Store.GetEndpoint(ctx, other, e.ID()); return err }(),
		"get unknown":     func() error { _, err := h.Store.GetEndpoint(ctx, scope, unknown); return err }(),
		"update other scope": func() error {
			_, err := h.Store.UpdateEndpoint(ctx, other, e.ID(), t0, func(*webhooks.Endpoint) error { return nil })
			return err
		}(),
		"delete other scope": h.Store.DeleteEndpoint(ctx, other, e.ID()),
		"delete unknown":     h.Store.DeleteEndpoint(ctx, scope, unknown),
		"test delivery to other scope": func() error {
			_, err := h.Store.InsertTestDelivery(ctx, e.ID(), testEvent(other, e), t0)
			return err
		}(),
	} {
		if !errors.Is(err, webhooks.ErrNotFound) {
			t.Errorf("%s: %v, want ErrNotFound", name, err)
		}
	}
	if list, err := h.Store.ListEndpoints(ctx, other); err != nil || len(list) != 0 {
		t.Errorf("other scope lists %d endpoints (%v)", len(list), err)
	}
	unknownDelivery := core.NewID(webhooks.PrefixDelivery)
	if _, err := h.Store.GetDelivery(ctx, scope, unknownDelivery); !errors.Is(err, webhooks.ErrDeliveryNotFound) {
		t.Errorf("get unknown delivery: %v", err)
	}
	if _, err := h.Store.Redeliver(ctx, scope, unknownDelivery, t0); !errors.Is(err, webhooks.ErrDeliveryNotFound) {
		t.Errorf("redeliver unknown delivery: %v", err)
	}
	// A delivery of the scope is not one of the other scope.
	d, err := h.Store.InsertTestDelivery(ctx, e.ID(), testEvent(scope, e), t0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Store.GetDelivery(ctx, other, d.ID); !errors.Is(err, webhooks.ErrDeliveryNotFound) {
		t.Errorf("get another scope's delivery: %v", err)
	}
	if _, err := h.Store.Redeliver(ctx, other, d.ID, t0); !errors.Is(err, webhooks.ErrDeliveryNotFound) {
		t.Errorf("redeliver another scope's delivery: %v", err)
	}
}

func testEvent(scope core.Scope, e *webhooks.Endpoint) webhooks.OutboxEvent {
	return webhooks.OutboxEvent{ID: core.NewID(core.PrefixEvent), Type: webhooks.TestEventType, Scope: scope, Created: t0,
		ObjectKind: core.ObjectWebhookEndpoint, ObjectID: e.ID(), Object: []byte(`{"id":"` + e.ID() + `","object":"webhook_endpoint"}`)}
}

func endpointLimit(t *testing.T, h Harness) {
	scope := h.NewScope(t)
	for range webhooks.MaxEndpoints {
		insert(t, h, scope)
	}
	if err := h.Store.InsertEndpoint(ctx, endpoint(scope, t0)); !errors.Is(err, webhooks.ErrEndpointLimit) {
		t.Fatalf("endpoint %d: %v, want ErrEndpointLimit", webhooks.MaxEndpoints+1, err)
	}
	// The limit is per scope.
	if err := h.Store.InsertEndpoint(ctx, endpoint(core.Scope{MerchantID: scope.MerchantID, Env: core.EnvLive}, t0)); err != nil {
		t.Fatalf("the live environment's first endpoint: %v", err)
	}
}

func failedUpdate(t *testing.T, h Harness) {
	scope := h.NewScope(t)
	e := insert(t, h, scope)
	boom := errors.New("boom")
	_, err := h.Store.UpdateEndpoint(ctx, scope, e.ID(), t0, func(e *webhooks.Endpoint) error {
		e.Disable(webhooks.DisabledByMerchant)
		e.RotateSecret(t0)
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("update: %v, want fn's error", err)
	}
	got, err := h.Store.GetEndpoint(ctx, scope, e.ID())
	if err != nil {
		t.Fatal(err)
	}
	if !got.Enabled() || got.Secret() != e.Secret() || len(got.ActiveSecrets(t0)) != 1 {
		t.Fatalf("a failed update wrote: enabled %v, secrets %d", got.Enabled(), len(got.ActiveSecrets(t0)))
	}
}

func concurrentUpdates(t *testing.T, h Harness) {
	scope := h.NewScope(t)
	e := insert(t, h, scope)
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := h.Store.UpdateEndpoint(ctx, scope, e.ID(), t0, func(e *webhooks.Endpoint) error {
				return e.Update(webhooks.EndpointParams{URL: e.URL(), EnabledEvents: e.EnabledEvents(),
					Description: e.Description() + fmt.Sprint(i%10)}, webhooks.Destinations{})
			})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	got, err := h.Store.GetEndpoint(ctx, scope, e.ID())
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Description()) != n {
		t.Fatalf("description %q after %d concurrent appends: an update was lost", got.Description(), n)
	}
}

func fanOutToSubscribers(t *testing.T, h Harness) {
	scope := h.NewScope(t)
	quiet := h.NewScope(t) // no endpoint: its events are taken and deliver nothing
	all := insert(t, h, scope)
	paid := insert(t, h, scope, "invoice.paid")
	off := insert(t, h, scope)
	if _, err := h.Store.UpdateEndpoint(ctx, scope, off.ID(), t0, func(e *webhooks.Endpoint) error {
		e.Disable(webhooks.DisabledByMerchant)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	expired := event(scope, core.EventCheckoutSessionExpired)
	invoice := event(scope, core.EventInvoicePaid)
	appOnly := event(scope, core.EventPaymentIntentSucceeded) // no merchant endpoint receives it
	h.Publish(t, expired, invoice, appOnly, event(quiet, core.EventCheckoutSessionExpired))
	if n := fanOutAll(t, h, t0); n != 4 {
		t.Fatalf("fan-out took %d events, want 4", n)
	}
	events := func(ds []*webhooks.Delivery) []string {
		var out []string
		for _, d := range ds {
			out = append(out, d.EventID)
			if d.Status != webhooks.DeliveryPending || d.Attempts != 0 || d.NextAttemptAt == nil || !d.NextAttemptAt.Equal(t0) {
				t.Errorf("new delivery %+v", d)
			}
		}
		slices.Sort(out)
		return out
	}
	want := []string{expired.ID, invoice.ID}
	slices.Sort(want)
	if got := events(deliveriesOf(t, h, scope, all.ID())); !slices.Equal(got, want) {
		t.Errorf("the * endpoint got %v, want %v", got, want)
	}
	if got := events(deliveriesOf(t, h, scope, paid.ID())); !slices.Equal(got, []string{invoice.ID}) {
		t.Errorf("the invoice.paid endpoint got %v", got)
	}
	if got := deliveriesOf(t, h, scope, off.ID()); len(got) != 0 {
		t.Errorf("the disabled endpoint got %d deliveries", len(got))
	}
	if n := fanOutAll(t, h, t0); n != 0 {
		t.Errorf("a second fan-out took %d events", n)
	}
	// The claim hands out the event as it was written.
	jobs := claim(t, h, t0)
	if len(jobs) != 3 {
		t.Fatalf("%d jobs, want 3", len(jobs))
	}
	for _, j := range jobs {
		if j.Event.ID == expired.ID && (j.Event.Type != expired.Type || j.Event.ObjectKind != expired.ObjectKind ||
			j.Event.ObjectID != expired.ObjectID || !sameJSON(j.Event.Object, expired.Object) ||
			!j.Event.Created.Equal(expired.Created) || j.Event.Scope != scope) {
			t.Errorf("claimed event %+v, want %+v", j.Event, expired)
		}
	}
}

func concurrentFanOuts(t *testing.T, h Harness) {
	scope := h.NewScope(t)
	e := insert(t, h, scope)
	const events = 40
	var evs []core.EventRecord
	for range events {
		evs = append(evs, event(scope, core.EventCheckoutSessionExpired))
	}
	h.Publish(t, evs...)
	var wg sync.WaitGroup
	var mu sync.Mutex
	taken := 0
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				n, err := h.Store.FanOut(ctx, 3, t0, subscribes)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				taken += n
				mu.Unlock()
				if n == 0 {
					return
				}
			}
		}()
	}
	wg.Wait()
	if taken != events {
		t.Errorf("fan-outs took %d events, want %d", taken, events)
	}
	if got := len(deliveriesOf(t, h, scope, e.ID())); got != events {
		t.Errorf("%d deliveries, want %d (one per event)", got, events)
	}
}

func oneClaimant(t *testing.T, h Harness) {
	scope := h.NewScope(t)
	insert(t, h, scope)
	const events = 20
	var evs []core.EventRecord
	for range events {
		evs = append(evs, event(scope, core.EventCheckoutSessionExpired))
	}
	h.Publish(t, evs...)
	fanOutAll(t, h, t0)
	if at, ok, err := h.Store.NextDue(ctx); err != nil || !ok || !at.Equal(t0) {
		t.Fatalf("next due %v %v %v, want %v", at, ok, err, t0)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[string]int{}
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			jobs, err := h.Store.ClaimDue(ctx, t0, time.Minute, 7)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for _, j := range jobs {
				seen[j.DeliveryID]++
				if j.Attempt != 1 {
					t.Errorf("first claim of %s has attempt %d", j.DeliveryID, j.Attempt)
				}
			}
		}()
	}
	wg.Wait()
	for id, n := range seen {
		if n != 1 {
			t.Errorf("%s claimed %d times", id, n)
		}
	}
	if len(seen) != events {
		t.Errorf("%d deliveries claimed, want %d", len(seen), events)
	}
	if jobs := claim(t, h, t0.Add(30*time.Second)); len(jobs) != 0 {
		t.Errorf("%d deliveries claimed again within their lease", len(jobs))
	}
	if at, ok, err := h.Store.NextDue(ctx); err != nil || !ok || !at.Equal(t0.Add(time.Minute)) {
		t.Errorf("next due %v %v %v, want the end of the lease", at, ok, err)
	}
}

func expiredLease(t *testing.T, h Harness) {
	scope := h.NewScope(t)
	insert(t, h, scope)
	h.Publish(t, event(scope, core.EventCheckoutSessionExpired))
	fanOutAll(t, h, t0)
	first := claim(t, h, t0)
	if len(first) != 1 {
		t.Fatalf("%d jobs", len(first))
	}
	// Its worker died: the lease ends and the next attempt number goes to the next claim; the
	// lost attempt is in the log as interrupted.
	later := t0.Add(time.Minute)
	again := claim(t, h, later)
	if len(again) != 1 || again[0].DeliveryID != first[0].DeliveryID || again[0].Attempt != 2 {
		t.Fatalf("claim after the lease: %+v", again)
	}
	d := delivery(t, h, scope, first[0].DeliveryID)
	if d.Attempts != 2 || len(d.AttemptLog) != 1 || d.AttemptLog[0].Number != 1 ||
		d.AttemptLog[0].Outcome.Err != webhooks.InterruptedError || !d.AttemptLog[0].StartedAt.Equal(t0) {
		t.Fatalf("after the retaken lease: attempts %d, log %+v", d.Attempts, d.AttemptLog)
	}
	record(t, h, again[0], webhooks.Outcome{StatusCode: 200, Latency: 5 * time.Millisecond}, later, webhooks.Next{Status: webhooks.DeliverySucceeded})
	d = delivery(t, h, scope, first[0].DeliveryID)
	if d.Status != webhooks.DeliverySucceeded || d.NextAttemptAt != nil || d.CompletedAt == nil || !d.CompletedAt.Equal(later) ||
		len(d.AttemptLog) != 2 || d.AttemptLog[1].Outcome.StatusCode != 200 || d.AttemptLog[1].Outcome.Latency != 5*time.Millisecond {
		t.Fatalf("after success: %+v %+v", d.Delivery, d.AttemptLog)
	}
	if _, ok, err := h.Store.NextDue(ctx); err != nil || ok {
		t.Errorf("next due after the last delivery ended: %v %v", ok, err)
	}
}

func lateOutcome(t *testing.T, h Harness) {
	scope := h.NewScope(t)
	insert(t, h, scope)
	h.Publish(t, event(scope, core.EventCheckoutSessionExpired))
	fanOutAll(t, h, t0)
	first := claim(t, h, t0)
	later := t0.Add(time.Minute)
	second := claim(t, h, later)
	if len(first) != 1 || len(second) != 1 {
		t.Fatalf("claims %d and %d", len(first), len(second))
	}
	// The slow first worker records after all: its outcome replaces the placeholder, and the
	// delivery, which the second attempt holds now, is left to it.
	record(t, h, first[0], webhooks.Outcome{StatusCode: 500}, later, webhooks.Next{Status: webhooks.DeliveryFailed})
	d := delivery(t, h, scope, first[0].DeliveryID)
	if d.Status != webhooks.DeliveryPending || len(d.AttemptLog) != 1 || d.AttemptLog[0].Outcome.StatusCode != 500 {
		t.Fatalf("after the late outcome: %+v %+v", d.Delivery, d.AttemptLog)
	}
	retry := later.Add(5 * time.Second)
	record(t, h, second[0], webhooks.Outcome{StatusCode: 503}, later, webhooks.Next{Status: webhooks.DeliveryPending, NextAttemptAt: &retry})
	d = delivery(t, h, scope, first[0].DeliveryID)
	if d.Status != webhooks.DeliveryPending || d.NextAttemptAt == nil || !d.NextAttemptAt.Equal(retry) || len(d.AttemptLog) != 2 {
		t.Fatalf("after the second attempt: %+v %+v", d.Delivery, d.AttemptLog)
	}
	// A recorded outcome is not replaced by another report of the same attempt.
	record(t, h, second[0], webhooks.Outcome{StatusCode: 200}, later, webhooks.Next{Status: webhooks.DeliverySucceeded})
	if d := delivery(t, h, scope, first[0].DeliveryID); d.AttemptLog[1].Outcome.StatusCode != 503 {
		t.Errorf("attempt 2 rewritten: %+v", d.AttemptLog[1])
	}
}

func disablingEndsPending(t *testing.T, h Harness) {
	scope := h.NewScope(t)
	e := insert(t, h, scope)
	h.Publish(t, event(scope, core.EventCheckoutSessionExpired), event(scope, core.EventCheckoutSessionExpired))
	fanOutAll(t, h, t0)
	// An attempt disables the endpoint (410 Gone): its other pending delivery ends too.
	jobs, err := h.Store.ClaimDue(ctx, t0, time.Minute, 1)
	if err != nil || len(jobs) != 1 {
		t.Fatalf("claim: %d %v", len(jobs), err)
	}
	later := t0.Add(time.Second)
	if err := h.Store.RecordAttempt(ctx, jobs[0], webhooks.Attempt{Number: 1, StartedAt: later, Outcome: webhooks.Outcome{StatusCode: 410}}, later,
		func(e *webhooks.Endpoint) webhooks.Next {
			e.RecordOutcome(webhooks.Outcome{StatusCode: 410}, later)
			return webhooks.Next{Status: webhooks.DeliveryDisabled}
		}); err != nil {
		t.Fatal(err)
	}
	got, err := h.Store.GetEndpoint(ctx, scope, e.ID())
	if err != nil || got.Enabled() || got.DisabledReason() != webhooks.DisabledGone {
		t.Fatalf("endpoint after 410: %v %v", got.Status(), err)
	}
	for _, d := range deliveriesOf(t, h, scope, e.ID()) {
		if d.Status != webhooks.DeliveryDisabled || d.NextAttemptAt != nil || d.CompletedAt == nil || !d.CompletedAt.Equal(later) {
			t.Errorf("delivery after the endpoint was disabled: %+v", d)
		}
	}
	if jobs := claim(t, h, later.Add(time.Hour)); len(jobs) != 0 {
		t.Errorf("%d deliveries of a disabled endpoint claimed", len(jobs))
	}
	// Events written while it is disabled are not delivered to it.
	h.Publish(t, event(scope, core.EventCheckoutSessionExpired))
	fanOutAll(t, h, later)
	if n := len(deliveriesOf(t, h, scope, e.ID())); n != 2 {
		t.Errorf("%d deliveries, want the 2 of before", n)
	}
}

func redeliver(t *testing.T, h Harness) {
	scope := h.NewScope(t)
	e := insert(t, h, scope)
	h.Publish(t, event(scope, core.EventCheckoutSessionExpired))
	fanOutAll(t, h, t0)
	jobs := claim(t, h, t0)
	record(t, h, jobs[0], webhooks.Outcome{StatusCode: 200}, t0, webhooks.Next{Status: webhooks.DeliverySucceeded})
	later := t0.Add(time.Hour)
	d, err := h.Store.Redeliver(ctx, scope, jobs[0].DeliveryID, later)
	if err != nil || d.Status != webhooks.DeliveryPending || d.NextAttemptAt == nil || !d.NextAttemptAt.Equal(later) || d.CompletedAt != nil {
		t.Fatalf("redeliver: %+v %v", d, err)
	}
	again := claim(t, h, later)
	if len(again) != 1 || again[0].Attempt != 2 {
		t.Fatalf("claim after redelivery: %+v", again)
	}
	if _, err := h.Store.UpdateEndpoint(ctx, scope, e.ID(), later, func(e *webhooks.Endpoint) error {
		e.Disable(webhooks.DisabledByMerchant)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Store.Redeliver(ctx, scope, jobs[0].DeliveryID, later); !errors.Is(err, webhooks.ErrEndpointDisabled) {
		t.Errorf("redeliver to a disabled endpoint: %v", err)
	}
}

func testDelivery(t *testing.T, h Harness) {
	scope := h.NewScope(t)
	e := insert(t, h, scope, "invoice.paid")
	ev := testEvent(scope, e)
	d, err := h.Store.InsertTestDelivery(ctx, e.ID(), ev, t0)
	if err != nil || d.Status != webhooks.DeliveryPending || d.EventID != ev.ID || d.EventType != webhooks.TestEventType ||
		d.EndpointID != e.ID() || d.NextAttemptAt == nil || !d.NextAttemptAt.Equal(t0) {
		t.Fatalf("test delivery: %+v %v", d, err)
	}
	// It is sent whatever the endpoint subscribes to, with the event it carries.
	jobs := claim(t, h, t0)
	if len(jobs) != 1 || jobs[0].Event.ID != ev.ID || string(jobs[0].Event.Type) != webhooks.TestEventType ||
		!sameJSON(jobs[0].Event.Object, ev.Object) || !jobs[0].Event.Created.Equal(t0) || jobs[0].Event.Scope != scope {
		t.Fatalf("claimed test event: %+v", jobs)
	}
	if n := fanOutAll(t, h, t0); n != 0 {
		t.Errorf("a test event entered the fan-out (%d)", n)
	}
	unknown := core.NewID(webhooks.PrefixEndpoint)
	if _, err := h.Store.InsertTestDelivery(ctx, unknown, testEvent(scope, e), t0); !errors.Is(err, webhooks.ErrNotFound) {
		t.Errorf("test delivery to an unknown endpoint: %v", err)
	}
	if _, err := h.Store.UpdateEndpoint(ctx, scope, e.ID(), t0, func(e *webhooks.Endpoint) error {
		e.Disable(webhooks.DisabledByMerchant)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Store.InsertTestDelivery(ctx, e.ID(), testEvent(scope, e), t0); !errors.Is(err, webhooks.ErrEndpointDisabled) {
		t.Errorf("test delivery to a disabled endpoint: %v", err)
	}
}

func deliveryLog(t *testing.T, h Harness) {
	scope := h.NewScope(t)
	e := insert(t, h, scope)
	other := insert(t, h, scope)
	var evs []core.EventRecord
	for range 5 {
		evs = append(evs, event(scope, core.EventCheckoutSessionExpired))
	}
	for _, ev := range evs {
		h.Publish(t, ev)
		fanOutAll(t, h, t0) // one at a time: the log's order is the fan-out's
	}
	all := deliveriesOf(t, h, scope, e.ID())
	if len(all) != 5 {
		t.Fatalf("%d deliveries", len(all))
	}
	for i, d := range all {
		if d.EventID != evs[4-i].ID {
			t.Fatalf("log order: %d is %s, want %s (newest first)", i, d.EventID, evs[4-i].ID)
		}
	}
	page := func(q core.ListQuery) ([]string, bool) {
		t.Helper()
		p, err := h.Store.ListDeliveries(ctx, scope, e.ID(), q)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, d := range p.Items {
			out = append(out, d.ID)
		}
		return out, p.HasMore
	}
	id := func(i int) string { return all[i].ID }
	if got, more := page(core.ListQuery{Limit: 2}); !slices.Equal(got, []string{id(0), id(1)}) || !more {
		t.Errorf("first page %v %v", got, more)
	}
	if got, more := page(core.ListQuery{Limit: 2, StartingAfter: id(1)}); !slices.Equal(got, []string{id(2), id(3)}) || !more {
		t.Errorf("second page %v %v", got, more)
	}
	if got, more := page(core.ListQuery{Limit: 2, StartingAfter: id(3)}); !slices.Equal(got, []string{id(4)}) || more {
		t.Errorf("last page %v %v", got, more)
	}
	if got, more := page(core.ListQuery{Limit: 2, EndingBefore: id(4)}); !slices.Equal(got, []string{id(2), id(3)}) || !more {
		t.Errorf("page before the last %v %v", got, more)
	}
	if got, more := page(core.ListQuery{Limit: 2, EndingBefore: id(2)}); !slices.Equal(got, []string{id(0), id(1)}) || more {
		t.Errorf("first page backwards %v %v", got, more)
	}
	otherLog := deliveriesOf(t, h, scope, other.ID())
	for name, q := range map[string]core.ListQuery{
		"unknown":                 {Limit: 2, StartingAfter: core.NewID(webhooks.PrefixDelivery)},
		"another endpoint's":      {Limit: 2, StartingAfter: otherLog[0].ID},
		"another endpoint's (eb)": {Limit: 2, EndingBefore: otherLog[0].ID},
	} {
		if _, err := h.Store.ListDeliveries(ctx, scope, e.ID(), q); !errors.Is(err, webhooks.ErrUnknownCursor) {
			t.Errorf("%s cursor: %v, want ErrUnknownCursor", name, err)
		}
	}
	if _, err := h.Store.ListDeliveries(ctx, core.Scope{MerchantID: scope.MerchantID, Env: core.EnvLive}, e.ID(),
		core.ListQuery{Limit: 2, StartingAfter: id(0)}); !errors.Is(err, webhooks.ErrUnknownCursor) {
		t.Errorf("cursor of another scope: %v", err)
	}
}

func deleteTakesDeliveries(t *testing.T, h Harness) {
	scope := h.NewScope(t)
	e := insert(t, h, scope)
	h.Publish(t, event(scope, core.EventCheckoutSessionExpired))
	fanOutAll(t, h, t0)
	jobs := claim(t, h, t0)
	if len(jobs) != 1 {
		t.Fatalf("%d jobs", len(jobs))
	}
	if err := h.Store.DeleteEndpoint(ctx, scope, e.ID()); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Store.GetEndpoint(ctx, scope, e.ID()); !errors.Is(err, webhooks.ErrNotFound) {
		t.Errorf("deleted endpoint: %v", err)
	}
	if _, err := h.Store.GetDelivery(ctx, scope, jobs[0].DeliveryID); !errors.Is(err, webhooks.ErrDeliveryNotFound) {
		t.Errorf("a deleted endpoint's delivery: %v", err)
	}
	// The worker that held its attempt records nothing and fails nothing.
	record(t, h, jobs[0], webhooks.Outcome{StatusCode: 200}, t0, webhooks.Next{Status: webhooks.DeliverySucceeded})
}
