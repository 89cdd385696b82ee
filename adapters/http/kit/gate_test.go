package kit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// gateSpec is a minimal contract: one secured POST taking {amount, note?, metadata?} and one
// secured GET with a path id.
const gateSpec = `
openapi: 3.0.3
info: {title: gate test, version: "1"}
security: [{bearer: []}]
components:
  securitySchemes:
    bearer: {type: http, scheme: bearer}
paths:
  /v1/things:
    post:
      operationId: createThing
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              additionalProperties: false
              required: [amount]
              properties:
                amount: {type: integer}
                note: {type: string}
                metadata:
                  type: object
                  additionalProperties: {type: string}
      responses:
        "200": {description: ok}
  /v1/jobs:
    post:
      operationId: runJob
      x-kassa-idempotency: phases
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              properties:
                n: {type: integer}
      responses:
        "200": {description: ok}
  /v1/things/{id}:
    get:
      operationId: getThing
      parameters:
        - {name: id, in: path, required: true, schema: {type: string}}
        - {name: after, in: query, schema: {type: string}}
      responses:
        "200": {description: ok}
`

// memIdem is an in-memory ports.IdempotencyStore and ports.UnitOfWork: a unit of work holds
// its keys' locks until it ends, and its records become visible when it commits.
type memIdem struct {
	mu        sync.Mutex
	recs      map[ports.IdempotencyKey]*ports.IdempotencyRecord
	locked    map[ports.IdempotencyKey]bool
	rollbacks int
	gets      int
}

func newMemIdem() *memIdem {
	return &memIdem{recs: map[ports.IdempotencyKey]*ports.IdempotencyRecord{}, locked: map[ports.IdempotencyKey]bool{}}
}

type memTxKey struct{}

type memTx struct {
	locks []ports.IdempotencyKey
	puts  map[ports.IdempotencyKey]*ports.IdempotencyRecord
}

// memKeys is ports.IdempotencyRecords inside one memIdem unit of work.
type memKeys struct {
	s  *memIdem
	tx *memTx
}

func (s *memIdem) Do(ctx context.Context, fn func(ctx context.Context, tx ports.IdempotencyTx) error) (err error) {
	if tx, ok := ctx.Value(memTxKey{}).(*memTx); ok {
		return fn(ctx, memKeys{s, tx})
	}
	tx := &memTx{puts: map[ports.IdempotencyKey]*ports.IdempotencyRecord{}}
	defer func() {
		p := recover()
		s.mu.Lock()
		if p == nil && err == nil {
			for k, r := range tx.puts {
				s.recs[k] = r
			}
		} else {
			s.rollbacks++
		}
		for _, k := range tx.locks {
			delete(s.locked, k)
		}
		s.mu.Unlock()
		if p != nil {
			panic(p)
		}
	}()
	return fn(ports.WithinTransaction(context.WithValue(ctx, memTxKey{}, tx)), memKeys{s, tx})
}

func (k memKeys) IdempotencyKeys() ports.IdempotencyRecords { return k }

func (k memKeys) Get(ctx context.Context, key ports.IdempotencyKey, notBefore time.Time) (*ports.IdempotencyRecord, error) {
	return k.s.Get(ctx, key, notBefore)
}

func (k memKeys) Lock(_ context.Context, key ports.IdempotencyKey) (bool, error) {
	s, tx := k.s, k.tx
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.locked[key] {
		return false, nil
	}
	s.locked[key] = true
	tx.locks = append(tx.locks, key)
	return true, nil
}

func (s *memIdem) Get(_ context.Context, k ports.IdempotencyKey, notBefore time.Time) (*ports.IdempotencyRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gets++
	if r, ok := s.recs[k]; ok && !r.CreatedAt.Before(notBefore) {
		c := *r
		return &c, nil
	}
	return nil, nil
}

func (k memKeys) Put(_ context.Context, key ports.IdempotencyKey, rec ports.IdempotencyRecord) error {
	rec.Body = append([]byte(nil), rec.Body...)
	k.tx.puts[key] = &rec
	return nil
}

func (s *memIdem) Hold(_ context.Context, k ports.IdempotencyKey) (func(), bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.locked[k] {
		return nil, false, nil
	}
	s.locked[k] = true
	return func() { s.mu.Lock(); delete(s.locked, k); s.mu.Unlock() }, true, nil
}

