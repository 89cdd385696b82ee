package postgres_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/adapters/signing"
	"github.com/kassa-pay/kassa/adapters/webhookhttp"
	render "github.com/kassa-pay/kassa/adapters/wire"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/webhooks"
	"github.com/kassa-pay/kassa/openapi/webhook"
)

// moveClock is a wall clock the test moves by hand.
type moveClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *moveClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *moveClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// hit is one request a receiver got.
type hit struct {
	header http.Header
	body   []byte
}

// receiver is an httptest server answering with respond (200 when nil) and recording hits.
type receiver struct {
	*httptest.Server
	mu      sync.Mutex
	hits    []hit
	respond func(n int, w http.ResponseWriter, r *http.Request)
}

func newReceiver(t *testing.T, respond func(n int, w http.ResponseWriter, r *http.Request)) *receiver {
	rc := &receiver{respond: respond}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.hits = append(rc.hits, hit{header: r.Header.Clone(), body: body})
		n := len(rc.hits)
		rc.mu.Unlock()
		if rc.respond != nil {
			rc.respond(n, w, r)
		}
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) got() []hit {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]hit(nil), rc.hits...)
}

type whEnv struct {
	t      testing.TB
	db     *sqlx.DB
	scope  core.Scope
	store  *postgres.WebhookStore
	svc    *webhooks.Service
	clock  *moveClock
	sender *webhookhttp.Sender
}

func newWhEnv(t *testing.T) *whEnv {
	t.Helper()
	db := pgtest.New(t)
	return newWhEnvOn(t, db)
}

