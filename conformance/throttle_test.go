package conformance

import (
	"context"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/conformance/harness"
	"github.com/kassa-pay/kassa/core"
)

func init() {
	sectionTitles["ABUSE"] = "abuse throttles (failed authentication, dashboard and browser API rates, sign-in)"
}

// throttleServer starts a server of the case's own on the suite's database, with the default
// throttles (the suite's server raises them) plus env. Cases against an external target skip.
func throttleServer(t *testing.T, name string, env map[string]string) *harness.Target {
	t.Helper()
	if !target.CanLaunchSiblings() {
		t.Skip("the throttle cases need servers of their own with the default limits")
	}
	s, err := target.Sibling(context.Background(), name, harness.Options{Env: env})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// untilLimited sends do until it answers 429 (at most max times) and returns that answer and
// how many answers came before it; every earlier answer must have status want.
func untilLimited(t *testing.T, max, want int, do func(i int) Raw) (Raw, int) {
	t.Helper()
	for i := range max {
		r := do(i)
		if r.Status == http.StatusTooManyRequests {
			return r, i
		}
		if r.Status != want {
			t.Fatalf("request %d: %d %s, want %d until the limit", i, r.Status, r.Body, want)
		}
	}
	t.Fatalf("no 429 within %d requests", max)
	return Raw{}, 0
}

// wantRateLimited checks a 429 rate_limited with Retry-After of 1..max whole seconds and
// returns the seconds.
func wantRateLimited(t *testing.T, r Raw, max int) int {
	t.Helper()
	wantError(t, r.Status, r.Header, r.Body, 429, "rate_limit_error", "rate_limited", "")
	secs, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil || secs < 1 || secs > max {
		t.Fatalf("Retry-After %q, want 1..%d whole seconds", r.Header.Get("Retry-After"), max)
	}
	return secs
}

func logCount(t *testing.T, path, s string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), s)
}

