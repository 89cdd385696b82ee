package conformance

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/kassa-pay/kassa/conformance/harness"
)

// transportLeaks are fragments that betray internals in an error body (D3).
var transportLeaks = []string{"sql", "pq:", "goroutine", ".go:", "*core", "runtime.", "panic", "SELECT ", "INSERT "}

// transportNoLeak fails when the error message of body carries a fragment of internals.
func transportNoLeak(t *testing.T, body []byte) {
	t.Helper()
	var e envelope
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("not an error envelope: %s", body)
	}
	msg := strings.ToLower(e.Error.Message)
	for _, s := range transportLeaks {
		if strings.Contains(msg, strings.ToLower(s)) {
			t.Fatalf("error message contains %q: %s", s, body)
		}
	}
}

func TestTransport(t *testing.T) {
	t.Parallel()
	const sessions = "/v1/checkout/sessions"
	const validSession = `{"amount":2500,"currency":"eur","customer_name":"Ada Lovelace","customer_email":"ada@example.com"}`

	harness.Rule(t, "D3", "an unknown route is 404 invalid_request/resource_missing", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		for _, p := range []string{"/v1/nope", "/v2/products", "/", "/v1/products/prod_x/unknown"} {
			r := raw(t, http.MethodGet, p, m.TestKey, "", nil)
			wantError(t, r.Status, r.Header, r.Body, 404, "invalid_request", "resource_missing", "")
		}
		// Unauthenticated as well: the route is unknown before the key is looked at.
		r := raw(t, http.MethodGet, "/v1/nope", "", "", nil)
		wantError(t, r.Status, r.Header, r.Body, 404, "invalid_request", "resource_missing", "")
	})

	harness.Rule(t, "D3", "a wrong method is 405 method_not_allowed", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		r := raw(t, http.MethodPut, "/v1/products", m.TestKey, `{}`, nil)
		wantError(t, r.Status, r.Header, r.Body, 405, "invalid_request", "method_not_allowed", "")
		r = raw(t, http.MethodDelete, sessions, m.TestKey, "", nil)
		wantError(t, r.Status, r.Header, r.Body, 405, "invalid_request", "method_not_allowed", "")
	})

	harness.Rule(t, "D3", "malformed JSON is 400 body_invalid_json", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		for _, body := range []string{`{"amount":`, `{"amount":2500,}`, `not json`, `[1,2`, `{"a":1}{"b":2}`} {
			r := raw(t, http.MethodPost, sessions, m.TestKey, body, nil)
			wantError(t, r.Status, r.Header, r.Body, 400, "invalid_request", "body_invalid_json", "")
			transportNoLeak(t, r.Body)
		}
	})

	harness.Rule(t, "D3", "an unknown body field is 400 parameter_unknown naming it", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		r := raw(t, http.MethodPost, sessions, m.TestKey, `{"amount":2500,"currency":"eur","customer_name":"Ada Lovelace","customer_email":"ada@example.com","bogus":1}`, nil)
		wantError(t, r.Status, r.Header, r.Body, 400, "invalid_request", "parameter_unknown", "bogus")
		r = raw(t, http.MethodPost, "/v1/products", m.TestKey, `{"name":"Widget","price":{"currency":"eur","unit_amount":1000,"bogus":true}}`, nil)
		wantError(t, r.Status, r.Header, r.Body, 400, "invalid_request", "parameter_unknown", "price.bogus")
	})

	harness.Rule(t, "D3", "a value of the wrong type is 400 amount_invalid with param amount", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		r := raw(t, http.MethodPost, sessions, m.TestKey, `{"amount":"abc","currency":"eur","customer_name":"Ada Lovelace","customer_email":"ada@example.com"}`, nil)
		wantError(t, r.Status, r.Header, r.Body, 400, "invalid_request", "amount_invalid", "amount")
		transportNoLeak(t, r.Body)
	})

	harness.Rule(t, "D3", "a body over 1 MiB is 413 body_too_large", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		big := `{"name":"` + strings.Repeat("x", 1<<20) + `"}`
		r := raw(t, http.MethodPost, "/v1/products", m.TestKey, big, nil)
		wantError(t, r.Status, r.Header, r.Body, 413, "invalid_request", "body_too_large", "")
	})

	harness.Rule(t, "D3", "a non-JSON Content-Type is 415 content_type_invalid", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded"} {
			r := raw(t, http.MethodPost, sessions, m.TestKey, validSession, map[string]string{"Content-Type": ct})
			wantError(t, r.Status, r.Header, r.Body, 415, "invalid_request", "content_type_invalid", "")
		}
		// Parameters on application/json are fine.
		r := raw(t, http.MethodPost, sessions, m.TestKey, validSession, map[string]string{"Content-Type": "application/json; charset=utf-8"})
		if r.Status != 200 {
			t.Fatalf("application/json; charset=utf-8: %d %s", r.Status, r.Body)
		}
	})

	harness.Rule(t, "D3", "every response carries a unique req_ Request-Id equal to error.request_id", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		type call struct{ method, path, key, body string }
		calls := []call{
			{http.MethodGet, "/v1/products", m.TestKey, ""},
			{http.MethodPost, sessions, m.TestKey, validSession},
			{http.MethodGet, "/v1/products", "", ""},
			{http.MethodGet, "/v1/nope", m.TestKey, ""},
			{http.MethodGet, "/healthz", "", ""},
			{http.MethodPost, sessions, m.TestKey, `{`},
		}
		var mu sync.Mutex
		ids := map[string]bool{}
		var wg sync.WaitGroup
		for range 5 {
			for _, c := range calls {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := raw(t, c.method, c.path, c.key, c.body, nil)
					id := r.Header.Get("Request-Id")
					if !strings.HasPrefix(id, "req_") || len(id) != len("req_")+24 {
						t.Errorf("%s %s: Request-Id %q", c.method, c.path, id)
					}
					if r.Status >= 400 {
						var e envelope
						if err := json.Unmarshal(r.Body, &e); err != nil || e.Error.RequestID != id {
							t.Errorf("%s %s: request_id %q, header %q", c.method, c.path, e.Error.RequestID, id)
						}
					}
					mu.Lock()
					if ids[id] {
						t.Errorf("Request-Id %s repeated", id)
					}
					ids[id] = true
					mu.Unlock()
				}()
			}
		}
		wg.Wait()
	})

	harness.Rule(t, "D3", "malformed input never yields a 5xx nor leaks internals", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		bodies := []string{
			`null`, `[]`, `"x"`, `123`, `{"amount":null}`, `{"amount":1e400}`, `{"amount":-1}`,
			`{"amount":9223372036854775808,"currency":"eur","customer_name":"Ada","customer_email":"a@example.com"}`,
			`{"currency":"` + strings.Repeat("€", 100) + `"}`, "{\"customer_name\":\"\xff\xfe\"}",
			`{"line_items":[{"bogus":1}]}`, `{"name":"a\u0000b","customer_name":"Ada\u0000","currency":"eur"}`,
			`{"amount":2500,"currency":"eur","customer_name":"Ada Lovelace","customer_email":"ada@example.com","metadata":{"k\u0000":"v"}}`, `{"line_items":"x"}`, `{"metadata":{"a":{"b":1}}}`,
			`{"amount":2500,"currency":"eur","customer_name":"Ada Lovelace","customer_email":"not-an-email"}`,
		}
		for _, b := range bodies {
			for _, path := range []string{sessions, "/v1/products", "/v1/products/prod_x", "/v1/checkout/sessions/cs_x/expire"} {
				r := raw(t, http.MethodPost, path, m.TestKey, b, nil)
				if r.Status >= 500 || r.Status < 400 {
					t.Errorf("POST %s %q → %d %s", path, b, r.Status, r.Body)
				}
				if r.Status >= 400 {
					transportNoLeak(t, r.Body)
				}
			}
		}
		for _, p := range []string{"/v1/products/%00", "/v1/products/" + strings.Repeat("a", 5000), "/v1/checkout/sessions/'%3B--", "/v1/products?limit=abc", "/v1/products?limit=0", "/v1/products?starting_after=%ff", "/v1/products?starting_after=prod_%00", "/v1/checkout/sessions/cs_%00", "/v1/checkout/sessions?limit=1000"} {
			r := raw(t, http.MethodGet, p, m.TestKey, "", nil)
			if r.Status >= 500 || r.Status < 400 {
				t.Errorf("GET %s → %d %s", p, r.Status, r.Body)
			}
			transportNoLeak(t, r.Body)
		}
	})
}
