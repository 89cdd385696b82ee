package conformance

import (
	"context"
	"database/sql"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/conformance/harness"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
)

// Idempotency of an operation that runs in phases (the test clock's advance, the one
// operation that calls out of the process today): a server killed (SIGKILL) at every phase
// boundary leaves a started key, and one retry on a new server resumes from the key's
// recovery point: the clock moves once, the due work runs once, and the retry's answer is
// stored and replayed.

const pauseLock = 424242

// phasePause installs a trigger that makes the server's statement matching when wait for an
// advisory lock the test holds, so the request stops right before that statement commits.
// It returns the connection holding the lock.
func phasePause(t *testing.T, db *sqlx.DB, table, events, when string) *sql.Conn {
	t.Helper()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, pauseLock); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE OR REPLACE FUNCTION conf_pause() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN PERFORM pg_advisory_xact_lock(` + strconv.Itoa(pauseLock) + `); RETURN NEW; END $$`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TRIGGER conf_pause BEFORE ` + events + ` ON ` + table +
		` FOR EACH ROW WHEN (` + when + `) EXECUTE FUNCTION conf_pause()`); err != nil {
		t.Fatal(err)
	}
	return conn
}

// phaseWaitPaused waits until a server statement waits at the pause.
func phaseWaitPaused(t *testing.T, db *sqlx.DB) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		var n int
		if err := db.Get(&n, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
			AND wait_event_type = 'Lock' AND wait_event = 'advisory'`); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the request never reached the pause")
}

// phaseKill kills the server, ends the database sessions it left (a paused statement that
// runs without a transaction would otherwise commit once the pause ends), and removes the
// pause.
func phaseKill(t *testing.T, s *harness.Target, db *sqlx.DB, pause *sql.Conn, table string) {
	t.Helper()
	s.Kill()
	var pid int
	if err := pause.QueryRowContext(context.Background(), `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid() AND pid <> $1 AND backend_type = 'client backend'`, pid); err != nil {
		t.Fatal(err)
	}
	if _, err := pause.ExecContext(context.Background(), `SELECT pg_advisory_unlock($1)`, pauseLock); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`DROP TRIGGER conf_pause ON ` + table); err != nil {
		t.Fatal(err)
	}
}

func TestIdempotencyPhasesCrashes(t *testing.T) {
	t.Parallel()
	const step = 2 * 86400 // two days: the session below expires within it
	cases := []struct {
		name, table, events, when string
	}{
		// Phase 1 (the key recorded as started) committed; killed as the target is recorded.
		{"after the key was started", "idempotency_keys", "UPDATE", "NEW.status IS NULL AND NEW.recovery_point IS DISTINCT FROM OLD.recovery_point"},
		// The target recorded; killed as the advance claims the clock.
		{"after the target was recorded", "test_clocks", "INSERT OR UPDATE", "true"},
		// The clock moved and the due work is done; killed as the response is stored.
		{"after the clock moved", "idempotency_keys", "UPDATE", "NEW.status IS NOT NULL AND OLD.status IS NULL"},
	}
	for i, c := range cases {
		harness.Rule(t, "D4", "a keyed clock advance killed (SIGKILL) "+c.name+" is resumed by one retry: the clock moves once and the due work runs once", func(t *testing.T) {
			t.Parallel()
			first, db := idemLone(t, "idem-phases-"+strconv.Itoa(i), nil)
			m := newDashMerchantAt(t, first, true).Merchant
			ctx := context.Background()
			// A known starting time: the clock frozen at `from` by an unkeyed advance.
			from := time.Now().Add(time.Hour).Unix()
			if r, err := m.Test.AdvanceTestClockWithResponse(ctx, nil, api.TestClockAdvance{To: ptr(from)}); err != nil || r.StatusCode() != 200 {
				t.Fatalf("freeze the clock: %v", err)
			}
			if r := rawAt(t, first.BaseURL, http.MethodPost, idemSessions, m.TestKey, idemBody(1500), nil); r.Status != 200 {
				t.Fatalf("session: %d %s", r.Status, r.Body)
			}
			pause := phasePause(t, db, c.table, c.events, c.when)
			k := idemKey()
			body := `{"seconds":` + strconv.Itoa(step) + `}`
			pending := idemSendPath(first.BaseURL, "/v1/test_helpers/clock/advance", m.TestKey, k, body)
			phaseWaitPaused(t, db)
			phaseKill(t, first, db, pause, c.table)
			if r, ok := <-pending; ok {
				t.Fatalf("the killed server answered: %d %s", r.Status, r.Body)
			}

			second, err := first.Sibling(ctx, "idem-phases-"+strconv.Itoa(i)+"-2", harness.Options{Env: hookServerEnv})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(second.Stop)
			retry := rawAt(t, second.BaseURL, http.MethodPost, "/v1/test_helpers/clock/advance", m.TestKey, body, map[string]string{"Idempotency-Key": k})
			if retry.Status != 200 || retry.Header.Get("Idempotent-Replayed") != "" {
				t.Fatalf("retry: %d replayed=%q %s", retry.Status, retry.Header.Get("Idempotent-Replayed"), retry.Body)
			}
			var frozen int64
			if err := db.Get(&frozen, `SELECT extract(epoch FROM frozen_time)::bigint FROM test_clocks WHERE merchant_id = $1`, m.ID); err != nil {
				t.Fatal(err)
			}
			if frozen != from+step {
				t.Fatalf("clock at %d, want %d (moved once by %d from %d)", frozen, from+step, step, from)
			}
			var expired int
			if err := db.Get(&expired, `SELECT count(*) FROM events WHERE merchant_id = $1 AND type = 'checkout.session.expired'`, m.ID); err != nil {
				t.Fatal(err)
			}
			if expired != 1 {
				t.Fatalf("%d checkout.session.expired events, want 1", expired)
			}
			wantReplay(t, retry, rawAt(t, second.BaseURL, http.MethodPost, "/v1/test_helpers/clock/advance", m.TestKey, body, map[string]string{"Idempotency-Key": k}))
		})
	}
}