func newWhEnvOn(t *testing.T, db *sqlx.DB) *whEnv {
	box, err := signing.NewBox(bytes.Repeat([]byte{42}, signing.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	clock := &moveClock{t: time.Now().UTC().Truncate(time.Second)}
	store := postgres.NewWebhookStore(db, box)
	svc, err := webhooks.NewService(store, clock, webhooks.Destinations{AllowPrivate: true})
	if err != nil {
		t.Fatal(err)
	}
	return &whEnv{t: t, db: db, scope: pgtest.Merchant(t, db), store: store, svc: svc,
		clock: clock, sender: webhookhttp.New(webhookhttp.Options{Timeout: 300 * time.Millisecond, AllowPrivate: true})}
}

// whService is the endpoint use cases over store.
func whService(t testing.TB, store webhooks.Store, clock core.Clock, allowPrivate bool) *webhooks.Service {
	t.Helper()
	svc, err := webhooks.NewService(store, clock, webhooks.Destinations{AllowPrivate: allowPrivate})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// mustWorker is the delivery worker, rendering events as the server does.
func mustWorker(t testing.TB, store webhooks.Store, sender webhooks.Sender, clock core.Clock, o webhooks.WorkerOptions) *webhooks.Worker {
	t.Helper()
	w, err := webhooks.NewWorker(store, sender, render.RenderEvent, clock, o)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func (e *whEnv) worker(o webhooks.WorkerOptions) *webhooks.Worker {
	if o.Rand == nil {
		o.Rand = func() float64 { return 0.5 } // no jitter: exact schedule
	}
	if o.Lease == 0 {
		o.Lease = 10 * time.Second
	}
	return mustWorker(e.t, e.store, e.sender, e.clock, o)
}

func (e *whEnv) endpoint(t *testing.T, url string, events ...string) (*webhooks.Endpoint, string) {
	t.Helper()
	if len(events) == 0 {
		events = []string{webhooks.AllEvents}
	}
	ep, secret, err := e.svc.CreateEndpoint(context.Background(), e.scope, webhooks.EndpointParams{URL: url, EnabledEvents: events})
	if err != nil {
		t.Fatal(err)
	}
	return ep, secret
}

// event writes an outbox row as the modules do (one INSERT, committed), and returns its id.
func (e *whEnv) event(t *testing.T, typ string) string {
	t.Helper()
	id := core.NewID(core.PrefixEvent)
	if err := postgres.InsertEventRecords(context.Background(), e.db, core.EventRecord{ID: id, Type: core.EventType(typ),
		Scope: e.scope, Created: e.clock.Now(), ObjectKind: core.ObjectCheckoutSession, ObjectID: "cs_x",
		Object: []byte(`{"id":"cs_x","object":"checkout.session"}`)}); err != nil {
		t.Fatal(err)
	}
	return id
}

type deliveryRow struct {
	Status   string     `db:"status"`
	Attempts int        `db:"attempts"`
	Next     *time.Time `db:"next_attempt_at"`
}

func (e *whEnv) delivery(t *testing.T, eventID string) deliveryRow {
	t.Helper()
	var d deliveryRow
	if err := e.db.Get(&d, `SELECT status, attempts, next_attempt_at FROM webhook_deliveries
		WHERE merchant_id = $1 AND environment = $2 AND event_id = $3`, e.scope.MerchantID, string(e.scope.Env), eventID); err != nil {
		t.Fatalf("delivery of %s: %v", eventID, err)
	}
	return d
}

type attemptRow struct {
	Attempt int     `db:"attempt"`
	Status  *int    `db:"status_code"`
	Excerpt string  `db:"response_excerpt"`
	Err     *string `db:"error"`
	Latency int     `db:"latency_ms"`
}

func (e *whEnv) attempts(t *testing.T, eventID string) []attemptRow {
	t.Helper()
	var out []attemptRow
	if err := e.db.Select(&out, `SELECT attempt, status_code, response_excerpt, error, latency_ms FROM webhook_attempts
		WHERE merchant_id = $1 AND environment = $2 AND event_id = $3 ORDER BY attempt`, e.scope.MerchantID, string(e.scope.Env), eventID); err != nil {
		t.Fatal(err)
	}
	return out
}

func runOnce(t *testing.T, w *webhooks.Worker) int {
	t.Helper()
	n, err := w.RunOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestWebhookDeliverySucceeds(t *testing.T) {
	e := newWhEnv(t)
	rc := newReceiver(t, nil)
	only := newReceiver(t, nil)
	_, secret := e.endpoint(t, rc.URL)
	e.endpoint(t, only.URL, "invoice.paid")
	evt := e.event(t, "checkout.session.expired")
	e.event(t, "payment_intent.succeeded") // app-only: never delivered to merchants

	if n := runOnce(t, e.worker(webhooks.WorkerOptions{})); n != 1 {
		t.Fatalf("attempts made: %d", n)
	}
	hits := rc.got()
	if len(hits) != 1 || len(only.got()) != 0 {
		t.Fatalf("hits: %d and %d", len(hits), len(only.got()))
	}
	h := hits[0]
	ev, err := webhook.ConstructEventAt(h.body, h.header.Get("Service-Signature"), secret, 0, e.clock.Now())
	if err != nil {
		t.Fatalf("signature: %v (header %s)", err, h.header.Get("Service-Signature"))
	}
	if ev.ID != evt || ev.Type != "checkout.session.expired" || ev.Environment != "test" || ev.APIVersion != core.APIVersion ||
		ev.Created != e.clock.Now().Unix() || string(ev.Data.Object) != `{"id":"cs_x","object":"checkout.session"}` {
		t.Errorf("envelope %+v %s", ev, ev.Data.Object)
	}
	for k, v := range map[string]string{"Service-Event-Id": evt, "Service-Event-Type": "checkout.session.expired",
		"Service-Environment": "test", "Service-Delivery-Attempt": "1", "Content-Type": "application/json"} {
		if h.header.Get(k) != v {
			t.Errorf("%s = %q, want %q", k, h.header.Get(k), v)
		}
	}
	if d := e.delivery(t, evt); d.Status != "succeeded" || d.Attempts != 1 || d.Next != nil {
		t.Errorf("delivery %+v", d)
	}
	if a := e.attempts(t, evt); len(a) != 1 || a[0].Status == nil || *a[0].Status != 200 || a[0].Err != nil {
		t.Errorf("attempts %+v", a)
	}
	// Nothing more to do.
	if n := runOnce(t, e.worker(webhooks.WorkerOptions{})); n != 0 || len(rc.got()) != 1 {
		t.Fatalf("second round sent %d", n)
	}
}

func TestWebhookSecretSealedAtRest(t *testing.T) {
	e := newWhEnv(t)
	ep, secret := e.endpoint(t, "https://shop.example/hook")
	var sealed []byte
	if err := e.db.Get(&sealed, `SELECT secret_sealed FROM webhook_endpoints WHERE id = $1`, ep.ID()); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte(secret)) || bytes.Contains(sealed, []byte(strings.TrimPrefix(secret, "whsec_"))) {
		t.Fatal("secret stored in clear")
	}
	got, err := e.svc.GetEndpoint(context.Background(), e.scope, ep.ID())
	if err != nil || got.Secret() != secret {
		t.Fatalf("read back: %v", err)
	}
}

func TestWebhookRetryOn500(t *testing.T) {
	e := newWhEnv(t)
	rc := newReceiver(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 1 {
			w.WriteHeader(500)
			_, _ = w.Write([]byte("database down"))
		}
	})
	e.endpoint(t, rc.URL)
	evt := e.event(t, "invoice.paid")
	w := e.worker(webhooks.WorkerOptions{})
	runOnce(t, w)
	d := e.delivery(t, evt)
	if d.Status != "pending" || d.Attempts != 1 || d.Next == nil || !d.Next.Equal(e.clock.Now().Add(5*time.Second)) {
		t.Fatalf("after a 500: %+v (now %v)", d, e.clock.Now())
	}
	a := e.attempts(t, evt)
	if len(a) != 1 || *a[0].Status != 500 || a[0].Excerpt != "database down" {
		t.Fatalf("attempt %+v", a)
	}
	// Not due yet.
	e.clock.Add(4 * time.Second)
	if runOnce(t, w); len(rc.got()) != 1 {
		t.Fatal("retried early")
	}
	e.clock.Add(time.Second)
	runOnce(t, w)
	hits := rc.got()
	if len(hits) != 2 || hits[1].header.Get("Service-Delivery-Attempt") != "2" || hits[1].header.Get("Service-Event-Id") != evt {
		t.Fatalf("retry: %d hits", len(hits))
	}
	if d := e.delivery(t, evt); d.Status != "succeeded" || d.Attempts != 2 {
		t.Fatalf("after retry %+v", d)
	}
}

func TestWebhookRetryOnTimeout(t *testing.T) {
	e := newWhEnv(t)
	release := make(chan struct{})
	rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
	})
	defer close(release)
	e.endpoint(t, rc.URL)
	evt := e.event(t, "invoice.paid")
	w := e.worker(webhooks.WorkerOptions{})
	runOnce(t, w)
	d := e.delivery(t, evt)
	a := e.attempts(t, evt)
	if d.Status != "pending" || len(a) != 1 || a[0].Status != nil || a[0].Err == nil || !strings.HasPrefix(*a[0].Err, "timeout") {
		t.Fatalf("after a timeout: %+v %+v", d, a)
	}
	e.clock.Add(6 * time.Second)
	runOnce(t, w)
	if d := e.delivery(t, evt); d.Status != "succeeded" || d.Attempts != 2 {
		t.Fatalf("after retry %+v", d)
	}
}

func TestWebhookGoneDisablesEndpoint(t *testing.T) {
	e := newWhEnv(t)
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusGone) })
	ep, _ := e.endpoint(t, rc.URL)
	evt := e.event(t, "invoice.paid")
	runOnce(t, e.worker(webhooks.WorkerOptions{}))
	got, err := e.svc.GetEndpoint(context.Background(), e.scope, ep.ID())
	if err != nil || got.Enabled() || got.DisabledReason() != webhooks.DisabledGone {
		t.Fatalf("endpoint after 410: %v %s %s", err, got.Status(), got.DisabledReason())
	}
	if d := e.delivery(t, evt); d.Status != "disabled" || d.Next != nil {
		t.Fatalf("delivery %+v", d)
	}
	// Events after the disable are not delivered to it, now or later.
	e.event(t, "invoice.paid")
	e.clock.Add(48 * time.Hour)
	runOnce(t, e.worker(webhooks.WorkerOptions{}))
	if len(rc.got()) != 1 {
		t.Fatalf("disabled endpoint got %d hits", len(rc.got()))
	}
	// Enabling it again delivers new events.
	if _, err := e.svc.EnableEndpoint(context.Background(), e.scope, ep.ID()); err != nil {
		t.Fatal(err)
	}
	rc.respond = nil
	e.event(t, "invoice.paid")
	runOnce(t, e.worker(webhooks.WorkerOptions{}))
	if len(rc.got()) != 2 {
		t.Fatalf("re-enabled endpoint got %d hits", len(rc.got()))
	}
}

