package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/conformance/harness"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
)

// Idempotency under crashes (D4, exactly once). Each case runs a `kassa serve` of its own on a
// database of its own (the cases hold table locks and kill the process), so they are skipped
// against an external target. The change a request makes and its stored response are
// committed by one transaction: a process killed at any point leaves both or neither, and no
// claim survives it.

// idemLone starts a lone server and opens its database; drop runs once the test's servers
// have ended.
func idemLone(t *testing.T, name string, env map[string]string) (*harness.Target, *sqlx.DB) {
	t.Helper()
	if !target.CanLaunchSiblings() {
		t.Skip("needs a server of its own on a database of its own, which the harness can only start for a target it started itself")
	}
	opt := map[string]string{}
	for k, v := range hookServerEnv {
		opt[k] = v
	}
	for k, v := range env {
		opt[k] = v
	}
	s, drop, err := target.Lone(context.Background(), name, harness.Options{Env: opt})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(drop) // runs last: after the servers below are stopped
	t.Cleanup(s.Stop)
	db, err := sqlx.Open("postgres", s.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return s, db
}

// idemHoldRecords lets idempotency records be read but not written until release: a request
// then stops between its change (done) and its stored response (waiting for the table lock).
func idemHoldRecords(t *testing.T, db *sqlx.DB) (release func()) {
	t.Helper()
	tx, err := db.Beginx()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`LOCK TABLE idempotency_keys IN EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() { once.Do(func() { _ = tx.Rollback() }) }
	t.Cleanup(release)
	return release
}

// idemWaitStored waits until a request is writing its stored response and waits for the lock.
func idemWaitStored(t *testing.T, db *sqlx.DB) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		var n int
		if err := db.Get(&n, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
			AND wait_event_type = 'Lock' AND query LIKE '%INSERT INTO idempotency_keys%'`); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no request reached its stored response")
}

// idemSend posts a session in the background with a plain client (the server may die under
// it); the outcome, if any, arrives on the channel.
func idemSend(base, secret, idem, body string) <-chan Raw {
	return idemSendPath(base, idemSessions, secret, idem, body)
}

