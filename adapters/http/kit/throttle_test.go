package kit

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// countLimiter is a KeyedLimiter of n tokens per key that never refill.
type countLimiter struct {
	mu   sync.Mutex
	n    int
	used map[string]int
}

func newCountLimiter(n int) *countLimiter { return &countLimiter{n: n, used: map[string]int{}} }

func (c *countLimiter) Allow(key string) (bool, time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.used[key] >= c.n {
		return false, 2500 * time.Millisecond
	}
	c.used[key]++
	return true, 0
}

func (c *countLimiter) Wait(key string) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.used[key] >= c.n {
		return 3 * time.Second
	}
	return 0
}

func (c *countLimiter) Take(key string) { c.mu.Lock(); c.used[key]++; c.mu.Unlock() }

func (c *countLimiter) reset(key string) { c.mu.Lock(); delete(c.used, key); c.mu.Unlock() }

func call(h http.Handler, remote, auth string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodGet, "/v1/x", nil)
	r.RemoteAddr = remote
	r.Header.Set("Authorization", auth)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func wantRateLimited(t *testing.T, w *httptest.ResponseRecorder, retryAfter string) {
	t.Helper()
	var env errorEnvelope
	if w.Code != 429 || json.Unmarshal(w.Body.Bytes(), &env) != nil || env.Error.Type != "rate_limit_error" ||
		env.Error.Code != "rate_limited" || w.Header().Get("Retry-After") != retryAfter {
		t.Fatalf("got %d %q Retry-After %q, want 429 rate_limited with Retry-After %s", w.Code, w.Body, w.Header().Get("Retry-After"), retryAfter)
	}
}

func TestAuthThrottle(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	lim := newCountLimiter(3)
	checked := 0
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		checked++
		if r.Header.Get("Authorization") != "good" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	h := NewAuthThrottle(lim, ClientIP{}, log).Wrap(next)

	// Successes take nothing.
	for range 10 {
		if w := call(h, "192.0.2.1:1000", "good"); w.Code != 200 {
			t.Fatalf("valid key: %d", w.Code)
		}
	}
	for range 3 {
		if w := call(h, "192.0.2.1:1000", "bad"); w.Code != 401 {
			t.Fatalf("bad key: %d", w.Code)
		}
	}
	// Over the limit: 429 before the key is looked at, the valid one included.
	before := checked
	for _, auth := range []string{"bad", "good", "bad", ""} {
		wantRateLimited(t, call(h, "192.0.2.1:1001", auth), "3")
	}
	if checked != before {
		t.Fatal("a throttled request reached the key check")
	}
	// Another address is unaffected.
	if w := call(h, "192.0.2.2:1000", "bad"); w.Code != 401 {
		t.Fatalf("other address: %d", w.Code)
	}
	// One warning for the whole burst; recovery logs its end once.
	if n := strings.Count(logs.String(), "authentication failures over the limit"); n != 1 {
		t.Fatalf("%d warnings for one burst:\n%s", n, logs.String())
	}
	lim.reset("192.0.2.1")
	if w := call(h, "192.0.2.1:1000", "good"); w.Code != 200 {
		t.Fatalf("after the window: %d", w.Code)
	}
	if !strings.Contains(logs.String(), "throttled burst ended") || !strings.Contains(logs.String(), "refused=4") {
		t.Fatalf("burst end not logged:\n%s", logs.String())
	}
	// An IPv6 /64 is one address.
	for range 3 {
		call(h, "[2001:db8:1:2::a]:1", "bad")
	}
	wantRateLimited(t, call(h, "[2001:db8:1:2:ffff::1]:1", "good"), "3")
	if w := call(h, "[2001:db8:1:3::a]:1", "good"); w.Code != 200 {
		t.Fatalf("another /64: %d", w.Code)
	}
	if NewAuthThrottle(nil, ClientIP{}, nil).Wrap(next) == nil || (*AuthThrottle)(nil).Wrap(next) == nil {
		t.Fatal("a throttle without limiter must pass through")
	}
}

func TestRequestLimits(t *testing.T) {
	var logs bytes.Buffer
	perAddr, perSecret := newCountLimiter(5), newCountLimiter(2)
	ip := ClientIP{}
	h := NewRequestLimits(slog.New(slog.NewTextHandler(&logs, nil)), ip,
		LimitRule{Limiter: perAddr, Key: ip.Key},
		LimitRule{Limiter: perSecret, Key: func(r *http.Request) string { return r.Header.Get("Authorization") }},
	).Wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(204) }))

	for range 2 {
		if w := call(h, "192.0.2.1:1", "s1"); w.Code != 204 {
			t.Fatalf("within the limits: %d", w.Code)
		}
	}
	wantRateLimited(t, call(h, "192.0.2.1:1", "s1"), "3") // 2.5 s rounded up
	if w := call(h, "192.0.2.1:1", "s2"); w.Code != 204 {
		t.Fatalf("another secret: %d", w.Code)
	}
	if w := call(h, "192.0.2.1:1", ""); w.Code != 204 { // no key: the second rule does not count it
		t.Fatalf("no secret: %d", w.Code)
	}
	wantRateLimited(t, call(h, "192.0.2.1:1", "s3"), "3") // the address's 5 are used
	if perSecret.used["s3"] != 0 {
		t.Fatal("a request refused by the first rule took a token from the second")
	}
	if strings.Contains(logs.String(), "s1") || strings.Count(logs.String(), "request rate over the limit") != 2 { // one per refused bucket
		t.Fatalf("log:\n%s", logs.String())
	}
}

func TestAddressKey(t *testing.T) {
	for in, want := range map[string]string{
		"192.0.2.1":            "192.0.2.1",
		"::ffff:192.0.2.1":     "192.0.2.1",
		"2001:db8:1:2:3:4:5:6": "2001:db8:1:2::/64",
		"fe80::1%eth0":         "fe80::/64",
		"not an address":       "not an address",
	} {
		if got := addressKey(in); got != want {
			t.Errorf("addressKey(%q) = %q, want %q", in, got, want)
		}
	}
}
