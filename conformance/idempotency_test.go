package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/kassa-pay/kassa/conformance/harness"
	"github.com/kassa-pay/kassa/core"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
)

const idemSessions = "/v1/checkout/sessions"

// idemBody is a valid create-session body with the given amount.
func idemBody(amount int) string {
	return `{"amount":` + itoa(amount) + `,"currency":"eur","customer_name":"Ada Lovelace","customer_email":"ada@example.com"}`
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// idemPost posts body to path with key and Idempotency-Key.
func idemPost(t *testing.T, path, key, idem, body string) Raw {
	t.Helper()
	return raw(t, http.MethodPost, path, key, body, map[string]string{"Idempotency-Key": idem})
}

// idemSessionCount is the number of sessions the client's environment holds.
func idemSessionCount(t *testing.T, c *api.ClientWithResponses) int {
	t.Helper()
	resp, err := c.ListCheckoutSessionsWithResponse(context.Background(), &api.ListCheckoutSessionsParams{Limit: ptr(100)})
	if err != nil {
		t.Fatal(err)
	}
	if resp.JSON200 == nil {
		t.Fatalf("list sessions: %d %s", resp.StatusCode(), resp.Body)
	}
	return len(resp.JSON200.Data)
}

// idemKey is a fresh idempotency key.
func idemKey() string { return "conf-" + core.RandomBase62(20) }

// wantReplay asserts that second is a verbatim replay of first.
func wantReplay(t *testing.T, first, second Raw) {
	t.Helper()
	if second.Status != first.Status || !bytes.Equal(second.Body, first.Body) {
		t.Fatalf("not replayed verbatim:\nfirst  %d %s\nsecond %d %s", first.Status, first.Body, second.Status, second.Body)
	}
	if got := second.Header.Get("Idempotent-Replayed"); got != "true" {
		t.Fatalf("Idempotent-Replayed = %q, want true", got)
	}
	if first.Header.Get("Idempotent-Replayed") != "" {
		t.Fatal("the first execution is marked as a replay")
	}
	if second.Header.Get("Content-Type") != first.Header.Get("Content-Type") {
		t.Fatalf("Content-Type %q replayed as %q", first.Header.Get("Content-Type"), second.Header.Get("Content-Type"))
	}
}

func TestIdempotency(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "D4", "the same key and body replay status and body verbatim and execute once", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		k := idemKey()
		first := idemPost(t, idemSessions, m.TestKey, k, idemBody(2500))
		if first.Status != 200 {
			t.Fatalf("first: %d %s", first.Status, first.Body)
		}
		second := idemPost(t, idemSessions, m.TestKey, k, idemBody(2500))
		wantReplay(t, first, second)
		if n := idemSessionCount(t, m.Test); n != 1 {
			t.Fatalf("%d sessions after a replay, want 1", n)
		}
		if second.Header.Get("Request-Id") == first.Header.Get("Request-Id") {
			t.Fatal("a replay reuses the Request-Id of the original")
		}
	})

	harness.Rule(t, "D4", "key order and whitespace do not make a different body", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		k := idemKey()
		first := idemPost(t, idemSessions, m.TestKey, k, idemBody(2600))
		if first.Status != 200 {
			t.Fatalf("first: %d %s", first.Status, first.Body)
		}
		reordered := "{\n  \"customer_email\" : \"ada@example.com\",\t\"currency\":\"eur\",\n\"customer_name\":\"Ada Lovelace\", \"amount\": 2600 }\n"
		wantReplay(t, first, idemPost(t, idemSessions, m.TestKey, k, reordered))
		if n := idemSessionCount(t, m.Test); n != 1 {
			t.Fatalf("%d sessions, want 1", n)
		}
	})

	harness.Rule(t, "8", "the same key with a different body is 409 idempotency_key_reused", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		k := idemKey()
		if r := idemPost(t, idemSessions, m.TestKey, k, idemBody(2500)); r.Status != 200 {
			t.Fatalf("first: %d %s", r.Status, r.Body)
		}
		r := idemPost(t, idemSessions, m.TestKey, k, idemBody(2501))
		wantError(t, r.Status, r.Header, r.Body, 409, "idempotency_error", "idempotency_key_reused", "")
		if !strings.Contains(strings.ToLower(authMessage(t, r.Body)), "different") {
			t.Fatalf("the message does not say the body differs: %s", r.Body)
		}
		if n := idemSessionCount(t, m.Test); n != 1 {
			t.Fatalf("%d sessions, want 1", n)
		}
	})

	harness.Rule(t, "D4", "concurrent requests with one key execute exactly once", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		k := idemKey()
		const n = 20
		res := make([]Raw, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				res[i] = idemPost(t, idemSessions, m.TestKey, k, idemBody(2700))
			}()
		}
		close(start)
		wg.Wait()
		var ok []Raw
		for _, r := range res {
			switch r.Status {
			case 200:
				ok = append(ok, r)
			case 409:
				wantError(t, r.Status, r.Header, r.Body, 409, "idempotency_error", "idempotency_key_in_use", "")
			default:
				t.Fatalf("unexpected %d %s", r.Status, r.Body)
			}
		}
		if len(ok) == 0 {
			t.Fatal("no request succeeded")
		}
		for _, r := range ok[1:] {
			if !bytes.Equal(r.Body, ok[0].Body) {
				t.Fatalf("two different successes:\n%s\n%s", ok[0].Body, r.Body)
			}
		}
		if c := idemSessionCount(t, m.Test); c != 1 {
			t.Fatalf("%d sessions, want exactly 1", c)
		}
	})

	harness.Rule(t, "8", "keys are 1 to 255 printable ASCII characters", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		for _, bad := range []string{strings.Repeat("k", 256), "key-\xe9", "key-é"} {
			r := idemPost(t, idemSessions, m.TestKey, bad, idemBody(2500))
			wantError(t, r.Status, r.Header, r.Body, 400, "invalid_request", "idempotency_key_invalid", "")
		}
		if n := idemSessionCount(t, m.Test); n != 0 {
			t.Fatalf("an invalid key executed the request (%d sessions)", n)
		}
		long := strings.Repeat("k", 250) + core.RandomBase62(5)
		first := idemPost(t, idemSessions, m.TestKey, long, idemBody(2500))
		if first.Status != 200 {
			t.Fatalf("255-character key: %d %s", first.Status, first.Body)
		}
		wantReplay(t, first, idemPost(t, idemSessions, m.TestKey, long, idemBody(2500)))
		one := idemPost(t, idemSessions, m.TestKey, "x", idemBody(2500))
		if one.Status != 200 {
			t.Fatalf("1-character key: %d %s", one.Status, one.Body)
		}
	})

	harness.Rule(t, "8", "a key is scoped to merchant, environment, method and path", func(t *testing.T) {
		t.Parallel()
		a, b := newMerchant(t, true), newMerchant(t, true)
		k := idemKey()
		first := idemPost(t, idemSessions, a.TestKey, k, idemBody(2500))
		if first.Status != 200 {
			t.Fatalf("first: %d %s", first.Status, first.Body)
		}
		// Another path, with a body that would be "different" under the same scope.
		prod := idemPost(t, "/v1/products", a.TestKey, k, `{"name":"Scoped widget"}`)
		if prod.Status != 200 || prod.Header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("other path: %d %s", prod.Status, prod.Body)
		}
		// Another merchant and the other environment, same body: executed, not replayed.
		for name, key := range map[string]string{"other merchant": b.TestKey, "live environment": a.LiveKey} {
			r := idemPost(t, idemSessions, key, k, idemBody(2500))
			if r.Status != 200 || r.Header.Get("Idempotent-Replayed") != "" || bytes.Equal(r.Body, first.Body) {
				t.Fatalf("%s: %d replayed=%q %s", name, r.Status, r.Header.Get("Idempotent-Replayed"), r.Body)
			}
		}
		for c, want := range map[*api.ClientWithResponses]int{a.Test: 1, a.Live: 1, b.Test: 1} {
			if n := idemSessionCount(t, c); n != want {
				t.Fatalf("%d sessions, want %d", n, want)
			}
		}
	})

	harness.Rule(t, "D4", "a 4xx produced by the endpoint is stored and replayed", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		k := idemKey()
		first := idemPost(t, idemSessions, m.TestKey, k, idemBody(100))
		wantError(t, first.Status, first.Header, first.Body, 400, "amount_too_small", "amount_below_minimum", "amount")
		second := idemPost(t, idemSessions, m.TestKey, k, idemBody(100))
		wantReplay(t, first, second)
		// The replayed request_id is the original's (verbatim), so it differs from its header.
		// A different body under the same key is still refused.
		r := idemPost(t, idemSessions, m.TestKey, k, idemBody(2500))
		wantError(t, r.Status, r.Header, r.Body, 409, "idempotency_error", "idempotency_key_reused", "")
	})

	harness.Rule(t, "D4", "a 401 is not stored: the same key then executes with a valid key", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		k := idemKey()
		bad := m.TestKey[:len(m.TestKey)-1] + flipChar(m.TestKey[len(m.TestKey)-1])
		r := idemPost(t, idemSessions, bad, k, idemBody(2500))
		wantError(t, r.Status, r.Header, r.Body, 401, "authentication_error", "invalid_api_key", "")
		ok := idemPost(t, idemSessions, m.TestKey, k, idemBody(2600))
		if ok.Status != 200 || ok.Header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("after a 401: %d %s", ok.Status, ok.Body)
		}
		if n := idemSessionCount(t, m.Test); n != 1 {
			t.Fatalf("%d sessions, want 1", n)
		}
	})

	harness.Rule(t, "D4", "keys expire on wall-clock time: advancing the test clock by a day, then two years, never expires a key", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		k := idemKey()
		first := idemPost(t, idemSessions, m.TestKey, k, idemBody(2500))
		if first.Status != 200 {
			t.Fatalf("first: %d %s", first.Status, first.Body)
		}
		for _, secs := range []int64{86401, 63_072_000} {
			adv, err := m.Test.AdvanceTestClockWithResponse(context.Background(), nil, api.TestClockAdvance{Seconds: ptr(secs)})
			if err != nil {
				t.Fatal(err)
			}
			if adv.StatusCode() != 200 {
				t.Fatalf("advance clock: %d %s", adv.StatusCode(), adv.Body)
			}
			wantReplay(t, first, idemPost(t, idemSessions, m.TestKey, k, idemBody(2500)))
			r := idemPost(t, idemSessions, m.TestKey, k, idemBody(2600))
			wantError(t, r.Status, r.Header, r.Body, 409, "idempotency_error", "idempotency_key_reused", "")
		}
		if c := idemSessionCount(t, m.Test); c != 1 {
			t.Fatalf("%d sessions, want exactly 1", c)
		}
	})

	harness.Rule(t, "D4", "64 concurrent replays of a completed key all answer the replay, never 409", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		k := idemKey()
		first := idemPost(t, idemSessions, m.TestKey, k, idemBody(2750))
		if first.Status != 200 {
			t.Fatalf("first: %d %s", first.Status, first.Body)
		}
		const n = 64
		res := make([]Raw, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				res[i] = idemPost(t, idemSessions, m.TestKey, k, idemBody(2750))
			}()
		}
		close(start)
		wg.Wait()
		for _, r := range res {
			wantReplay(t, first, r)
		}
		if c := idemSessionCount(t, m.Test); c != 1 {
			t.Fatalf("%d sessions, want exactly 1", c)
		}
	})

	harness.Rule(t, "D4", "GET ignores Idempotency-Key", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		k := idemKey()
		first := raw(t, http.MethodGet, idemSessions, m.TestKey, "", map[string]string{"Idempotency-Key": k})
		if first.Status != 200 {
			t.Fatalf("first: %d %s", first.Status, first.Body)
		}
		if r := idemPost(t, idemSessions, m.TestKey, k, idemBody(2500)); r.Status != 200 {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		second := raw(t, http.MethodGet, idemSessions, m.TestKey, "", map[string]string{"Idempotency-Key": k})
		if second.Status != 200 || second.Header.Get("Idempotent-Replayed") != "" || bytes.Equal(first.Body, second.Body) {
			t.Fatalf("GET was replayed: %d %s", second.Status, second.Body)
		}
		// Even an invalid key is ignored on GET.
		r := raw(t, http.MethodGet, idemSessions, m.TestKey, "", map[string]string{"Idempotency-Key": strings.Repeat("k", 300)})
		if r.Status != 200 {
			t.Fatalf("GET with an invalid key: %d %s", r.Status, r.Body)
		}
	})
}
