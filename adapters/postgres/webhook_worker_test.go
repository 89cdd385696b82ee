package postgres_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/adapters/signing"
	"github.com/kassa-pay/kassa/adapters/webhookhttp"
	"github.com/kassa-pay/kassa/modules/webhooks"
)

// Worker behaviour against Postgres and a real receiver, beyond the single-round cases of
// webhook_store_test.go: what acknowledges, and several long-running workers with their own
// pools (as several `kassa serve` processes) sharing one database under retries.

func TestWebhookOnly2xxAcknowledges(t *testing.T) {
	e := newWhEnv(t)
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(r.URL.Query().Get("code"))
		if code >= 300 && code < 400 {
			w.Header().Set("Location", "http://127.0.0.1:1/elsewhere")
		}
		w.WriteHeader(code)
	})
	acks := []int{200, 201, 202, 204, 299}
	refusals := []int{300, 301, 304, 400, 401, 403, 404, 409, 429, 500, 502}
	byCode := map[int]*webhooks.Endpoint{}
	for _, code := range append(append([]int{}, acks...), refusals...) {
		ep, _ := e.endpoint(t, rc.URL+"/?code="+strconv.Itoa(code))
		byCode[code] = ep
	}
	evt := e.event(t, "invoice.paid")
	runOnce(t, e.worker(webhooks.WorkerOptions{}))
	for code, ep := range byCode {
		d := e.deliveryOf(t, ep.ID(), evt)
		want := webhooks.DeliveryPending
		for _, a := range acks {
			if a == code {
				want = webhooks.DeliverySucceeded
			}
		}
		if d.Status != want || d.Attempts != 1 {
			t.Errorf("HTTP %d: delivery %s after %d attempts, want %s", code, d.Status, d.Attempts, want)
		}
		got, _ := e.svc.GetEndpoint(context.Background(), e.scope, ep.ID())
		if !got.Enabled() {
			t.Errorf("HTTP %d disabled the endpoint (only 410 does)", code)
		}
	}
}

// speedClock runs `speed` times faster than the wall clock from a start time, so that the
// retry schedule and the leases play out in milliseconds while workers sleep on real timers.
type speedClock struct {
	start time.Time
	base  time.Time
	speed float64
}

func (c speedClock) Now() time.Time {
	return c.base.Add(time.Duration(float64(time.Since(c.start)) * c.speed))
}

func TestWebhookWorkerProcessesShareTheWorkUnderRetries(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url, drop, err := pgtest.CreateMigratedDatabase(ctx, pgtest.AdminURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(drop)
	open := func() *postgres.WebhookStore {
		db, err := postgres.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		db.SetMaxOpenConns(3)
		return postgres.NewWebhookStore(db, newWhEnvBox(t))
	}
	db, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(3)
	e := newWhEnvOn(t, db)

	// Every event's first attempt fails with 500; its retry (5 s of schedule) succeeds.
	var mu sync.Mutex
	receipts := map[string]int{} // event id # attempt → requests received
	acked := map[string]bool{}
	done := make(chan struct{})
	const events = 40
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		id, n := r.Header.Get("Service-Event-Id"), r.Header.Get("Service-Delivery-Attempt")
		mu.Lock()
		defer mu.Unlock()
		receipts[id+"#"+n]++
		if n == "1" {
			w.WriteHeader(500)
			return
		}
		if !acked[id] {
			acked[id] = true
			if len(acked) == events {
				close(done)
			}
		}
	})
	e.endpoint(t, rc.URL)
	// Half the events are committed before any worker runs; they wait in the outbox.
	var ids []string
	for range events / 2 {
		ids = append(ids, e.event(t, "invoice.paid"))
	}
	clock := speedClock{start: time.Now(), base: time.Now().UTC(), speed: 100} // 5 s of schedule = 50 ms
	// The receiver answers at once; the env's 300 ms send timeout (for the timeout cases) could
	// expire on a loaded machine under -race and turn an answered attempt into a timeout.
	sender := webhookhttp.New(webhookhttp.Options{Timeout: 10 * time.Second, AllowPrivate: true})
	var wg sync.WaitGroup
	for range 3 {
		w := mustWorker(t, open(), sender, clock, webhooks.WorkerOptions{
			Batch: 4, Concurrency: 2, Lease: 2 * time.Minute, PollInterval: 20 * time.Millisecond,
		})
		wg.Add(1)
		go func() { defer wg.Done(); _ = w.Run(ctx) }()
	}
	for range events / 2 {
		ids = append(ids, e.event(t, "invoice.paid"))
	}
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		mu.Lock()
		t.Fatalf("only %d of %d events acknowledged", len(acked), events)
	}
	cancel()
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	for key, n := range receipts {
		if n != 1 {
			t.Errorf("%s received %d times", key, n)
		}
	}
	for _, id := range ids {
		if receipts[id+"#1"] != 1 || receipts[id+"#2"] != 1 {
			t.Errorf("%s: attempt 1 ×%d, attempt 2 ×%d", id, receipts[id+"#1"], receipts[id+"#2"])
		}
		var rows []string
		if err := db.Select(&rows, `SELECT attempt || ':' || coalesce(status_code::text, error) FROM webhook_attempts
			WHERE event_id = $1 ORDER BY attempt`, id); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(rows) != "[1:500 2:200]" {
			t.Errorf("%s: attempts recorded %v", id, rows)
		}
	}
}

// newWhEnvBox is the sealing box of newWhEnvOn (the same key), for stores of other pools.
func newWhEnvBox(t *testing.T) *signing.Box {
	box, err := signing.NewBox(bytes.Repeat([]byte{42}, signing.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	return box
}
