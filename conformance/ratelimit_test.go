package conformance

import (
	"context"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/conformance/harness"
)

// rateBurst sends requests with key concurrently until the first 429 or max requests, and
// returns that 429 (nil when none came). Every authenticated request takes a token, so the
// burst uses the cheapest one: a POST refused with 415 right after the rate limit, which costs
// the server no more than the key lookup. Responses are still validated against the contract;
// only the connection pool is widened so that the burst does not churn connections.
func rateBurst(t *testing.T, base, key string, max int) *Raw {
	t.Helper()
	vt := *transport
	pool := &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256, IdleConnTimeout: 10 * time.Second}
	defer pool.CloseIdleConnections()
	vt.Base = pool
	hc := vt.Client()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		sent    atomic.Int64
		mu      sync.Mutex
		limited *Raw
		wg      sync.WaitGroup
	)
	for range 96 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil && sent.Add(1) <= int64(max) {
				req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/checkout/sessions", strings.NewReader("burst"))
				if err != nil {
					t.Error(err)
					return
				}
				req.Header.Set("Authorization", "Bearer "+key)
				req.Header.Set("Content-Type", "text/plain")
				resp, err := hc.Do(req)
				if err != nil {
					if ctx.Err() == nil {
						t.Errorf("burst: %v", err)
						cancel()
					}
					return
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				switch resp.StatusCode {
				case http.StatusUnsupportedMediaType:
				case http.StatusTooManyRequests:
					mu.Lock()
					if limited == nil {
						limited = &Raw{Status: resp.StatusCode, Header: resp.Header, Body: body}
					}
					mu.Unlock()
					cancel()
					return
				default:
					t.Errorf("burst: %d %s%s", resp.StatusCode, body, rateLogOf(resp.Header.Get("Request-Id")))
					cancel()
					return
				}
			}
		}()
	}
	wg.Wait()
	return limited
}

func TestRateLimit(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "D5", "a burst meets 429 rate_limited with Retry-After; other merchants are unaffected; waiting helps", func(t *testing.T) {
		t.Parallel()
		m, other := newMerchant(t, true), newMerchant(t, true)
		// The suite's server runs with high limits so that ordinary cases never meet them, and
		// a burst against it only works when the machine outruns the refill. When the harness
		// started the server, the burst goes to a sibling on the same database whose test
		// limit is low enough to meet on any machine; an external target gets the burst.
		base := target.BaseURL
		if target.CanLaunchSiblings() {
			s, err := target.Sibling(context.Background(), "ratelimit", harness.Options{Env: map[string]string{
				"KASSA_RATE_TEST": "20", "KASSA_RATE_LIVE": "40"}})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Stop()
			base = s.BaseURL
		}
		r := rateBurst(t, base, m.TestKey, 2000)
		if t.Failed() {
			return
		}
		if r == nil {
			t.Fatal("no 429 within 2000 concurrent requests of one test key")
		}
		wantError(t, r.Status, r.Header, r.Body, 429, "rate_limit_error", "rate_limited", "")
		secs, err := strconv.Atoi(r.Header.Get("Retry-After"))
		if err != nil || secs < 1 {
			t.Fatalf("Retry-After %q, want whole seconds ≥ 1", r.Header.Get("Retry-After"))
		}
		// At that moment another merchant, and the merchant's own live environment, still pass.
		for name, key := range map[string]string{"other merchant": other.TestKey, "live environment": m.LiveKey} {
			if o := rawAt(t, base, http.MethodGet, "/v1/products", key, "", nil); o.Status != 200 {
				t.Fatalf("%s limited by the burst: %d %s", name, o.Status, o.Body)
			}
		}
		time.Sleep(time.Duration(secs) * time.Second)
		if o := rawAt(t, base, http.MethodGet, "/v1/test_helpers/clock", m.TestKey, "", nil); o.Status != 200 {
			t.Fatalf("after waiting Retry-After: %d %s", o.Status, o.Body)
		}
	})
}

// rateLogOf returns the server log lines of a request (when the harness started the server),
// to explain an unexpected answer.
func rateLogOf(requestID string) string {
	if target.LogPath == "" || requestID == "" {
		return ""
	}
	b, err := os.ReadFile(target.LogPath)
	if err != nil {
		return ""
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, requestID) {
			out = append(out, l)
		}
	}
	return "\nserver log:\n" + strings.Join(out, "\n")
}