func TestThrottles(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "ABUSE", "20 failed authentications from an address, then 429 rate_limited before any key or token is checked; logged once; recovers after Retry-After", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		srv := throttleServer(t, "auth-throttle", nil)
		r, failed := untilLimited(t, 40, 401, func(i int) Raw {
			return rawAt(t, srv.BaseURL, http.MethodGet, "/v1/products", "sk_test_"+core.NewSecretPart(), "", nil)
		})
		if failed < 20 {
			t.Fatalf("limited after %d failures, want 20", failed)
		}
		wantRateLimited(t, r, 3)
		// The address is over the limit: a valid key and the operator token are refused
		// before they are looked at, and the operator API shares the count.
		wantRateLimited(t, rawAt(t, srv.BaseURL, http.MethodGet, "/v1/products", m.TestKey, "", nil), 3)
		secs := wantRateLimited(t, rawAt(t, srv.BaseURL, http.MethodGet, "/operator/v1/merchants/"+m.ID, srv.OperatorToken, "", nil), 3)
		if h := rawAt(t, srv.BaseURL, http.MethodGet, "/healthz", "", "", nil); h.Status != 200 {
			t.Fatalf("health check throttled: %d", h.Status)
		}
		if n := logCount(t, srv.LogPath, "authentication failures over the limit"); n != 1 {
			t.Fatalf("%d log lines for one burst, want 1", n)
		}
		time.Sleep(time.Duration(secs) * time.Second)
		if ok := rawAt(t, srv.BaseURL, http.MethodGet, "/v1/products", m.TestKey, "", nil); ok.Status != 200 {
			t.Fatalf("valid key after Retry-After: %d %s", ok.Status, ok.Body)
		}
	})

	harness.Rule(t, "ABUSE", "dashboard API: requests without a session are limited per address, with one per session; another session is unaffected", func(t *testing.T) {
		t.Parallel()
		srv := throttleServer(t, "dashboard-rate", nil)
		a, b := newDashOwnerAt(t, srv), newDashOwnerAt(t, srv)
		tokenA, tokenB := a.sessionTokenAt(t, srv), b.sessionTokenAt(t, srv)
		get := func(path, session string) Raw {
			h := map[string]string{}
			if session != "" {
				h["Cookie"] = (&http.Cookie{Name: "kassa_session", Value: session}).String()
			}
			return rawAt(t, srv.DashboardURL, http.MethodGet, path, "", "", h)
		}
		r, _ := untilLimited(t, 500, 200, func(int) Raw { return get("/api/v1/openapi.json", "") })
		wantRateLimited(t, r, 1)
		if ok := get("/api/v1/session", tokenA); ok.Status != 200 {
			t.Fatalf("a session limited by anonymous requests: %d %s", ok.Status, ok.Body)
		}
		r, n := untilLimited(t, 500, 200, func(int) Raw { return get("/api/v1/session", tokenA) })
		if n < 19 {
			t.Fatalf("session limited after %d requests, want at least the burst of 20", n)
		}
		wantRateLimited(t, r, 1)
		if ok := get("/api/v1/session", tokenB); ok.Status != 200 {
			t.Fatalf("another session limited: %d %s", ok.Status, ok.Body)
		}
	})

	harness.Rule(t, "ABUSE", "dashboard API: made-up session cookies are failed authentications, 429 after 20 from an address", func(t *testing.T) {
		t.Parallel()
		srv := throttleServer(t, "dashboard-cookies", nil)
		o := newDashOwnerAt(t, srv)
		token := o.sessionTokenAt(t, srv)
		r, failed := untilLimited(t, 40, 401, func(int) Raw {
			return rawAt(t, srv.DashboardURL, http.MethodGet, "/api/v1/session", "", "",
				map[string]string{"Cookie": "kassa_session=" + core.NewSecretPart()})
		})
		if failed < 20 {
			t.Fatalf("limited after %d failures, want 20", failed)
		}
		wantRateLimited(t, r, 3)
		// Over the limit, a real session from the address waits too.
		wantRateLimited(t, rawAt(t, srv.DashboardURL, http.MethodGet, "/api/v1/session", "", "",
			map[string]string{"Cookie": "kassa_session=" + token}), 3)
	})

	harness.Rule(t, "ABUSE", "browser API: limited per client secret and address, and per address whatever the secret", func(t *testing.T) {
		t.Parallel()
		srv := throttleServer(t, "checkout-rate", nil)
		m := newMerchant(t, true)
		s1, s2 := paySession(t, m), paySession(t, m)
		get := func(s, secret string) Raw {
			return rawAt(t, srv.CheckoutURL, http.MethodGet, "/api/v1/checkout/sessions/"+s, secret, "", nil)
		}
		r, n := untilLimited(t, 500, 200, func(int) Raw { return get(s1.Id, s1.ClientSecret) })
		if n < 9 {
			t.Fatalf("secret limited after %d requests, want at least the burst of 10", n)
		}
		wantRateLimited(t, r, 1)
		if ok := get(s2.Id, s2.ClientSecret); ok.Status != 200 {
			t.Fatalf("another secret from the address: %d %s", ok.Status, ok.Body)
		}
		// Made-up secrets (422 session_expired each) meet the address limit.
		r, n = untilLimited(t, 500, 422, func(int) Raw {
			return get(s2.Id, "cs_"+core.RandomBase62(24)+"_secret_"+core.NewSecretPart())
		})
		if n < 20 {
			t.Fatalf("address limited after %d requests", n)
		}
		wantRateLimited(t, r, 1)
	})

	harness.Rule(t, "ABUSE", "sign-in: failures for an e-mail from other addresses never refuse the right password from an address that has not failed", func(t *testing.T) {
		t.Parallel()
		srv := throttleServer(t, "sign-in-throttle", map[string]string{
			"KASSA_TRUSTED_PROXIES": "127.0.0.1", "KASSA_DASHBOARD_RATE_ANONYMOUS": "0"})
		o := newDashMerchantAt(t, srv, true)
		signIn := func(from, password string) Raw {
			return rawAt(t, srv.DashboardURL, http.MethodPost, "/api/v1/session", "",
				rawJSON(t, map[string]string{"email": o.Email, "password": password}),
				map[string]string{"X-Forwarded-For": from})
		}
		wantThrottled := func(r Raw) {
			t.Helper()
			wantError(t, r.Status, r.Header, r.Body, 429, "rate_limit_error", "login_throttled", "")
			if s, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || s < 1 {
				t.Fatalf("Retry-After %q", r.Header.Get("Retry-After"))
			}
		}
		for i := range 5 {
			r := signIn("198.51.100.1", "guess-"+strconv.Itoa(i))
			wantError(t, r.Status, r.Header, r.Body, 401, "authentication_error", "credentials_invalid", "")
		}
		wantThrottled(signIn("198.51.100.1", o.Password))
		if r := signIn("198.51.100.2", o.Password); r.Status != 200 {
			t.Fatalf("the owner, from an address that has not failed, is refused: %d %s", r.Status, r.Body)
		}
		// Guesses from ten more addresses put the e-mail into its backoff (15 failures: 32 s)
		// for addresses that have failed for it, and only for those.
		for i := range 10 {
			r := signIn("203.0.113."+strconv.Itoa(i+1), "guess")
			wantError(t, r.Status, r.Header, r.Body, 401, "authentication_error", "credentials_invalid", "")
		}
		wantThrottled(signIn("203.0.113.1", o.Password))
		if r := signIn("192.0.2.77", o.Password); r.Status != 200 {
			t.Fatalf("the owner, from a fresh address, is refused: %d %s", r.Status, r.Body)
		}
	})
}