func TestWebhookDisableByMerchantStopsPending(t *testing.T) {
	e := newWhEnv(t)
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(503) })
	ep, _ := e.endpoint(t, rc.URL)
	evt := e.event(t, "invoice.paid")
	runOnce(t, e.worker(webhooks.WorkerOptions{}))
	if _, err := e.svc.DisableEndpoint(context.Background(), e.scope, ep.ID()); err != nil {
		t.Fatal(err)
	}
	if d := e.delivery(t, evt); d.Status != "disabled" {
		t.Fatalf("pending delivery of a disabled endpoint: %+v", d)
	}
	if err := e.svc.DeleteEndpoint(context.Background(), e.scope, ep.ID()); err != nil {
		t.Fatal(err)
	}
	var n int
	_ = e.db.Get(&n, `SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = $1`, ep.ID())
	if n != 0 {
		t.Fatal("deliveries outlived their endpoint")
	}
	if _, err := e.svc.GetEndpoint(context.Background(), e.scope, ep.ID()); !errors.Is(err, core.NotFound("webhook_endpoint", "", "")) {
		t.Fatalf("deleted endpoint: %v", err)
	}
}

func TestWebhookRedirectNotFollowed(t *testing.T) {
	e := newWhEnv(t)
	target := newReceiver(t, nil)
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL, http.StatusFound)
	})
	e.endpoint(t, rc.URL)
	evt := e.event(t, "invoice.paid")
	runOnce(t, e.worker(webhooks.WorkerOptions{}))
	if len(target.got()) != 0 {
		t.Fatal("redirect followed")
	}
	a := e.attempts(t, evt)
	if d := e.delivery(t, evt); d.Status != "pending" || len(a) != 1 || *a[0].Status != 302 {
		t.Fatalf("after a redirect: %+v %+v", d, a)
	}
}

