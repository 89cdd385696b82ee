package conformance

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/conformance/harness"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
)

// Webhook delivery across `kassa serve` processes (D10: at least once; every attempt number is
// sent once). Several processes on one database share the deliveries without sending any
// twice, and an event committed before the only process dies (SIGKILL) is delivered by the
// next one. These cases need servers the harness starts (siblings on the target's database, or
// a lone server on a database of its own) and are skipped against an external target.

// hookServerEnv are the settings of the extra servers: the suite's rate limits and throttles,
// so that a burst of API calls spread over them is not throttled (on a fast machine eight
// subscribers paying their first invoices at once passed the browser API's default 50
// requests a second from one address and were refused with 429).
var hookServerEnv = suiteLimits

// hookSiblings starts n more servers on the target's database, concurrently, stopped when the
// test ends.
func hookSiblings(t *testing.T, name string, n int) []*harness.Target {
	t.Helper()
	out := make([]*harness.Target, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i], errs[i] = target.Sibling(context.Background(), name+"-"+string(rune('a'+i)), harness.Options{Env: hookServerEnv})
		}()
	}
	wg.Wait()
	for i := range n {
		if out[i] != nil {
			t.Cleanup(out[i].Stop)
		}
	}
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestWebhookProcesses(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "D10", "three `kassa serve` processes on one database deliver a burst of 60 events exactly once each, as attempt 1, none missing", func(t *testing.T) {
		t.Parallel()
		if !target.CanLaunchSiblings() {
			t.Skip("needs more servers on the target's database, which the harness can only start for a target it started itself")
		}
		siblings := hookSiblings(t, "webhooks-procs", 2)
		o := newDashOwner(t)
		rc := newHookReceiver(t, nil)
		ep := hookEndpoint(t, o, dash.DashboardEnvironmentTest, rc.URL, "checkout.session.expired")

		// The events are committed through all three processes, concurrently: every commit
		// wakes every process's worker, so they all race for the same deliveries. (Which
		// process sent a delivery is not observable from outside: the log does not say and
		// servers do not log successful deliveries. So the case does not insist that the work
		// was shared, only that nothing was sent twice or left out.)
		clients := []*api.ClientWithResponses{o.Test}
		for _, s := range siblings {
			clients = append(clients, o.at(t, s).Test)
		}
		const events = 60
		sids := make([]string, events)
		errs := make([]error, events)
		sem := make(chan struct{}, 15)
		var wg sync.WaitGroup
		for i := range events {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				sids[i], errs[i] = hookTryExpiredSession(clients[i%len(clients)])
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}

		rc.waitFor(t, events, 30*time.Second, nil)
		// Each delivery ends succeeded after one attempt. A second claim of a delivery by
		// another process would have counted a second attempt before the first was recorded.
		var log dash.WebhookDeliveryList
		deadline := time.Now().Add(30 * time.Second)
		for {
			log = hookDeliveries(t, o, ep.Id)
			done := 0
			for _, d := range log.Data {
				if d.Status != dash.WebhookDeliveryStatusPending {
					done++
				}
			}
			if done >= events || time.Now().After(deadline) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if len(log.Data) != events || log.HasMore {
			t.Fatalf("the endpoint's log has %d deliveries (has_more %v), want %d", len(log.Data), log.HasMore, events)
		}
		logged := map[string]bool{}
		for _, d := range log.Data {
			if d.Status != dash.WebhookDeliveryStatusSucceeded || d.Attempts != 1 {
				t.Errorf("delivery %s of %s: %s after %d attempts, want succeeded after 1", d.Id, d.EventId, d.Status, d.Attempts)
			}
			logged[d.EventId] = true
		}

		// The receiver got each event once, as attempt 1, signed with the endpoint's secret.
		hits := rc.got()
		if len(hits) != events {
			t.Errorf("the receiver got %d requests for %d events", len(hits), events)
		}
		perSession := map[string]int{}
		perEvent := map[string]int{}
		for _, h := range hits {
			id := h.Header.Get("Service-Event-Id")
			perEvent[id]++
			perSession[h.envelope(t).objectID()]++
			if a := h.Header.Get("Service-Delivery-Attempt"); a != "1" {
				t.Errorf("event %s arrived as attempt %q, want 1", id, a)
			}
			if !hookSignedBy(t, h, ep.Secret) {
				t.Errorf("event %s is not signed with the endpoint's secret", id)
			}
		}
		for id, n := range perEvent {
			if n != 1 {
				t.Errorf("event %s arrived %d times", id, n)
			}
			if !logged[id] {
				t.Errorf("event %s arrived but is not in the endpoint's log", id)
			}
		}
		for _, sid := range sids {
			if perSession[sid] != 1 {
				t.Errorf("the expiry of %s arrived %d times, want once", sid, perSession[sid])
			}
		}
		// Nothing is missing: the outbox holds exactly the events that arrived.
		outbox := evtList(t, o.Test, "checkout.session.expired", 100)
		if len(outbox.Data) != events {
			t.Errorf("GET /v1/events lists %d expiries, want %d", len(outbox.Data), events)
		}
		for _, e := range outbox.Data {
			if perEvent[e.Id] != 1 {
				t.Errorf("event %s of the outbox arrived %d times", e.Id, perEvent[e.Id])
			}
		}
	})

	harness.Rule(t, "D10", "SIGKILL of the only server loses no event: one committed but not yet attempted is delivered (attempt 1) by the next server; one cut off in flight stays pending with its next attempt due (redelivered by hand, it comes as attempt 2 with the same id and body)", func(t *testing.T) {
		t.Parallel()
		if !target.CanLaunchSiblings() {
			t.Skip("needs a server of its own on a fresh database, to be killed: the harness can only start one when it started the target")
		}
		ctx := context.Background()
		first, drop, err := target.Lone(ctx, "webhooks-crash-1", harness.Options{Env: hookServerEnv})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(drop) // runs last: after every server on the database has stopped
		t.Cleanup(first.Stop)
		o := newDashOwnerAt(t, first)
		// The receiver holds the first request open until its sender dies (the kill closes
		// the connection) and answers 200 to every later one.
		inFlight := make(chan struct{})
		rc := newHookReceiver(t, func(n int, _ http.ResponseWriter, r *http.Request) {
			if n == 1 {
				close(inFlight)
				select {
				case <-r.Context().Done():
				case <-time.After(30 * time.Second):
				}
			}
		})
		ep := hookEndpoint(t, o, dash.DashboardEnvironmentTest, rc.URL, "checkout.session.expired")

		sidA := hookExpiredSession(t, o.Test)
		select {
		case <-inFlight:
		case <-time.After(hookWait):
			t.Fatalf("the first delivery did not come within %s", hookWait)
		}
		a1 := rc.got()[0]
		evtA := a1.Header.Get("Service-Event-Id")
		if a1.envelope(t).objectID() != sidA || a1.Header.Get("Service-Delivery-Attempt") != "1" {
			t.Fatalf("first request: attempt %q about %s, want attempt 1 about %s",
				a1.Header.Get("Service-Delivery-Attempt"), a1.envelope(t).objectID(), sidA)
		}
		// B is committed when the call returns; the server dies before it attempts it. Its
		// worker would take B while A is in flight, so the case holds the deliveries table
		// (SHARE: reads go on, the fan-out's insert and the claim's update wait) from before B
		// until the kill. A waiting statement of the killed server never commits.
		db, err := sqlx.Open("postgres", first.DatabaseURL)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		hold, err := db.Beginx()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := hold.Exec(`LOCK TABLE webhook_deliveries IN SHARE MODE`); err != nil {
			t.Fatal(err)
		}
		sidB := hookExpiredSession(t, o.Test)
		first.Kill()
		if err := hold.Rollback(); err != nil {
			t.Fatal(err)
		}
		if n := len(rc.got()); n != 1 {
			t.Fatalf("the receiver got %d requests before the kill; the case needs the second event not yet attempted", n)
		}

		second, err := first.Sibling(ctx, "webhooks-crash-2", harness.Options{Env: hookServerEnv})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(second.Stop)
		o = o.at(t, second) // the same merchant, keys and dashboard session, on the new server
		b := rc.waitFor(t, 1, hookWait, aboutObject(t, sidB))[0]
		evtB := b.Header.Get("Service-Event-Id")
		if evs := evtForSession(t, o.Test, "checkout.session.expired", sidB); len(evs) != 1 || evs[0].Id != evtB {
			t.Fatalf("delivered %s; the outbox has %d expiries of %s", evtB, len(evs), sidB)
		}
		if b.Header.Get("Service-Delivery-Attempt") != "1" || !hookSignedBy(t, b, ep.Secret) {
			t.Fatalf("the event committed before the kill arrived as attempt %q (signed with the endpoint's secret: %v), want 1",
				b.Header.Get("Service-Delivery-Attempt"), hookSignedBy(t, b, ep.Secret))
		}
		dB := hookDeliveryOf(t, o, ep.Id, evtB)
		hookWaitDelivery(t, o, dB.Id, 5*time.Second, func(d *dash.WebhookDeliveryDetail) bool {
			return d.Delivery.Status == dash.WebhookDeliveryStatusSucceeded && d.Delivery.Attempts == 1
		})

		// A's attempt 1 never got an answer: its delivery is pending, the cut-off attempt
		// counted, and its next attempt due when the reservation of attempt 1 ends (the
		// worker's lease, 2 min; no other server sends A meanwhile).
		dA := hookDelivery(t, o, hookDeliveryOf(t, o, ep.Id, evtA).Id)
		if dA.Delivery.Status != dash.WebhookDeliveryStatusPending || dA.Delivery.Attempts != 1 ||
			dA.Delivery.NextAttemptAt == nil || dA.Delivery.CompletedAt != nil {
			t.Fatalf("the delivery cut off by the kill: %+v, want pending after 1 attempt with a next attempt due", dA.Delivery)
		}
		t.Logf("cut-off delivery %s: next attempt due in %s", dA.Delivery.Id, time.Until(time.Unix(*dA.Delivery.NextAttemptAt, 0)).Round(time.Second))
		// Redelivering it by hand brings that attempt forward: the same event and body, as
		// attempt 2 (the number of the cut-off attempt is never reused).
		re, err := o.Client.RedeliverWebhookDeliveryWithResponse(ctx, dash.DashboardEnvironmentTest, dA.Delivery.Id)
		if err != nil {
			t.Fatal(err)
		}
		if re.JSON202 == nil {
			t.Fatalf("redeliver: %d %s", re.StatusCode(), re.Body)
		}
		a2 := rc.waitFor(t, 2, hookWait, forEvent(evtA))[1]
		if a2.Header.Get("Service-Delivery-Attempt") != "2" || string(a2.Body) != string(a1.Body) || !hookSignedBy(t, a2, ep.Secret) {
			t.Fatalf("the cut-off event came again as attempt %q (same body: %v)", a2.Header.Get("Service-Delivery-Attempt"), string(a2.Body) == string(a1.Body))
		}
		done := hookWaitDelivery(t, o, dA.Delivery.Id, 5*time.Second, func(d *dash.WebhookDeliveryDetail) bool {
			return d.Delivery.Status == dash.WebhookDeliveryStatusSucceeded && d.Delivery.Attempts == 2
		})
		// Both attempt numbers are in the log: the cut-off one as interrupted, then the answer.
		if l := done.Attempts; len(l) != 2 || l[0].Number != 1 || l[0].StatusCode != nil || l[0].Error == nil ||
			!strings.HasPrefix(*l[0].Error, "interrupted:") || l[1].Number != 2 || l[1].StatusCode == nil || *l[1].StatusCode != 200 {
			t.Fatalf("attempt log of the cut-off delivery: %+v, want 1 interrupted, 2 answered 200", l)
		}
		if n := len(rc.got()); n != 3 {
			t.Fatalf("the receiver got %d requests, want 3 (A cut off, B, A again)", n)
		}
	})
}