// idemRetry retries until the key is no longer in use (the killed request's transaction ends
// when its database backend notices the dead connection).
func idemRetry(t *testing.T, base, secret, idem, body string) Raw {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		r := rawAt(t, base, http.MethodPost, idemSessions, secret, body, map[string]string{"Idempotency-Key": idem})
		if r.Status != http.StatusConflict || time.Now().After(deadline) {
			return r
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func idemSessionIDs(t *testing.T, c *api.ClientWithResponses) []string {
	t.Helper()
	resp, err := c.ListCheckoutSessionsWithResponse(context.Background(), &api.ListCheckoutSessionsParams{Limit: ptr(100)})
	if err != nil {
		t.Fatal(err)
	}
	if resp.JSON200 == nil {
		t.Fatalf("list sessions: %d %s", resp.StatusCode(), resp.Body)
	}
	var ids []string
	for _, s := range resp.JSON200.Data {
		ids = append(ids, s.Id)
	}
	return ids
}

func idemObjectID(t *testing.T, r Raw) string {
	t.Helper()
	var o struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(r.Body, &o); err != nil || o.ID == "" {
		t.Fatalf("no object in %d %s", r.Status, r.Body)
	}
	return o.ID
}

func TestIdempotencyCrashes(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "D4", "a server killed (SIGKILL) between a request's change and its stored response leaves neither; the retry with the same key executes once", func(t *testing.T) {
		t.Parallel()
		first, db := idemLone(t, "idem-crash-before", nil)
		m := newDashMerchantAt(t, first, true).Merchant
		k := idemKey()
		release := idemHoldRecords(t, db)
		pending := idemSend(first.BaseURL, m.TestKey, k, idemBody(3100))
		idemWaitStored(t, db)
		first.Kill()
		release()
		if r, ok := <-pending; ok {
			t.Fatalf("the killed server answered: %d %s", r.Status, r.Body)
		}

		second, err := first.Sibling(context.Background(), "idem-crash-before-2", harness.Options{Env: hookServerEnv})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(second.Stop)
		c := clientAt(t, second.BaseURL, m.TestKey)
		if ids := idemSessionIDs(t, c); len(ids) != 0 {
			t.Fatalf("the change of the killed request survived without its stored response: %v", ids)
		}
		r := idemRetry(t, second.BaseURL, m.TestKey, k, idemBody(3100))
		if r.Status != 200 || r.Header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("retry: %d replayed=%q %s", r.Status, r.Header.Get("Idempotent-Replayed"), r.Body)
		}
		wantReplay(t, r, rawAt(t, second.BaseURL, http.MethodPost, idemSessions, m.TestKey, idemBody(3100), map[string]string{"Idempotency-Key": k}))
		if ids := idemSessionIDs(t, c); len(ids) != 1 || ids[0] != idemObjectID(t, r) {
			t.Fatalf("sessions %v, want exactly the retry's", ids)
		}
	})

	harness.Rule(t, "D4", "a keyed product create killed (SIGKILL) between its change and its stored response leaves no product; the retry creates one", func(t *testing.T) {
		t.Parallel()
		first, db := idemLone(t, "idem-crash-product", nil)
		m := newDashMerchantAt(t, first, true).Merchant
		k := idemKey()
		body := `{"name":"Crash widget","price":{"currency":"eur","unit_amount":1200}}`
		release := idemHoldRecords(t, db)
		pending := idemSendPath(first.BaseURL, "/v1/products", m.TestKey, k, body)
		idemWaitStored(t, db)
		first.Kill()
		release()
		if r, ok := <-pending; ok {
			t.Fatalf("the killed server answered: %d %s", r.Status, r.Body)
		}
		products := func() int {
			var n int
			if err := db.Get(&n, `SELECT count(*) FROM products WHERE merchant_id = $1`, m.ID); err != nil {
				t.Fatal(err)
			}
			return n
		}
		if n := products(); n != 0 {
			t.Fatalf("%d products of the killed request survived without its stored response", n)
		}
		second, err := first.Sibling(context.Background(), "idem-crash-product-2", harness.Options{Env: hookServerEnv})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(second.Stop)
		r := rawAt(t, second.BaseURL, http.MethodPost, "/v1/products", m.TestKey, body, map[string]string{"Idempotency-Key": k})
		if r.Status != 200 || r.Header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("retry: %d %s", r.Status, r.Body)
		}
		wantReplay(t, r, rawAt(t, second.BaseURL, http.MethodPost, "/v1/products", m.TestKey, body, map[string]string{"Idempotency-Key": k}))
		if n := products(); n != 1 {
			t.Fatalf("%d products, want exactly the retry's", n)
		}
	})

	harness.Rule(t, "D4", "a server killed (SIGKILL) after a request committed, before its client read the response: the retry replays it", func(t *testing.T) {
		t.Parallel()
		first, db := idemLone(t, "idem-crash-after", nil)
		m := newDashMerchantAt(t, first, true).Merchant
		k := idemKey()
		// The request goes out on a bare connection whose answer is never read: to the client
		// it is lost, exactly as when the process dies after the commit.
		u, err := url.Parse(first.BaseURL)
		if err != nil {
			t.Fatal(err)
		}
		conn, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		body := idemBody(3200)
		fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nIdempotency-Key: %s\r\nContent-Length: %d\r\n\r\n%s",
			idemSessions, u.Host, m.TestKey, k, len(body), body)
		deadline := time.Now().Add(15 * time.Second)
		for {
			var n int
			if err := db.Get(&n, `SELECT count(*) FROM idempotency_keys WHERE key = $1`, k); err != nil {
				t.Fatal(err)
			}
			if n == 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the request never committed")
			}
			time.Sleep(10 * time.Millisecond)
		}
		first.Kill()

		second, err := first.Sibling(context.Background(), "idem-crash-after-2", harness.Options{Env: hookServerEnv})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(second.Stop)
		r := idemRetry(t, second.BaseURL, m.TestKey, k, body)
		if r.Status != 200 || r.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("retry after the commit: %d replayed=%q %s", r.Status, r.Header.Get("Idempotent-Replayed"), r.Body)
		}
		if ids := idemSessionIDs(t, clientAt(t, second.BaseURL, m.TestKey)); len(ids) != 1 || ids[0] != idemObjectID(t, r) {
			t.Fatalf("sessions %v, want exactly the replayed one", ids)
		}
	})

	harness.Rule(t, "D4", "advancing the test clock does not let a same-key retry run beside a request still executing", func(t *testing.T) {
		t.Parallel()
		s, db := idemLone(t, "idem-clock", nil)
		m := newDashMerchantAt(t, s, true).Merchant
		k := idemKey()
		release := idemHoldRecords(t, db)
		pending := idemSend(s.BaseURL, m.TestKey, k, idemBody(3300))
		idemWaitStored(t, db)
		for _, secs := range []int64{3600, 86400} { // an hour, then past the retention
			adv, err := m.Test.AdvanceTestClockWithResponse(context.Background(), nil, api.TestClockAdvance{Seconds: ptr(secs)})
			if err != nil {
				t.Fatal(err)
			}
			if adv.StatusCode() != 200 {
				t.Fatalf("advance: %d %s", adv.StatusCode(), adv.Body)
			}
			r := rawAt(t, s.BaseURL, http.MethodPost, idemSessions, m.TestKey, idemBody(3300), map[string]string{"Idempotency-Key": k})
			wantError(t, r.Status, r.Header, r.Body, 409, "idempotency_error", "idempotency_key_in_use", "")
		}
		release()
		r, ok := <-pending
		if !ok || r.Status != 200 {
			t.Fatalf("the first request: %v %d %s", ok, r.Status, r.Body)
		}
		if ids := idemSessionIDs(t, m.Test); len(ids) != 1 || ids[0] != idemObjectID(t, r) {
			t.Fatalf("sessions %v, want exactly the first request's", ids)
		}
		// The clock moved more than 24 h while the first request was in flight: its key does
		// not expire on that clock, so the retry replays it instead of executing again.
		wantReplay(t, r, rawAt(t, s.BaseURL, http.MethodPost, idemSessions, m.TestKey, idemBody(3300), map[string]string{"Idempotency-Key": k}))
		if ids := idemSessionIDs(t, m.Test); len(ids) != 1 {
			t.Fatalf("sessions %v after the retry, want one", ids)
		}
	})

	harness.Rule(t, "D4", "with a pool of 2 connections, 16 concurrent keyed POSTs (sessions, products, test clock advances) all succeed", func(t *testing.T) {
		t.Parallel()
		s, _ := idemLone(t, "idem-pool", map[string]string{"KASSA_DB_MAX_CONNS": "2"})
		const merchants = 4
		var ms []*Merchant
		for range merchants {
			ms = append(ms, newDashMerchantAt(t, s, true).Merchant)
		}
		type call struct{ path, secret, body string }
		var calls []call
		for i, m := range ms {
			calls = append(calls,
				call{idemSessions, m.TestKey, idemBody(2500 + i)},
				call{"/v1/products", m.TestKey, `{"name":"Pool widget"}`},
				call{"/v1/test_helpers/clock/advance", m.TestKey, `{"seconds":60}`},
				call{idemSessions, m.LiveKey, idemBody(2600 + i)})
		}
		res := make([]Raw, len(calls))
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i, c := range calls {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				r, ok := <-idemSendPath(s.BaseURL, c.path, c.secret, idemKey(), c.body)
				if !ok {
					r = Raw{Status: -1}
				}
				res[i] = r
			}()
		}
		close(start)
		wg.Wait()
		for i, r := range res {
			if r.Status != 200 {
				t.Errorf("%s: %d %s", calls[i].path, r.Status, bytes.TrimSpace(r.Body))
			}
		}
	})
}

// idemSendPath posts to path in the background; the channel is closed without a value when
// no answer came.
func idemSendPath(base, path, secret, idem, body string) <-chan Raw {
	out := make(chan Raw, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+secret)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", idem)
		resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
		if err != nil {
			close(out)
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		out <- Raw{Status: resp.StatusCode, Header: resp.Header, Body: b}
	}()
	return out
}