func (s *memIdem) Start(_ context.Context, k ports.IdempotencyKey, hash []byte, createdAt time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recs[k] = &ports.IdempotencyRecord{RequestHash: hash, CreatedAt: createdAt}
	return nil
}

func (s *memIdem) Reach(_ context.Context, k ports.IdempotencyKey, point string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.recs[k]
	if !ok || r.Completed() {
		return errors.New("not started")
	}
	r.RecoveryPoint = point
	return nil
}

func (s *memIdem) Finish(_ context.Context, k ports.IdempotencyKey, rec ports.IdempotencyRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.recs[k]
	if !ok || r.Completed() {
		return errors.New("not started")
	}
	rec.Body = append([]byte(nil), rec.Body...)
	s.recs[k] = &rec
	return nil
}

func (s *memIdem) Purge(context.Context, time.Time, time.Duration) (int64, error) { return 0, nil }

func (s *memIdem) len() int { s.mu.Lock(); defer s.mu.Unlock(); return len(s.recs) }

// fakeWall is a wall clock that can be moved.
type fakeWall struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeWall) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeWall) add(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// fakeLimiter allows the first n requests.
type fakeLimiter struct{ left atomic.Int64 }

func (l *fakeLimiter) Allow(core.Scope) (bool, time.Duration) {
	if l.left.Add(-1) >= 0 {
		return true, 0
	}
	return false, 1500 * time.Millisecond
}

// fakeAuth accepts "Bearer good" (merchant mer_a, test) and "Bearer other" (mer_b).
func fakeAuth(_ context.Context, h string) (core.Caller, error) {
	switch h {
	case "Bearer good":
		return core.Caller{Scope: core.Scope{MerchantID: "mer_a", Env: core.EnvTest}}, nil
	case "Bearer other":
		return core.Caller{Scope: core.Scope{MerchantID: "mer_b", Env: core.EnvTest}}, nil
	}
	return core.Caller{}, core.NewError(core.TypeAuthentication, "invalid_api_key", "", "Invalid API key provided.")
}

type gateRig struct {
	h     http.Handler
	store *memIdem
	wall  *fakeWall
	calls atomic.Int64
}

// newGateRig builds Outer(gate(next)) with fakes; next is called with the call number (1-based).
func newGateRig(t *testing.T, limiter ports.RateLimiter, next func(n int64, w http.ResponseWriter, r *http.Request)) *gateRig {
	t.Helper()
	spec, err := openapi3.NewLoader().LoadFromData([]byte(gateSpec))
	if err != nil {
		t.Fatal(err)
	}
	rig := &gateRig{store: newMemIdem(), wall: &fakeWall{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}}
	g, err := NewGate(GateConfig{Spec: spec, Authenticate: fakeAuth, Limiter: limiter, Idempotency: rig.store, UnitOfWork: rig.store, Wall: rig.wall},
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { next(rig.calls.Add(1), w, r) }))
	if err != nil {
		t.Fatal(err)
	}
	rig.h = Outer(slog.New(slog.NewTextHandler(io.Discard, nil)), g)
	return rig
}

type gateResp struct {
	status int
	header http.Header
	body   string
}

func (rig *gateRig) do(method, path, auth, idem, body string) gateResp {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, rd)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if idem != "" {
		req.Header.Set("Idempotency-Key", idem)
	}
	rec := httptest.NewRecorder()
	rig.h.ServeHTTP(rec, req)
	return gateResp{rec.Code, rec.Header(), rec.Body.String()}
}

func (rig *gateRig) post(idem, body string) gateResp {
	return rig.do(http.MethodPost, "/v1/things", "Bearer good", idem, body)
}

func okJSON(n int64, w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"call":` + string(rune('0'+n%10)) + `}`))
}

func wantCode(t *testing.T, r gateResp, status int, typ, code, param string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	var env struct {
		Error struct {
			Type      string  `json:"type"`
			Code      string  `json:"code"`
			Param     *string `json:"param"`
			RequestID string  `json:"request_id"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(r.body), &env); err != nil {
		t.Fatalf("not an envelope: %s", r.body)
	}
	p := ""
	if env.Error.Param != nil {
		p = *env.Error.Param
	}
	if env.Error.Type != typ || env.Error.Code != code || p != param {
		t.Fatalf("got %s/%s param %q, want %s/%s param %q: %s", env.Error.Type, env.Error.Code, p, typ, code, param, r.body)
	}
	if env.Error.RequestID == "" || env.Error.RequestID != r.header.Get("Request-Id") {
		t.Fatalf("request_id %q vs header %q", env.Error.RequestID, r.header.Get("Request-Id"))
	}
}