func TestWebhookTwoWorkersNeverSendAnAttemptTwice(t *testing.T) {
	e := newWhEnv(t)
	var mu sync.Mutex
	seen := map[string]int{}
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Header.Get("Service-Event-Id")+"#"+r.Header.Get("Service-Delivery-Attempt")]++
		mu.Unlock()
		time.Sleep(2 * time.Millisecond)
	})
	e.endpoint(t, rc.URL)
	const events = 60
	var ids []string
	for range events {
		ids = append(ids, e.event(t, "invoice.paid"))
	}
	// A second process: its own pool on the same database.
	var wg sync.WaitGroup
	var total atomic.Int64
	for range 2 {
		w := e.worker(webhooks.WorkerOptions{Batch: 7, Concurrency: 3})
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				n, err := w.RunOnce(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				total.Add(int64(n))
			}
		}()
	}
	wg.Wait()
	if total.Load() != events {
		t.Errorf("attempts made: %d, want %d", total.Load(), events)
	}
	for _, id := range ids {
		if seen[id+"#1"] != 1 || len(e.attempts(t, id)) != 1 {
			t.Errorf("event %s: %d hits", id, seen[id+"#1"])
		}
	}
	if len(rc.got()) != events {
		t.Errorf("receiver hits: %d", len(rc.got()))
	}
}

