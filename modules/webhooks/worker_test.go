package webhooks

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// stepClock is a wall clock the test moves by hand.
type stepClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *stepClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *stepClock) advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// gateSender answers every request at once with the status its URL has in codes, except those
// to the URLs of hang, which wait for a token of release (a receiver that takes the whole send
// timeout) and then fail as a timeout. Each request is reported on started when it begins.
type gateSender struct {
	hang    map[string]bool
	release chan struct{}
	started chan Message
	mu      sync.Mutex
	codes   map[string][]int // by URL: the status of attempt 1, 2, …
	flying  int              // requests in flight
	most    int              // the most in flight at once
}

func (s *gateSender) Send(_ context.Context, m Message) Outcome {
	s.mu.Lock()
	s.flying++
	s.most = max(s.most, s.flying)
	hangs := s.hang[m.URL]
	s.mu.Unlock()
	defer func() { s.mu.Lock(); s.flying--; s.mu.Unlock() }()
	s.started <- m
	if hangs {
		<-s.release
		return Outcome{Err: "timeout: no answer within the delivery timeout", Latency: Timeout}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	code := 200
	if cs := s.codes[m.URL]; m.Attempt <= len(cs) {
		code = cs[m.Attempt-1]
	}
	return Outcome{StatusCode: code}
}

// signalStore is the fake store reporting every attempt it records (by delivery's event id)
// and every job it hands out.
type signalStore struct {
	*fakeStore
	recorded chan string
	claimed  chan string
}

func (s signalStore) ClaimDue(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]*Job, error) {
	jobs, err := s.fakeStore.ClaimDue(ctx, now, lease, limit)
	for _, j := range jobs {
		s.claimed <- j.Event.ID
	}
	return jobs, err
}

func (s signalStore) RecordAttempt(ctx context.Context, job *Job, a Attempt, now time.Time, fn func(*Endpoint) Next) error {
	err := s.fakeStore.RecordAttempt(ctx, job, a, now, fn)
	s.recorded <- job.Event.ID
	return err
}

// workerFixture is a worker over the fake store with one endpoint per URL, each of a merchant
// of its own, run by Run until the test ends.
type workerFixture struct {
	store  signalStore
	clock  *stepClock
	sender *gateSender
	wake   chan struct{}
	scopes map[string]core.Scope // by URL
}

func newWorkerFixture(t *testing.T, concurrency int, hang []string, urls ...string) *workerFixture {
	t.Helper()
	f := &workerFixture{store: signalStore{newFakeStore(), make(chan string, 64), make(chan string, 64)}, clock: &stepClock{t: t0},
		sender: &gateSender{hang: map[string]bool{}, release: make(chan struct{}), started: make(chan Message, 64), codes: map[string][]int{}},
		wake:   make(chan struct{}, 1), scopes: map[string]core.Scope{}}
	for _, u := range hang {
		f.sender.hang[u] = true
	}
	for i, u := range urls {
		scope := core.Scope{MerchantID: "mer_" + string(rune('a'+i)), Env: core.EnvTest}
		if err := f.store.InsertEndpoint(context.Background(), mustEndpoint(t, scope, EndpointParams{URL: u, EnabledEvents: anyEvent})); err != nil {
			t.Fatal(err)
		}
		f.scopes[u] = scope
	}
	render := func(core.EventRecord, core.Channel) (json.RawMessage, error) { return json.RawMessage(`{}`), nil }
	w, err := NewWorker(f.store, f.sender, render, f.clock, WorkerOptions{Concurrency: concurrency, Wake: f.wake,
		Rand: func() float64 { return 0.5 }, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = w.Run(ctx) }()
	t.Cleanup(func() {
		close(f.sender.release)
		cancel()
		<-done // Run returns once the sends in flight have been recorded
	})
	return f
}

// event commits an event for the merchant of url's endpoint and wakes the worker.
func (f *workerFixture) event(id, url string) {
	f.store.publish(core.EventRecord{ID: id, Type: "invoice.paid", Scope: f.scopes[url], Created: f.clock.Now(),
		ObjectKind: "invoice", ObjectID: "in_1", Object: json.RawMessage(`{"id":"in_1"}`)})
	f.poke()
}

func (f *workerFixture) poke() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// waitFor returns the next value of ch; the deadline only ends a test that would otherwise
// wait forever.
func waitFor[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: nothing within 10 s", what)
		var zero T
		return zero
	}
}

// attempts is the recorded attempts of url's delivery of event id.
func (f *workerFixture) attempts(url, id string) []Attempt {
	f.store.mu.Lock()
	defer f.store.mu.Unlock()
	scope := f.scopes[url]
	for _, d := range f.store.deliveries {
		if d.d.Scope == scope && d.d.EventID == id {
			return append([]Attempt(nil), d.attempts...)
		}
	}
	return nil
}