func TestGateStoresAndReplays(t *testing.T) {
	rig := newGateRig(t, nil, okJSON)
	first := rig.post("k1", `{"amount":1,"note":"x"}`)
	second := rig.post("k1", "{ \"note\" : \"x\",\n \"amount\": 1 }")
	if first.status != 200 || second.status != 200 || first.body != second.body || rig.calls.Load() != 1 {
		t.Fatalf("first %d %s, second %d %s, calls %d", first.status, first.body, second.status, second.body, rig.calls.Load())
	}
	if second.header.Get("Idempotent-Replayed") != "true" || first.header.Get("Idempotent-Replayed") != "" {
		t.Fatal("Idempotent-Replayed header wrong")
	}
	if second.header.Get("Content-Type") != "application/json" {
		t.Fatalf("replayed Content-Type %q", second.header.Get("Content-Type"))
	}
	wantCode(t, rig.post("k1", `{"amount":2}`), 409, "idempotency_error", "idempotency_key_reused", "")
	// Another merchant with the same key executes on its own.
	if r := rig.do(http.MethodPost, "/v1/things", "Bearer other", "k1", `{"amount":1,"note":"x"}`); r.status != 200 || rig.calls.Load() != 2 {
		t.Fatalf("other merchant: %d calls %d", r.status, rig.calls.Load())
	}
}

func TestGateReleasesServerErrors(t *testing.T) {
	rig := newGateRig(t, nil, func(n int64, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			WriteError(w, r, io.ErrUnexpectedEOF) // an unexpected failure: opaque 500
			return
		}
		okJSON(n, w, r)
	})
	r := rig.post("k", `{"amount":1}`)
	wantCode(t, r, 500, "api_error", "internal_error", "")
	if rig.store.len() != 0 || rig.store.rollbacks != 1 {
		t.Fatalf("500 kept: %d records, %d rollbacks", rig.store.len(), rig.store.rollbacks)
	}
	retry := rig.post("k", `{"amount":1}`)
	if retry.status != 200 || retry.header.Get("Idempotent-Replayed") != "" || rig.calls.Load() != 2 {
		t.Fatalf("retry after 500: %d %s, calls %d", retry.status, retry.body, rig.calls.Load())
	}
	if again := rig.post("k", `{"amount":1}`); again.status != 200 || again.body != retry.body || rig.calls.Load() != 2 {
		t.Fatalf("the success after a 500 is not stored: %d calls %d", again.status, rig.calls.Load())
	}
}

func TestGateReleasesOnPanic(t *testing.T) {
	rig := newGateRig(t, nil, func(n int64, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			panic("boom")
		}
		okJSON(n, w, r)
	})
	r := rig.post("k", `{"amount":1}`)
	wantCode(t, r, 500, "api_error", "internal_error", "")
	if strings.Contains(r.body, "boom") {
		t.Fatalf("panic value leaked: %s", r.body)
	}
	if rig.store.len() != 0 {
		t.Fatal("the panicking request's claim was kept")
	}
	if retry := rig.post("k", `{"amount":1}`); retry.status != 200 || rig.calls.Load() != 2 {
		t.Fatalf("retry after panic: %d %s calls %d", retry.status, retry.body, rig.calls.Load())
	}
}

func TestGateStoresHandlerClientErrors(t *testing.T) {
	rig := newGateRig(t, nil, func(n int64, w http.ResponseWriter, r *http.Request) {
		WriteError(w, r, core.NewError(core.TypeAmountTooSmall, "amount_below_minimum", "amount", "Amount must be at least 250."))
	})
	first := rig.post("k", `{"amount":1}`)
	wantCode(t, first, 400, "amount_too_small", "amount_below_minimum", "amount")
	second := rig.post("k", `{"amount":1}`)
	if second.body != first.body || second.header.Get("Idempotent-Replayed") != "true" || rig.calls.Load() != 1 {
		t.Fatalf("4xx not replayed: %s (calls %d)", second.body, rig.calls.Load())
	}
	// Validation failures are the endpoint's answer too: stored.
	v1 := rig.post("v", `{"amount":"x"}`)
	wantCode(t, v1, 400, "invalid_request", "amount_invalid", "amount")
	if v2 := rig.post("v", `{"amount":"x"}`); v2.header.Get("Idempotent-Replayed") != "true" {
		t.Fatal("validation error not replayed")
	}
}