func TestWebhookCrashLosesNothing(t *testing.T) {
	e := newWhEnv(t)
	rc := newReceiver(t, nil)
	e.endpoint(t, rc.URL)
	// The event is committed with no worker running (a process died right after its commit):
	// it waits in the outbox queue, and a worker started later delivers it.
	evt := e.event(t, "invoice.paid")
	var queued int
	if err := e.db.Get(&queued, `SELECT count(*) FROM event_fanout WHERE event_id = $1`, evt); err != nil || queued != 1 {
		t.Fatalf("queued: %d %v", queued, err)
	}
	runOnce(t, e.worker(webhooks.WorkerOptions{}))
	if d := e.delivery(t, evt); d.Status != "succeeded" || len(rc.got()) != 1 {
		t.Fatalf("after restart: %+v", d)
	}

	// A worker that claimed an attempt and died before sending: the attempt number stays
	// reserved, nobody else sends while the lease lasts, and after it the next attempt goes.
	evt2 := e.event(t, "invoice.paid")
	w := e.worker(webhooks.WorkerOptions{Lease: time.Minute})
	if _, err := e.store.FanOut(context.Background(), 10, e.clock.Now(), func(ep *webhooks.Endpoint, typ string) bool { return ep.Subscribes(typ) }); err != nil {
		t.Fatal(err)
	}
	jobs, err := e.store.ClaimDue(context.Background(), e.clock.Now(), time.Minute, 10)
	if err != nil || len(jobs) != 1 || jobs[0].Attempt != 1 {
		t.Fatalf("claim: %v %d", err, len(jobs))
	}
	// ... and the process dies here.
	runOnce(t, w)
	if len(rc.got()) != 1 {
		t.Fatal("a leased attempt was sent by another worker")
	}
	e.clock.Add(time.Minute)
	runOnce(t, w)
	hits := rc.got()
	if len(hits) != 2 || hits[1].header.Get("Service-Event-Id") != evt2 || hits[1].header.Get("Service-Delivery-Attempt") != "2" {
		t.Fatalf("after the lease: %d hits", len(hits))
	}
	if d := e.delivery(t, evt2); d.Status != "succeeded" {
		t.Fatalf("delivery %+v", d)
	}
	// The log shows both attempt numbers: the one that died as interrupted, then the success.
	if got := attemptLog(t, e, evt2); got != "1:-:"+webhooks.InterruptedError+" 2:200:" {
		t.Fatalf("attempt log %q", got)
	}
}

// attemptLog renders the attempts of evt's delivery as "number:status:error", oldest first.
func attemptLog(t *testing.T, e *whEnv, evt string) string {
	t.Helper()
	var rows []string
	if err := e.db.Select(&rows, `SELECT attempt || ':' || coalesce(status_code::text, '-') || ':' || coalesce(error, '')
		FROM webhook_attempts WHERE event_id = $1 ORDER BY attempt`, evt); err != nil {
		t.Fatal(err)
	}
	return strings.Join(rows, " ")
}

// A worker that overran its lease and records afterwards: its outcome replaces the interrupted
// placeholder the next claim wrote, and the next attempt's record is kept beside it.
func TestWebhookLateOutcomeReplacesInterrupted(t *testing.T) {
	e := newWhEnv(t)
	rc := newReceiver(t, nil)
	e.endpoint(t, rc.URL)
	evt := e.event(t, "invoice.paid")
	ctx := context.Background()
	if _, err := e.store.FanOut(ctx, 10, e.clock.Now(), func(ep *webhooks.Endpoint, typ string) bool { return ep.Subscribes(typ) }); err != nil {
		t.Fatal(err)
	}
	first, err := e.store.ClaimDue(ctx, e.clock.Now(), time.Minute, 10)
	if err != nil || len(first) != 1 {
		t.Fatalf("claim: %v %d", err, len(first))
	}
	e.clock.Add(time.Minute)
	second, err := e.store.ClaimDue(ctx, e.clock.Now(), time.Minute, 10)
	if err != nil || len(second) != 1 || second[0].Attempt != 2 {
		t.Fatalf("second claim: %v %d", err, len(second))
	}
	if got := attemptLog(t, e, evt); got != "1:-:"+webhooks.InterruptedError {
		t.Fatalf("after the second claim: %q", got)
	}
	keep := func(*webhooks.Endpoint) webhooks.Next { return webhooks.Next{Status: webhooks.DeliveryPending} }
	late := webhooks.Attempt{Number: 1, StartedAt: e.clock.Now(), Outcome: webhooks.Outcome{StatusCode: 200, Latency: 90 * time.Second}}
	if err := e.store.RecordAttempt(ctx, first[0], late, e.clock.Now(), keep); err != nil {
		t.Fatal(err)
	}
	if got := attemptLog(t, e, evt); got != "1:200:" {
		t.Fatalf("after the late record: %q", got)
	}
}

