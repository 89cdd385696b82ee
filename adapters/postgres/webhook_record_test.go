package postgres_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/modules/webhooks"
)

// claimAll fans out the waiting events and claims every due delivery, as a worker round does
// before it sends.
func (e *whEnv) claimAll(t *testing.T) []*webhooks.Job {
	t.Helper()
	ctx := context.Background()
	if _, err := e.store.FanOut(ctx, 1000, e.clock.Now(), func(ep *webhooks.Endpoint, typ string) bool { return ep.Subscribes(typ) }); err != nil {
		t.Fatal(err)
	}
	jobs, err := e.store.ClaimDue(ctx, e.clock.Now(), time.Minute, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

// Attempts recorded at the same time share statements (attemptBatcher); every one is written
// once, with its delivery's next step.
func TestWebhookConcurrentRecordsAllWritten(t *testing.T) {
	e := newWhEnv(t)
	e.endpoint(t, "http://127.0.0.1:1/hooks")
	var evts []string
	for range 40 {
		evts = append(evts, e.event(t, "invoice.paid"))
	}
	jobs := e.claimAll(t)
	if len(jobs) != len(evts) {
		t.Fatalf("claimed %d of %d", len(jobs), len(evts))
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(jobs))
	for _, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- e.store.RecordAttempt(context.Background(), j, webhooks.Attempt{Number: j.Attempt, StartedAt: e.clock.Now(),
				Outcome: webhooks.Outcome{StatusCode: 200, Latency: time.Millisecond}}, e.clock.Now(),
				func(*webhooks.Endpoint) webhooks.Next { return webhooks.Next{Status: webhooks.DeliverySucceeded} })
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range evts {
		if d := e.delivery(t, id); d.Status != "succeeded" || d.Attempts != 1 || d.Next != nil {
			t.Errorf("delivery of %s: %+v", id, d)
		}
		if a := e.attempts(t, id); len(a) != 1 || a[0].Attempt != 1 || a[0].Status == nil || *a[0].Status != 200 {
			t.Errorf("attempts of %s: %+v", id, a)
		}
	}
}

// An attempt is decided on the endpoint as it is when the attempt commits, not as the claim
// read it: a run of failures another recorder started after the claim is ended by this
// success (under the exclusive lock), and fn sees it.
func TestWebhookRecordSeesEndpointChangedAfterClaim(t *testing.T) {
	e := newWhEnv(t)
	ep, _ := e.endpoint(t, "http://127.0.0.1:1/hooks")
	evt := e.event(t, "invoice.paid")
	jobs := e.claimAll(t)
	if len(jobs) != 1 {
		t.Fatalf("claimed %d", len(jobs))
	}
	since := e.clock.Now().Add(-time.Hour)
	if _, err := e.db.Exec(`UPDATE webhook_endpoints SET failing_since = $2 WHERE id = $1`, ep.ID(), since); err != nil {
		t.Fatal(err)
	}
	j := jobs[0]
	o := webhooks.Outcome{StatusCode: 200}
	var saw []*time.Time
	err := e.store.RecordAttempt(context.Background(), j, webhooks.Attempt{Number: j.Attempt, StartedAt: e.clock.Now(), Outcome: o}, e.clock.Now(),
		func(ep *webhooks.Endpoint) webhooks.Next {
			saw = append(saw, ep.Snapshot().FailingSince)
			ep.RecordOutcome(o, e.clock.Now())
			return webhooks.Next{Status: webhooks.DeliverySucceeded}
		})
	if err != nil {
		t.Fatal(err)
	}
	if last := saw[len(saw)-1]; last == nil || !last.Equal(since) {
		t.Fatalf("fn's last call saw failing_since %v, want %v (calls: %d)", last, since, len(saw))
	}
	var failing *time.Time
	if err := e.db.Get(&failing, `SELECT failing_since FROM webhook_endpoints WHERE id = $1`, ep.ID()); err != nil {
		t.Fatal(err)
	}
	if failing != nil {
		t.Errorf("failing_since %v after a success", failing)
	}
	if d := e.delivery(t, evt); d.Status != "succeeded" {
		t.Errorf("delivery %+v", d)
	}
	if a := e.attempts(t, evt); len(a) != 1 {
		t.Errorf("attempts %+v", a)
	}
}

// A failure recorded after the endpoint was disabled (after the claim) leaves the delivery
// disabled, not pending.
func TestWebhookRecordAfterDisableLeavesNothingPending(t *testing.T) {
	e := newWhEnv(t)
	ep, _ := e.endpoint(t, "http://127.0.0.1:1/hooks")
	evt := e.event(t, "invoice.paid")
	jobs := e.claimAll(t)
	if len(jobs) != 1 {
		t.Fatalf("claimed %d", len(jobs))
	}
	if _, err := e.svc.DisableEndpoint(context.Background(), e.scope, ep.ID()); err != nil {
		t.Fatal(err)
	}
	j := jobs[0]
	next := e.clock.Now().Add(time.Minute)
	err := e.store.RecordAttempt(context.Background(), j, webhooks.Attempt{Number: j.Attempt, StartedAt: e.clock.Now(),
		Outcome: webhooks.Outcome{StatusCode: 500}}, e.clock.Now(),
		func(*webhooks.Endpoint) webhooks.Next {
			return webhooks.Next{Status: webhooks.DeliveryPending, NextAttemptAt: &next}
		})
	if err != nil {
		t.Fatal(err)
	}
	if d := e.delivery(t, evt); d.Status != "disabled" {
		t.Errorf("delivery %+v", d)
	}
	if a := e.attempts(t, evt); len(a) != 1 {
		t.Errorf("attempts %+v", a)
	}
}

// In a group of concurrent records, the attempts of an endpoint whose health changed after the
// claim are left out of the group's statement and decided again on the current state; the
// others are written by the group.
func TestWebhookConcurrentRecordsOneEndpointChanged(t *testing.T) {
	e := newWhEnv(t)
	changed, _ := e.endpoint(t, "http://127.0.0.1:1/a")
	e.endpoint(t, "http://127.0.0.1:1/b")
	var evts []string
	for range 20 {
		evts = append(evts, e.event(t, "invoice.paid"))
	}
	jobs := e.claimAll(t)
	if len(jobs) != 2*len(evts) {
		t.Fatalf("claimed %d, want %d", len(jobs), 2*len(evts))
	}
	since := e.clock.Now().Add(-time.Hour)
	if _, err := e.db.Exec(`UPDATE webhook_endpoints SET failing_since = $2 WHERE id = $1`, changed.ID(), since); err != nil {
		t.Fatal(err)
	}
	o := webhooks.Outcome{StatusCode: 200}
	var mu sync.Mutex
	sawFailing := map[string]bool{} // delivery → the last call of fn saw the run of failures
	var wg sync.WaitGroup
	errs := make(chan error, len(jobs))
	for _, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- e.store.RecordAttempt(context.Background(), j, webhooks.Attempt{Number: j.Attempt, StartedAt: e.clock.Now(), Outcome: o}, e.clock.Now(),
				func(ep *webhooks.Endpoint) webhooks.Next {
					mu.Lock()
					sawFailing[j.DeliveryID] = ep.Snapshot().FailingSince != nil
					mu.Unlock()
					ep.RecordOutcome(o, e.clock.Now())
					return webhooks.Next{Status: webhooks.DeliverySucceeded}
				})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	ended := false
	for _, j := range jobs {
		if j.Endpoint.ID() == changed.ID() && sawFailing[j.DeliveryID] {
			ended = true
		}
		if j.Endpoint.ID() != changed.ID() && sawFailing[j.DeliveryID] {
			t.Errorf("delivery %s of the unchanged endpoint saw a run of failures", j.DeliveryID)
		}
	}
	if !ended {
		t.Error("no record of the changed endpoint was decided on its current state")
	}
	var failing *time.Time
	if err := e.db.Get(&failing, `SELECT failing_since FROM webhook_endpoints WHERE id = $1`, changed.ID()); err != nil {
		t.Fatal(err)
	}
	if failing != nil {
		t.Errorf("failing_since %v after successes", failing)
	}
	var n int
	if err := e.db.Get(&n, `SELECT count(*) FROM webhook_attempts WHERE merchant_id = $1`, e.scope.MerchantID); err != nil {
		t.Fatal(err)
	}
	var done int
	if err := e.db.Get(&done, `SELECT count(*) FROM webhook_deliveries WHERE merchant_id = $1 AND status = 'succeeded' AND attempts = 1`,
		e.scope.MerchantID); err != nil {
		t.Fatal(err)
	}
	if n != len(jobs) || done != len(jobs) {
		t.Errorf("%d attempts and %d succeeded deliveries for %d jobs", n, done, len(jobs))
	}
}