func TestGateDoesNotStoreAuthOrRateLimit(t *testing.T) {
	lim := &fakeLimiter{}
	lim.left.Store(1)
	rig := newGateRig(t, lim, okJSON)
	wantCode(t, rig.do(http.MethodPost, "/v1/things", "Bearer bad", "k", `{"amount":1}`), 401, "authentication_error", "invalid_api_key", "")
	if r := rig.post("k", `{"amount":1}`); r.status != 200 || r.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("after a 401: %d %s", r.status, r.body)
	}
	r := rig.post("k2", `{"amount":1}`)
	wantCode(t, r, 429, "rate_limit_error", "rate_limited", "")
	if r.header.Get("Retry-After") != "2" {
		t.Fatalf("Retry-After %q, want 2 (1.5 s rounded up)", r.header.Get("Retry-After"))
	}
	if rig.store.len() != 1 {
		t.Fatalf("%d records, want only the executed one", rig.store.len())
	}
}

func TestGateInFlightConflict(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	rig := newGateRig(t, nil, func(n int64, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			close(entered)
			<-release
		}
		okJSON(n, w, r)
	})
	done := make(chan gateResp)
	go func() { done <- rig.post("k", `{"amount":1}`) }()
	<-entered
	wantCode(t, rig.post("k", `{"amount":1}`), 409, "idempotency_error", "idempotency_key_in_use", "")
	close(release)
	if first := <-done; first.status != 200 {
		t.Fatalf("first: %d %s", first.status, first.body)
	}
	if r := rig.post("k", `{"amount":1}`); r.header.Get("Idempotent-Replayed") != "true" || rig.calls.Load() != 1 {
		t.Fatalf("after the first finished: %d calls %d", r.status, rig.calls.Load())
	}
}

// The key's lock does not depend on any clock: moving the clock, even past the retention,
// does not let a retry run beside the request still executing.
func TestGateInFlightConflictIgnoresTheClock(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	rig := newGateRig(t, nil, func(n int64, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			close(entered)
			<-release
		}
		okJSON(n, w, r)
	})
	done := make(chan gateResp)
	go func() { done <- rig.post("k", `{"amount":1}`) }()
	<-entered
	for _, d := range []time.Duration{time.Hour, 25 * time.Hour} {
		rig.wall.add(d)
		wantCode(t, rig.post("k", `{"amount":1}`), 409, "idempotency_error", "idempotency_key_in_use", "")
	}
	close(release)
	if first := <-done; first.status != 200 || rig.calls.Load() != 1 {
		t.Fatalf("first: %d %s, calls %d", first.status, first.body, rig.calls.Load())
	}
}

// Keys are dated and expire on the wall clock (the gate never asks a scope's clock).
func TestGateRetentionFollowsTheWallClock(t *testing.T) {
	rig := newGateRig(t, nil, okJSON)
	rig.post("k", `{"amount":1}`)
	rig.wall.add(24*time.Hour - time.Second)
	wantCode(t, rig.post("k", `{"amount":2}`), 409, "idempotency_error", "idempotency_key_reused", "")
	rig.wall.add(2 * time.Second)
	if r := rig.post("k", `{"amount":2}`); r.status != 200 || r.header.Get("Idempotent-Replayed") != "" || rig.calls.Load() != 2 {
		t.Fatalf("after 24 h: %d %s calls %d", r.status, r.body, rig.calls.Load())
	}
}

func TestGateIdempotencyKeyShape(t *testing.T) {
	rig := newGateRig(t, nil, okJSON)
	for _, k := range []string{strings.Repeat("a", 256), "caf\xc3\xa9", "tab\there"} {
		wantCode(t, rig.post(k, `{"amount":1}`), 400, "invalid_request", "idempotency_key_invalid", "")
	}
	if rig.calls.Load() != 0 {
		t.Fatal("an invalid key executed")
	}
	if r := rig.post(strings.Repeat("a", 255), `{"amount":1}`); r.status != 200 {
		t.Fatalf("255 characters: %d %s", r.status, r.body)
	}
	// GET ignores the header, even an invalid one.
	for range 2 {
		if r := rig.do(http.MethodGet, "/v1/things/t1", "Bearer good", strings.Repeat("a", 300), ""); r.status != 200 || r.header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("GET: %d %s", r.status, r.body)
		}
	}
}

