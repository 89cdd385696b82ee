package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/conformance/harness"
	capi "github.com/kassa-pay/kassa/openapi/gen/checkoutapi"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
)

// Test clock advances of thousands of due items, cut by SIGKILL and SIGTERM (D12). Each case
// runs a `kassa serve` of its own on a database of its own (it kills the process and reads
// the database to stall or measure the work), so they are skipped against an external target.

const (
	clockPath = "/v1/test_helpers/clock/advance"
	twoYears  = int64(63_072_000)
)

// clockLone starts a lone server for clock cases: no rate limit in the way of seeding, and the
// given advance wait (KASSA_TEST_CLOCK_WAIT; "" keeps the default).
func clockLone(t *testing.T, name, wait string) (*harness.Target, *sqlx.DB, *Merchant) {
	t.Helper()
	env := map[string]string{"KASSA_RATE_TEST": "100000", "KASSA_RATE_LIVE": "100000", "KASSA_CHECKOUT_RATE_PER_IP": "0"}
	if wait != "" {
		env["KASSA_TEST_CLOCK_WAIT"] = wait
	}
	s, db := idemLone(t, name, env)
	return s, db, newDashMerchantAt(t, s, true).Merchant
}

// clockSeedSessions creates n test sessions on the server of c, eight at a time.
func clockSeedSessions(t *testing.T, c *api.ClientWithResponses, n int) []api.CheckoutSession {
	t.Helper()
	out := make([]api.CheckoutSession, n)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	next := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				resp, err := c.CreateCheckoutSessionWithResponse(context.Background(), nil, sessionBody())
				switch {
				case err != nil:
					errs <- err
				case resp.JSON200 == nil:
					errs <- fmt.Errorf("create session: %d %s", resp.StatusCode(), resp.Body)
				default:
					out[i] = *resp.JSON200
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return out
}

// clockSeedSEPA creates n sessions on srv and pays each by SEPA debit (processing; it settles
// two minutes later on the clock).
func clockSeedSEPA(t *testing.T, srv *harness.Target, m *Merchant, n int) {
	t.Helper()
	sessions := clockSeedSessions(t, m.Test, n)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range sessions {
		s := sessions[i]
		wg.Go(func() {
			c, err := capi.NewClientWithResponses(srv.CheckoutURL, capi.WithHTTPClient(transport.Client()),
				capi.WithRequestEditorFn(capi.RequestEditorFn(bearer(s.ClientSecret))))
			if err != nil {
				errs <- err
				return
			}
			resp, err := c.ConfirmBuyerSessionWithResponse(context.Background(), s.Id, paySEPA(payIBANOK))
			if err != nil {
				errs <- err
			} else if resp.StatusCode() != 200 {
				errs <- fmt.Errorf("confirm: %d %s", resp.StatusCode(), resp.Body)
			}
		})
		if i%8 == 7 {
			wg.Wait()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// clockPostAt posts an advance to srv (key "" sends no Idempotency-Key).
func clockPostAt(t *testing.T, srv *harness.Target, m *Merchant, body, key string) Raw {
	t.Helper()
	h := map[string]string{}
	if key != "" {
		h["Idempotency-Key"] = key
	}
	return rawAt(t, srv.BaseURL, http.MethodPost, clockPath, m.TestKey, body, h)
}

// clockOf decodes a test clock answer.
func clockOf(t *testing.T, r Raw) api.TestClock {
	t.Helper()
	var c api.TestClock
	if err := json.Unmarshal(r.Body, &c); err != nil || c.Object != "test_clock" {
		t.Fatalf("no clock in %d %s", r.Status, r.Body)
	}
	return c
}

// clockWaitReady polls GET until the clock is ready and returns it.
func clockWaitReady(t *testing.T, c *api.ClientWithResponses, within time.Duration) api.TestClock {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		g := clockGet(t, c)
		if g.Status == "ready" {
			if g.AdvancingTo != nil {
				t.Fatalf("a ready clock with advancing_to: %+v", g)
			}
			return g
		}
		if g.AdvancingTo == nil {
			t.Fatalf("an advancing clock without advancing_to: %+v", g)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the clock is still advancing after %v: %+v", within, g)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// clockCount counts rows of the merchant's test environment.
func clockCount(t *testing.T, db *sqlx.DB, query, merchant string) int {
	t.Helper()
	var n int
	if err := db.Get(&n, query, merchant); err != nil {
		t.Fatal(err)
	}
	return n
}

const (
	clockOpenSQL    = `SELECT count(*) FROM checkout_sessions WHERE merchant_id = $1 AND environment = 'test' AND status = 'open'`
	clockExpiredSQL = `SELECT count(*) FROM checkout_sessions WHERE merchant_id = $1 AND environment = 'test' AND status = 'expired'`
	clockEventsSQL  = `SELECT count(*) FROM events WHERE merchant_id = $1 AND environment = 'test' AND type = 'checkout.session.expired'`
	clockSettledSQL = `SELECT count(*) FROM payments WHERE merchant_id = $1 AND environment = 'test' AND status = 'succeeded'`
)

// clockHoldSession locks one session row until release, so the sweep skips it and an advance
// cannot finish: the advance is then stalled with the rest of its work done.
func clockHoldSession(t *testing.T, db *sqlx.DB, merchant, id string) (release func()) {
	t.Helper()
	tx, err := db.Beginx()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`SELECT 1 FROM checkout_sessions WHERE merchant_id = $1 AND environment = 'test' AND id = $2 FOR UPDATE`, merchant, id); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() { once.Do(func() { _ = tx.Rollback() }) }
	t.Cleanup(release)
	return release
}

// clockWaitExpired waits until at least n of the merchant's sessions are expired.
func clockWaitExpired(t *testing.T, db *sqlx.DB, merchant string, n int) {
	t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	for clockCount(t, db, clockExpiredSQL, merchant) < n {
		if time.Now().After(deadline) {
			t.Fatalf("fewer than %d sessions expired after 45 s", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// clockWantExactlyOnce checks that every session expired once, with one event each.
func clockWantExactlyOnce(t *testing.T, db *sqlx.DB, merchant string, sessions int) {
	t.Helper()
	if open := clockCount(t, db, clockOpenSQL, merchant); open != 0 {
		t.Errorf("%d sessions still open", open)
	}
	if n := clockCount(t, db, clockExpiredSQL, merchant); n != sessions {
		t.Errorf("%d sessions expired, want %d", n, sessions)
	}
	if n := clockCount(t, db, clockEventsSQL, merchant); n != sessions {
		t.Errorf("%d checkout.session.expired events, want %d (exactly one per session)", n, sessions)
	}
}

func TestClockAdvances(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "D12", "a keyed two-year advance over thousands of due sessions and SEPA settlements completes in time order, and its key replays the answer", func(t *testing.T) {
		t.Parallel()
		srv, db, m := clockLone(t, "clock-two-years", "")
		clockFreeze(t, m.Test)
		// Ten waves of sessions an hour apart (ten expiry times), then SEPA debits that settle
		// before the first expiry: the advance switches between the two sweeps and runs each
		// in many batches.
		const waves, perWave, sepa = 10, 250, 200
		for w := range waves {
			clockSeedSessions(t, m.Test, perWave)
			if w == waves-1 {
				clockSeedSEPA(t, srv, m, sepa)
			} else {
				clockAdvance(t, m.Test, 3600)
			}
		}
		before := clockGet(t, m.Test)
		key := idemKey()
		body := fmt.Sprintf(`{"seconds": %d}`, twoYears)
		start := time.Now()
		r := clockPostAt(t, srv, m, body, key)
		took := time.Since(start)
		c := clockOf(t, r)
		switch {
		case r.Status == 200 && c.Status == "ready":
		case r.Status == 202 && c.Status == "advancing":
			c = clockWaitReady(t, m.Test, 2*time.Minute)
		default:
			t.Fatalf("advance: %d %s", r.Status, r.Body)
		}
		t.Logf("two-year advance over %d sessions and %d settlements: answered %d after %v", waves*perWave+sepa, sepa, r.Status, took)
		if c.Now != before.Now+twoYears || c.FrozenTime == nil || *c.FrozenTime != c.Now {
			t.Fatalf("clock %+v, want %d", c, before.Now+twoYears)
		}
		// Every session that was open expired once; every SEPA debit settled.
		clockWantExactlyOnce(t, db, m.ID, waves*perWave)
		if n := clockCount(t, db, clockSettledSQL, m.ID); n != sepa {
			t.Errorf("%d payments settled, want %d", n, sepa)
		}
		// Time order across every batch: the events' times never go back in outbox order.
		var created []time.Time
		if err := db.Select(&created, `SELECT created FROM events WHERE merchant_id = $1 AND environment = 'test' ORDER BY seq`, m.ID); err != nil {
			t.Fatal(err)
		}
		for i := 1; i < len(created); i++ {
			if created[i].Before(created[i-1]) {
				t.Fatalf("event %d of %d is stamped %v, before the one written ahead of it (%v)", i, len(created), created[i], created[i-1])
			}
		}
		// The key replays the first answer.
		again := clockPostAt(t, srv, m, body, key)
		if again.Header.Get("Idempotent-Replayed") != "true" || again.Status != r.Status || compactJSON(t, again.Body) != compactJSON(t, r.Body) {
			t.Fatalf("replay: %d replayed=%q %s, first %d %s", again.Status, again.Header.Get("Idempotent-Replayed"), again.Body, r.Status, r.Body)
		}
		if g := clockGet(t, m.Test); g.Now != c.Now {
			t.Fatalf("the replay moved the clock: %d → %d", c.Now, g.Now)
		}
	})

	harness.Rule(t, "D12", "an advance not done within the wait answers 202 advancing and is observable until done; meanwhile another target gets 409 clock_advancing at once", func(t *testing.T) {
		t.Parallel()
		srv, db, m := clockLone(t, "clock-202", "300ms")
		from := clockFreeze(t, m.Test)
		sessions := clockSeedSessions(t, m.Test, 500)
		release := clockHoldSession(t, db, m.ID, sessions[250].Id)
		r := clockPostAt(t, srv, m, `{"seconds": 172800}`, "")
		c := clockOf(t, r)
		target := from + 172800
		if r.Status != 202 || c.Status != "advancing" || c.AdvancingTo == nil || *c.AdvancingTo != target ||
			c.Now != from || c.FrozenTime == nil || *c.FrozenTime != from {
			t.Fatalf("advance: %d %s", r.Status, r.Body)
		}
		g := clockGet(t, m.Test)
		if g.Status != "advancing" || g.AdvancingTo == nil || *g.AdvancingTo != target || g.Now != from {
			t.Fatalf("GET while advancing: %+v", g)
		}
		start := time.Now()
		other := clockPostAt(t, srv, m, `{"seconds": 60}`, "")
		wantError(t, other.Status, other.Header, other.Body, 409, "resource_conflict", "clock_advancing", "")
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("the conflict took %v", d)
		}
		// The same target joins the advance in progress.
		same := clockPostAt(t, srv, m, fmt.Sprintf(`{"to": %d}`, target), "")
		if sc := clockOf(t, same); same.Status != 202 || sc.Status != "advancing" {
			t.Fatalf("same target: %d %s", same.Status, same.Body)
		}
		// A session created meanwhile runs on the clock's time from before.
		if s := csCreate(t, m.Test, sessionBody()); s.Created != from {
			t.Fatalf("session created at %d while advancing, want %d", s.Created, from)
		}
		release()
		c = clockWaitReady(t, m.Test, 30*time.Second)
		if c.Now != target || c.FrozenTime == nil || *c.FrozenTime != target {
			t.Fatalf("clock %+v, want %d", c, target)
		}
		clockWantExactlyOnce(t, db, m.ID, 501)
	})

	harness.Rule(t, "D12", "a clock freed after a crash mid-advance: after a SIGKILL the next advance to the same time takes the work over at once and completes it", func(t *testing.T) {
		t.Parallel()
		first, db, m := clockLone(t, "clock-kill", "300ms")
		from := clockFreeze(t, m.Test)
		const n = 3000
		sessions := clockSeedSessions(t, m.Test, n)
		release := clockHoldSession(t, db, m.ID, sessions[n/2].Id)
		body := fmt.Sprintf(`{"seconds": %d}`, twoYears)
		if r := clockPostAt(t, first, m, body, ""); r.Status != 202 {
			t.Fatalf("advance: %d %s", r.Status, r.Body)
		}
		clockWaitExpired(t, db, m.ID, n-1) // stalled on the held session, the rest done
		// A live process holds it: another target is refused at once.
		other := clockPostAt(t, first, m, `{"seconds": 60}`, "")
		wantError(t, other.Status, other.Header, other.Body, 409, "resource_conflict", "clock_advancing", "")
		first.Kill()
		release()

		second, err := first.Sibling(context.Background(), "clock-kill-2", harness.Options{Env: map[string]string{
			"KASSA_RATE_TEST": "100000", "KASSA_SWEEP_INTERVAL": "1h"}}) // no resumer round in the way
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(second.Stop)
		c2 := clientAt(t, second.BaseURL, m.TestKey)
		if g := clockGet(t, c2); g.Status != "advancing" || g.Now != from {
			t.Fatalf("after the crash the clock is %+v, want still advancing from %d", g, from)
		}
		start := time.Now()
		r := clockPostAt(t, second, m, body, "")
		took := time.Since(start)
		if took > 10*time.Second {
			t.Fatalf("the next advance answered after %v", took)
		}
		c := clockOf(t, r)
		if r.Status == 202 {
			c = clockWaitReady(t, c2, 30*time.Second)
		} else if r.Status != 200 {
			t.Fatalf("the next advance: %d %s", r.Status, r.Body)
		}
		t.Logf("the advance after the crash answered %d after %v", r.Status, took)
		if c.Now != from+twoYears {
			t.Fatalf("clock %+v, want %d", c, from+twoYears)
		}
		clockWantExactlyOnce(t, db, m.ID, n)
	})

	harness.Rule(t, "D12", "a SIGTERM during an advance pauses it, says so in the log, and the next process resumes it without a request", func(t *testing.T) {
		t.Parallel()
		first, db, m := clockLone(t, "clock-term", "300ms")
		from := clockFreeze(t, m.Test)
		sessions := clockSeedSessions(t, m.Test, 1000)
		release := clockHoldSession(t, db, m.ID, sessions[500].Id)
		if r := clockPostAt(t, first, m, `{"seconds": 86400}`, ""); r.Status != 202 {
			t.Fatalf("advance: %d %s", r.Status, r.Body)
		}
		clockWaitExpired(t, db, m.ID, 999)
		first.Stop() // SIGTERM: graceful
		release()
		logText, err := os.ReadFile(first.LogPath)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(logText), "advance paused by the shutdown") {
			t.Fatalf("the shutdown cut the advance without a word; log:\n%s", logText)
		}
		second, err := first.Sibling(context.Background(), "clock-term-2", harness.Options{Env: map[string]string{
			"KASSA_RATE_TEST": "100000", "KASSA_SWEEP_INTERVAL": "200ms"}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(second.Stop)
		c := clockWaitReady(t, clientAt(t, second.BaseURL, m.TestKey), 30*time.Second)
		if c.Now != from+86400 {
			t.Fatalf("clock %+v, want %d", c, from+86400)
		}
		clockWantExactlyOnce(t, db, m.ID, 1000)
	})
}
