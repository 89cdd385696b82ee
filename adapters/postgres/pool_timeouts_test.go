package postgres_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
)

// poolWithTimeouts is a fresh database and a pool on it whose connections start with these
// timeouts (as Open's start with the unit of work's defaults).
func poolWithTimeouts(t *testing.T, statement, idle time.Duration) (*sqlx.DB, string) {
	t.Helper()
	ctx := context.Background()
	url, drop, err := pgtest.CreateDatabase(ctx, pgtest.AdminURL())
	if err != nil {
		t.Skipf("no database: %v", err)
	}
	t.Cleanup(drop)
	db, err := postgres.OpenWithTimeouts(ctx, url, statement, idle)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(2)
	t.Cleanup(func() { db.Close() })
	return db, url
}

func pqCode(err error) string {
	var pe *pq.Error
	if errors.As(err, &pe) {
		return string(pe.Code)
	}
	return ""
}

// Open gives every pooled connection the unit of work's timeouts in its startup packet, so a
// unit of work on it sets nothing (no statement between BEGIN and its own), and the settings
// are there on any connection, inside a transaction or not.
func TestOpenStartsConnectionsWithTheUnitOfWorkTimeouts(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	want := map[string]string{"statement_timeout": "20s", "idle_in_transaction_session_timeout": "20s"}
	for name, v := range want {
		var got string
		if err := db.Get(&got, "SHOW "+name); err != nil || got != v {
			t.Errorf("%s = %q, %v; want %q on a pooled connection", name, got, err, v)
		}
	}
	if postgres.SetsTimeouts(postgres.NewUnitOfWork(db)) {
		t.Error("a unit of work on Open's pool sets its timeouts itself (one round trip per transaction)")
	}
	if !postgres.SetsTimeouts(postgres.NewUnitOfWork(db).WithTimeouts(time.Second, time.Second)) {
		t.Error("a unit of work with other timeouts than the pool's must set them")
	}
	// A pool Open did not make (nobody knows its connections' settings) sets them each time.
	plain, err := sqlx.Open("postgres", pgtest.AdminURL())
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if !postgres.SetsTimeouts(postgres.NewUnitOfWork(plain)) {
		t.Error("a unit of work on a foreign pool must set its timeouts")
	}
}

// A URL that sets either timeout itself keeps it, and every unit of work then sets its own.
func TestOpenKeepsTimeoutsTheURLSets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, drop, err := pgtest.CreateDatabase(ctx, pgtest.AdminURL())
	if err != nil {
		t.Skipf("no database: %v", err)
	}
	t.Cleanup(drop)
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	db, err := postgres.Open(ctx, url+sep+"statement_timeout=1234")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var got string
	if err := db.Get(&got, "SHOW statement_timeout"); err != nil || got != "1234ms" {
		t.Fatalf("statement_timeout = %q, %v; want the URL's 1234ms", got, err)
	}
	uow := postgres.NewUnitOfWork(db)
	if !postgres.SetsTimeouts(uow) {
		t.Fatal("the pool's timeouts are the URL's: a unit of work must set its own")
	}
	err = uow.Do(ctx, func(ctx context.Context) error {
		return postgres.AmbientGet(ctx, &got, "SHOW statement_timeout")
	})
	if err != nil || got != "20s" {
		t.Fatalf("inside a unit of work statement_timeout = %q, %v; want 20s", got, err)
	}
}

// The statement timeout still bounds a statement of a unit of work, with no statement of the
// unit of work setting it: the pooled connection starts with it.
func TestUnitOfWorkStatementTimeoutOnPooledConnection(t *testing.T) {
	t.Parallel()
	db, _ := poolWithTimeouts(t, 200*time.Millisecond, 5*time.Second)
	uow := postgres.NewUnitOfWork(db).WithTimeouts(200*time.Millisecond, 5*time.Second)
	if postgres.SetsTimeouts(uow) {
		t.Fatal("the unit of work sets the timeouts its pool's connections start with")
	}
	start := time.Now()
	err := uow.Do(context.Background(), func(ctx context.Context) error {
		_, err := postgres.AmbientExec(ctx)(`SELECT pg_sleep(3)`)
		return err
	})
	if code := pqCode(err); code != "57014" {
		t.Fatalf("err = %v (code %q), want query_canceled (57014) by the statement timeout", err, code)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("the statement ran %v; the 200 ms timeout did not stop it", d)
	}
}