func TestWebhookRotationSignsWithBothSecrets(t *testing.T) {
	e := newWhEnv(t)
	rc := newReceiver(t, nil)
	ep, oldSecret := e.endpoint(t, rc.URL)
	_, newSecret, err := e.svc.RotateSecret(context.Background(), e.scope, ep.ID())
	if err != nil {
		t.Fatal(err)
	}
	e.event(t, "invoice.paid")
	runOnce(t, e.worker(webhooks.WorkerOptions{}))
	h := rc.got()[0]
	sig := h.header.Get("Service-Signature")
	if strings.Count(sig, "v1=") != 2 {
		t.Fatalf("during the overlap: %s", sig)
	}
	for _, s := range []string{oldSecret, newSecret} {
		if err := webhook.Verify(h.body, sig, s, 0, e.clock.Now()); err != nil {
			t.Errorf("secret %s…: %v", s[:10], err)
		}
	}
	// After 24 h only the new secret signs.
	e.clock.Add(24 * time.Hour)
	e.event(t, "invoice.paid")
	runOnce(t, e.worker(webhooks.WorkerOptions{}))
	h = rc.got()[1]
	sig = h.header.Get("Service-Signature")
	if strings.Count(sig, "v1=") != 1 || webhook.Verify(h.body, sig, newSecret, 0, e.clock.Now()) != nil ||
		!errors.Is(webhook.Verify(h.body, sig, oldSecret, 0, e.clock.Now()), webhook.ErrNoMatchingSignature) {
		t.Fatalf("after the overlap: %s", sig)
	}
}

func TestWebhookFiveDaysOfFailureDisable(t *testing.T) {
	e := newWhEnv(t)
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(500) })
	ep, _ := e.endpoint(t, rc.URL)
	w := e.worker(webhooks.WorkerOptions{})
	// One event a day, each failing every attempt of its schedule: the run of failures began
	// with the first attempt, and the attempt five days later disables the endpoint.
	for day := 0; day <= 5; day++ {
		e.event(t, "invoice.paid")
		for range webhooks.MaxAttempts {
			runOnce(t, w)
			e.clock.Add(webhooks.RetrySchedule[0])
		}
		e.clock.Add(24*time.Hour - time.Duration(webhooks.MaxAttempts)*webhooks.RetrySchedule[0])
		got, _ := e.svc.GetEndpoint(context.Background(), e.scope, ep.ID())
		if day < 5 && !got.Enabled() {
			t.Fatalf("disabled after %d days", day)
		}
		if day == 5 && (got.Enabled() || got.DisabledReason() != webhooks.DisabledFailing) {
			t.Fatalf("still %s after five days", got.Status())
		}
	}
}

func TestWebhookEndpointLimit(t *testing.T) {
	e := newWhEnv(t)
	var wg sync.WaitGroup
	var ok, refused atomic.Int32
	for i := range webhooks.MaxEndpoints + 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, err := e.svc.CreateEndpoint(context.Background(), e.scope, webhooks.EndpointParams{
				URL: "https://shop.example/" + strconv.Itoa(i), EnabledEvents: []string{"*"}})
			switch {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, webhooks.ErrEndpointLimit):
				refused.Add(1)
			default:
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != webhooks.MaxEndpoints || refused.Load() != 4 {
		t.Fatalf("created %d, refused %d", ok.Load(), refused.Load())
	}
	list, _ := e.svc.ListEndpoints(context.Background(), e.scope)
	if len(list) != webhooks.MaxEndpoints {
		t.Fatalf("listed %d", len(list))
	}
}

func TestWebhookWakeByNotify(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url, drop, err := pgtest.CreateMigratedDatabase(ctx, pgtest.AdminURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(drop)
	db, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(4)
	e := newWhEnvOn(t, db)
	e.clock = &moveClock{t: time.Now().UTC().Add(-time.Hour)} // any fixed wall time works
	got := make(chan string, 4)
	rc := newReceiver(t, func(_ int, _ http.ResponseWriter, r *http.Request) { got <- r.Header.Get("Service-Event-Id") })
	e.endpoint(t, rc.URL)

	wake, err := postgres.ListenWebhooks(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := e.worker(webhooks.WorkerOptions{PollInterval: time.Hour, Wake: wake})
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	time.Sleep(200 * time.Millisecond) // let the first (empty) round finish
	evt := e.event(t, "invoice.paid")
	select {
	case id := <-got:
		if id != evt {
			t.Fatalf("delivered %s", id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("NOTIFY did not wake the worker (poll interval is an hour)")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