func TestGateTransportErrors(t *testing.T) {
	rig := newGateRig(t, nil, okJSON)
	wantCode(t, rig.do(http.MethodGet, "/v1/nothing", "Bearer good", "", ""), 404, "invalid_request", "resource_missing", "")
	wantCode(t, rig.do(http.MethodPut, "/v1/things", "Bearer good", "", `{}`), 405, "invalid_request", "method_not_allowed", "")
	wantCode(t, rig.do(http.MethodPost, "/v1/things", "", "", `{"amount":1}`), 401, "authentication_error", "invalid_api_key", "")
	for _, body := range []string{`{"amount":`, `{"amount":1}{"amount":2}`, `{"amount":1} x`, "{\"note\":\"\xff\",\"amount\":1}"} {
		wantCode(t, rig.post("", body), 400, "invalid_request", "body_invalid_json", "")
	}
	wantCode(t, rig.post("", `{"amount":1,"bogus":2}`), 400, "invalid_request", "parameter_unknown", "bogus")
	wantCode(t, rig.post("", `{"amount":1,"note":"a\u0000b"}`), 400, "invalid_request", "note_invalid", "note")
	wantCode(t, rig.post("", `{"amount":1,"metadata":{"k\u0000":"v"}}`), 400, "invalid_request", "metadata_invalid", "metadata")
	// An escaped backslash before "u0000" is no NUL.
	if r := rig.post("", `{"amount":1,"note":"a\\u0000b"}`); r.status != 200 {
		t.Fatalf("escaped backslash: %d %s", r.status, r.body)
	}
	wantCode(t, rig.do(http.MethodGet, "/v1/things/a%00b", "Bearer good", "", ""), 400, "invalid_request", "id_invalid", "id")
	wantCode(t, rig.do(http.MethodGet, "/v1/things/t?after=%ff", "Bearer good", "", ""), 400, "invalid_request", "after_invalid", "after")
	big := `{"amount":1,"note":"` + strings.Repeat("x", MaxBodyBytes) + `"}`
	wantCode(t, rig.post("", big), 413, "invalid_request", "body_too_large", "")
	req := httptest.NewRequest(http.MethodPost, "/v1/things", strings.NewReader(`{"amount":1}`))
	req.Header.Set("Authorization", "Bearer good")
	req.Header.Set("Content-Type", "text/plain")
	rec := httptest.NewRecorder()
	rig.h.ServeHTTP(rec, req)
	wantCode(t, gateResp{rec.Code, rec.Header(), rec.Body.String()}, 415, "invalid_request", "content_type_invalid", "")
	if rig.calls.Load() != 1 {
		t.Fatalf("next ran %d times, want once (the escaped backslash)", rig.calls.Load())
	}
}

// A completed key is replayed from its record, read without the key's lock: 64 concurrent
// replays, with the lock held elsewhere all along, all answer the replay, never 409.
func TestGateReplaysACompletedKeyWithoutItsLock(t *testing.T) {
	rig := newGateRig(t, nil, okJSON)
	first := rig.post("k", `{"amount":1}`)
	if first.status != 200 {
		t.Fatalf("first: %d %s", first.status, first.body)
	}
	k := ports.IdempotencyKey{Scope: core.Scope{MerchantID: "mer_a", Env: core.EnvTest}, Method: http.MethodPost, Path: "/v1/things", Key: "k"}
	rig.store.mu.Lock()
	rig.store.locked[k] = true // a request that would take the lock now would get 409
	rig.store.mu.Unlock()
	var wg sync.WaitGroup
	res := make([]gateResp, 64)
	for i := range res {
		wg.Add(1)
		go func() { defer wg.Done(); res[i] = rig.post("k", `{"amount":1}`) }()
	}
	wg.Wait()
	for i, r := range res {
		if r.status != 200 || r.header.Get("Idempotent-Replayed") != "true" || r.body != first.body {
			t.Fatalf("replay %d: %d %q %s", i, r.status, r.header.Get("Idempotent-Replayed"), r.body)
		}
	}
	if rig.calls.Load() != 1 {
		t.Fatalf("%d calls", rig.calls.Load())
	}
}