// Behind a trusted proxy that writes the client's port too (ip:port, [v6]:port, as some cloud
// load balancers do), or RFC 7239 Forwarded, each client is counted on its own: one client's
// failed authentications do not throttle another (they used to count every client as the
// proxy).
func TestThrottlesBehindAProxy(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, header string
		a, b         map[string]string
	}{
		{"X-Forwarded-For with ports", "X-Forwarded-For",
			map[string]string{"X-Forwarded-For": "198.51.100.9, 203.0.113.5:41000"},
			map[string]string{"X-Forwarded-For": "[2001:db8:1::5]:41001"}},
		{"Forwarded", "Forwarded",
			map[string]string{"Forwarded": `for="[2001:db8:1::5]:41000";proto=https`},
			map[string]string{"Forwarded": `for=203.0.113.6:41001`}},
	} {
		harness.Rule(t, "ABUSE", "failed authentication is counted per client behind a proxy: "+c.name, func(t *testing.T) {
			t.Parallel()
			srv := throttleServer(t, "proxy-"+c.header, map[string]string{
				"KASSA_TRUSTED_PROXIES": "127.0.0.1", "KASSA_TRUSTED_PROXY_HEADER": c.header})
			bad := "sk_test_" + core.NewSecretPart()
			r, n := untilLimited(t, 100, 401, func(int) Raw {
				return rawAt(t, srv.BaseURL, http.MethodGet, "/v1/checkout/sessions", bad, "", c.a)
			})
			if n < 20 {
				t.Fatalf("client a limited after %d failures", n)
			}
			wantRateLimited(t, r, 3)
			if r := rawAt(t, srv.BaseURL, http.MethodGet, "/v1/checkout/sessions", bad, "", c.b); r.Status != 401 {
				t.Fatalf("client b, which has not failed, got %d %s: it is counted as client a (or as the proxy)", r.Status, r.Body)
			}
		})
	}
}

// sessionTokenAt is the owner's session cookie for srv's dashboard.
func (o *DashOwner) sessionTokenAt(t *testing.T, srv *harness.Target) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, srv.DashboardURL+"/", nil)
	for _, c := range o.Jar.Cookies(req.URL) {
		if c.Name == "kassa_session" {
			return c.Value
		}
	}
	t.Fatal("no session cookie")
	return ""
}