func TestWorkerHangingSendDoesNotHoldBackOtherEndpoints(t *testing.T) {
	const hang, other = "https://hangs.example/hook", "https://answers.example/hook"
	f := newWorkerFixture(t, 4, []string{hang}, hang, other)
	f.sender.codes[other] = []int{500} // attempt 1 fails, its retry succeeds

	f.event("evt_h", hang)
	if m := waitFor(t, f.sender.started, "the hanging endpoint's delivery"); m.URL != hang {
		t.Fatalf("first request to %s", m.URL)
	}
	// The hanging request is in flight from here until release.
	f.event("evt_o", other)
	if m := waitFor(t, f.sender.started, "another merchant's delivery while one request hangs"); m.URL != other || m.Attempt != 1 {
		t.Fatalf("request to %s, attempt %d; want %s attempt 1", m.URL, m.Attempt, other)
	}
	if id := waitFor(t, f.store.recorded, "attempt 1 recorded"); id != "evt_o" {
		t.Fatalf("recorded an attempt of %s", id)
	}
	// Its retry falls due 5 s later (Rand 0.5: no jitter), within the first request's hang and
	// well within that delivery's lease: the retry goes out, the hanging delivery is not sent
	// again.
	f.clock.advance(5 * time.Second)
	f.poke()
	if m := waitFor(t, f.sender.started, "another merchant's retry while one request hangs"); m.URL != other || m.Attempt != 2 || m.EventID != "evt_o" {
		t.Fatalf("request to %s, attempt %d of %s; want %s attempt 2 of evt_o", m.URL, m.Attempt, m.EventID, other)
	}
	if id := waitFor(t, f.store.recorded, "attempt 2 recorded"); id != "evt_o" {
		t.Fatalf("recorded an attempt of %s", id)
	}

	f.sender.release <- struct{}{}
	if id := waitFor(t, f.store.recorded, "the hanging attempt recorded"); id != "evt_h" {
		t.Fatalf("recorded an attempt of %s", id)
	}
	if a := f.attempts(hang, "evt_h"); len(a) != 1 || a[0].Number != 1 || a[0].Outcome.Err == "" {
		t.Fatalf("hanging delivery's attempts %+v", a)
	}
	if a := f.attempts(other, "evt_o"); len(a) != 2 || a[0].Outcome.StatusCode != 500 || a[1].Outcome.StatusCode != 200 {
		t.Fatalf("other delivery's attempts %+v", a)
	}
	select {
	case m := <-f.sender.started:
		t.Fatalf("unexpected request to %s, attempt %d", m.URL, m.Attempt)
	default:
	}
}

func TestWorkerSendsAtMostConcurrencyAtOnce(t *testing.T) {
	urls := []string{"https://a.example/hook", "https://b.example/hook", "https://c.example/hook"}
	f := newWorkerFixture(t, 2, urls, urls...)
	for i, u := range urls {
		f.event("evt_"+string(rune('a'+i)), u)
		waitFor(t, f.store.claimed, "claim of "+u)
	}
	// Three claimed, two slots: two requests hang and the third waits for a slot.
	waitFor(t, f.sender.started, "first request")
	waitFor(t, f.sender.started, "second request")
	f.sender.release <- struct{}{}
	waitFor(t, f.sender.started, "third request, once a slot is free")
	f.sender.mu.Lock()
	most := f.sender.most
	f.sender.mu.Unlock()
	if most != 2 {
		t.Fatalf("%d requests in flight at once, want at most 2 (Concurrency)", most)
	}
}

// A claimed attempt that waited for a free slot until its lease no longer covers a whole send
// is not sent: the delivery is claimed again when the lease ends and sent under the next
// attempt number, never while another worker may hold it.
func TestWorkerDoesNotStartAnAttemptItsLeaseNoLongerCovers(t *testing.T) {
	const hang, other = "https://hangs.example/hook", "https://waits.example/hook"
	f := newWorkerFixture(t, 1, []string{hang}, hang, other)
	f.event("evt_h", hang)
	if m := waitFor(t, f.sender.started, "the hanging request"); m.URL != hang {
		t.Fatalf("first request to %s", m.URL)
	}
	waitFor(t, f.store.claimed, "claim of the hanging delivery")
	f.event("evt_o", other)
	waitFor(t, f.store.claimed, "claim of the waiting delivery") // it waits for the only slot
	// The hanging request holds the slot until the waiting job's lease (2 min) no longer
	// covers a send (10 s).
	f.clock.advance(2*time.Minute - Timeout + time.Second)
	f.sender.mu.Lock()
	delete(f.sender.hang, hang) // its retry answers at once
	f.sender.mu.Unlock()
	f.sender.release <- struct{}{}
	if id := waitFor(t, f.store.recorded, "the hanging attempt recorded"); id != "evt_h" {
		t.Fatalf("recorded an attempt of %s", id)
	}
	// The lease ends: the delivery is claimed again and sent as attempt 2.
	f.clock.advance(Timeout)
	f.poke()
	for {
		m := waitFor(t, f.sender.started, "the waiting delivery after its lease")
		if m.URL == hang {
			continue // the hanging delivery's retry
		}
		if m.URL != other || m.Attempt != 2 {
			t.Fatalf("request to %s, attempt %d; want %s attempt 2 (attempt 1 was not sent)", m.URL, m.Attempt, other)
		}
		break
	}
}