func (rig *gateRig) job(idem, body string) gateResp {
	return rig.do(http.MethodPost, "/v1/jobs", "Bearer good", idem, body)
}

// An operation of the phased shape runs with no unit of work open, sees its key's recovery
// point, and a response that is not stored (a 5xx) leaves the key started at the last point
// it reached: the retry resumes from there, and its response is then stored and replayed.
func TestGatePhasedOperationResumesFromItsRecoveryPoint(t *testing.T) {
	var points []string
	rig := newGateRig(t, nil, func(n int64, w http.ResponseWriter, r *http.Request) {
		if r.Context().Value(memTxKey{}) != nil {
			t.Error("a phased operation runs inside the gate's unit of work")
		}
		p := ports.KeyPhasesFrom(r.Context())
		if p == nil {
			t.Fatal("no key phases")
		}
		points = append(points, p.Point())
		if p.Point() == "" {
			if err := p.Reach(r.Context(), "charged"); err != nil {
				t.Fatal(err)
			}
			WriteError(w, r, io.ErrUnexpectedEOF) // the process "fails" after its first phase
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"resumed_from":%q}`, p.Point())
	})
	wantCode(t, rig.job("j", `{"n":1}`), 500, "api_error", "internal_error", "")
	wantCode(t, rig.job("j", `{"n":2}`), 409, "idempotency_error", "idempotency_key_reused", "")
	second := rig.job("j", `{"n":1}`)
	if second.status != 200 || second.body != `{"resumed_from":"charged"}` || second.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("retry: %d %s", second.status, second.body)
	}
	third := rig.job("j", `{"n":1}`)
	if third.body != second.body || third.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay: %d %s", third.status, third.body)
	}
	if len(points) != 2 || points[0] != "" || points[1] != "charged" || rig.calls.Load() != 2 {
		t.Fatalf("points %q, calls %d", points, rig.calls.Load())
	}
}

// While a phased request holds its key, a retry answers 409 idempotency_key_in_use at once.
func TestGatePhasedKeyHeldByALiveRequest(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	rig := newGateRig(t, nil, func(n int64, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			close(entered)
			<-release
		}
		okJSON(n, w, r)
	})
	done := make(chan gateResp)
	go func() { done <- rig.job("j", `{"n":1}`) }()
	<-entered
	wantCode(t, rig.job("j", `{"n":1}`), 409, "idempotency_error", "idempotency_key_in_use", "")
	close(release)
	if first := <-done; first.status != 200 {
		t.Fatalf("first: %d %s", first.status, first.body)
	}
	if r := rig.job("j", `{"n":1}`); r.header.Get("Idempotent-Replayed") != "true" || rig.calls.Load() != 1 {
		t.Fatalf("after the first finished: %d calls %d", r.status, rig.calls.Load())
	}
}

// An unknown x-kassa-idempotency is refused when the gate is built.
func TestGateRefusesAnUnknownIdempotencyShape(t *testing.T) {
	spec, err := openapi3.NewLoader().LoadFromData([]byte(strings.Replace(gateSpec, "x-kassa-idempotency: phases", "x-kassa-idempotency: later", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewGate(GateConfig{Spec: spec, Authenticate: fakeAuth}, http.NotFoundHandler()); err == nil {
		t.Fatal("an unknown shape was accepted")
	}
}

// A database-only keyed operation runs inside the gate's unit of work, so a call out of the
// process it made would be refused (ports.OutsideTransaction); an operation of the phased
// shape runs outside any transaction.
func TestGateShapesAndTheTransactionMark(t *testing.T) {
	var inside []bool
	rig := newGateRig(t, nil, func(n int64, w http.ResponseWriter, r *http.Request) {
		inside = append(inside, errors.Is(ports.OutsideTransaction(r.Context()), ports.ErrInsideTransaction))
		okJSON(n, w, r)
	})
	rig.post("t", `{"amount":1}`)
	rig.job("p", `{"n":1}`)
	rig.post("", `{"amount":1}`) // no key: no unit of work
	if len(inside) != 3 || !inside[0] || inside[1] || inside[2] {
		t.Fatalf("inside a transaction: %v, want [true false false]", inside)
	}
}