// The idle-in-transaction timeout still ends a unit of work whose client pauses too long between
// two statements (its locks go with it), and the pool goes on with a new connection.
func TestUnitOfWorkIdleTimeoutOnPooledConnection(t *testing.T) {
	t.Parallel()
	db, _ := poolWithTimeouts(t, 5*time.Second, 200*time.Millisecond)
	uowTable(t, db)
	uow := postgres.NewUnitOfWork(db).WithTimeouts(5*time.Second, 200*time.Millisecond)
	if postgres.SetsTimeouts(uow) {
		t.Fatal("the unit of work sets the timeouts its pool's connections start with")
	}
	err := uow.Do(context.Background(), func(ctx context.Context) error {
		exec := postgres.AmbientExec(ctx)
		if _, err := exec(`UPDATE uow_t SET v = 7 WHERE id = 1`); err != nil {
			return err
		}
		time.Sleep(time.Second) // the client stalls holding the row lock
		_, err := exec(`UPDATE uow_t SET v = 8 WHERE id = 2`)
		return err
	})
	if err == nil {
		t.Fatal("a unit of work idle for 1 s in its transaction committed; want it ended by the 200 ms idle timeout")
	}
	// The row lock went with the session, nothing was committed, and the pool still works.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var v int
	if err := db.GetContext(ctx, &v, `UPDATE uow_t SET v = v + 1 WHERE id = 1 RETURNING v`); err != nil || v != 1 {
		t.Fatalf("after the timeout: v = %d, %v; want 1 (the row unlocked, the update rolled back)", v, err)
	}
}

// Migrations run on a connection without the pool's timeouts (one may take longer than any
// request), and that connection goes back to the pool with them restored.
func TestMigrationsRunWithoutThePoolTimeouts(t *testing.T) {
	t.Parallel()
	db, _ := poolWithTimeouts(t, 200*time.Millisecond, 200*time.Millisecond)
	db.SetMaxOpenConns(1) // the migrations' connection is the one the check below gets
	ctx := context.Background()
	fsys := fstest.MapFS{"00001_slow.sql": migration("SELECT pg_sleep(0.6); CREATE TABLE slow (id int);")}
	if _, err := postgres.MigrateUpFS(ctx, db, fsys); err != nil {
		t.Fatalf("a migration longer than the pool's statement timeout: %v", err)
	}
	var got string
	if err := db.Get(&got, "SHOW statement_timeout"); err != nil || got != "200ms" {
		t.Fatalf("after the migrations statement_timeout = %q, %v; want the pool's 200ms back", got, err)
	}
	if err := db.Get(&got, "SHOW idle_in_transaction_session_timeout"); err != nil || got != "200ms" {
		t.Fatalf("after the migrations idle_in_transaction_session_timeout = %q, %v; want 200ms", got, err)
	}
	if _, err := db.Exec(`SELECT pg_sleep(0.6)`); pqCode(err) != "57014" {
		t.Fatalf("a slow statement on the pool after the migrations: %v, want the statement timeout", err)
	}
}

// A long run (a payout run, a backfill, an export) past the 20 s statement timeout asks for
// its own timeouts explicitly, on its unit of work (WithTimeouts): its statements may then run
// longer, only inside its transaction. The pool's connections keep theirs: the next unit of
// work on the same connection is bounded as before. The same run on the default unit of work
// is cut by the timeout.
func TestALongRunAsksForItsOwnTimeouts(t *testing.T) {
	t.Parallel()
	db, _ := poolWithTimeouts(t, 200*time.Millisecond, 200*time.Millisecond)
	db.SetMaxOpenConns(1) // one connection: every unit of work below runs on it
	ctx := context.Background()
	long := func(ctx context.Context) error {
		_, err := postgres.AmbientExec(ctx)(`SELECT pg_sleep(0.5)`)
		return err
	}
	short := postgres.NewUnitOfWork(db).WithTimeouts(200*time.Millisecond, 200*time.Millisecond) // the pool's, as in production
	if err := short.Do(ctx, long); pqCode(err) != "57014" {
		t.Fatalf("a 0.5 s statement on the default unit of work: %v, want the statement timeout (57014)", err)
	}
	if err := short.WithTimeouts(5*time.Second, 5*time.Second).Do(ctx, long); err != nil {
		t.Fatalf("the long run with its own timeouts: %v", err)
	}
	if err := short.Do(ctx, long); pqCode(err) != "57014" {
		t.Fatalf("after the long run, the connection's timeout: %v, want 57014 again", err)
	}
	// The typed unit of work of a module takes the same option.
	typed := postgres.Bind(short.WithTimeouts(5*time.Second, 5*time.Second), func(tx *postgres.Tx) *postgres.Tx { return tx })
	if err := typed.Do(ctx, func(ctx context.Context, _ *postgres.Tx) error { return long(ctx) }); err != nil {
		t.Fatalf("a typed long run: %v", err)
	}
}
