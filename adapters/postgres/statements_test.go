package postgres_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"strings"
	"sync"
	"testing"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
)

// statementLog records every statement a database handle sends: each is one round trip
// (with binary_parameters, as postgres.Open sets it, a parameterised statement is one).
type statementLog struct {
	mu   sync.Mutex
	sent []string
}

func (l *statementLog) add(query string) {
	q := strings.Join(strings.Fields(query), " ")
	if len(q) > 60 {
		q = q[:60] + "…"
	}
	l.mu.Lock()
	l.sent = append(l.sent, q)
	l.mu.Unlock()
}

// since returns the statements sent after the first n.
func (l *statementLog) since(n int) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.sent[n:]...)
}

func (l *statementLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.sent)
}

// countedDB returns a fresh migrated database opened through a driver that records every
// statement in the returned log (BEGIN, COMMIT and ROLLBACK included).
func countedDB(t *testing.T) (*sqlx.DB, *statementLog) {
	t.Helper()
	ctx := context.Background()
	url, drop, err := pgtest.CreateDatabase(ctx, pgtest.AdminURL())
	if err != nil {
		t.Fatal(err)
	}
	plain, err := postgres.Open(ctx, url)
	if err != nil {
		drop()
		t.Fatal(err)
	}
	t.Cleanup(func() { plain.Close(); drop() })
	if _, err := postgres.MigrateUp(ctx, plain); err != nil {
		t.Fatal(err)
	}
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	conn, err := pq.NewConnector(url + sep + "binary_parameters=yes")
	if err != nil {
		t.Fatal(err)
	}
	log := &statementLog{}
	db := sqlx.NewDb(sql.OpenDB(countingConnector{Connector: conn, log: log}), "postgres")
	db.SetMaxOpenConns(4)
	t.Cleanup(func() { db.Close() })
	return db, log
}

type countingConnector struct {
	*pq.Connector
	log *statementLog
}

func (c countingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	cn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return countingConn{inner: cn, log: c.log}, nil
}

// countingConn is lib/pq's connection, recording each statement it sends.
type countingConn struct {
	inner driver.Conn
	log   *statementLog
}

func (c countingConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}
func (c countingConn) Close() error              { return c.inner.Close() }
func (c countingConn) Begin() (driver.Tx, error) { return nil, driver.ErrSkip } // BeginTx is used
func (c countingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	c.log.add("BEGIN")
	tx, err := c.inner.(driver.ConnBeginTx).BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return countingTx{inner: tx, log: c.log}, nil
}
func (c countingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	c.log.add("PREPARE " + query)
	st, err := c.inner.(driver.ConnPrepareContext).PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	return countingStmt{Stmt: st, query: query, log: c.log}, nil
}
func (c countingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	c.log.add(query)
	return c.inner.(driver.ExecerContext).ExecContext(ctx, query, args)
}
func (c countingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	c.log.add(query)
	return c.inner.(driver.QueryerContext).QueryContext(ctx, query, args)
}
func (c countingConn) CheckNamedValue(nv *driver.NamedValue) error {
	return c.inner.(driver.NamedValueChecker).CheckNamedValue(nv)
}
func (c countingConn) ResetSession(ctx context.Context) error {
	return c.inner.(driver.SessionResetter).ResetSession(ctx)
}
func (c countingConn) IsValid() bool { return c.inner.(driver.Validator).IsValid() }
func (c countingConn) Ping(ctx context.Context) error {
	return c.inner.(driver.Pinger).Ping(ctx)
}

type countingTx struct {
	inner driver.Tx
	log   *statementLog
}

func (t countingTx) Commit() error   { t.log.add("COMMIT"); return t.inner.Commit() }
func (t countingTx) Rollback() error { t.log.add("ROLLBACK"); return t.inner.Rollback() }

type countingStmt struct {
	driver.Stmt
	query string
	log   *statementLog
}

func (s countingStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	s.log.add("EXECUTE " + s.query)
	return s.Stmt.(driver.StmtExecContext).ExecContext(ctx, args)
}
func (s countingStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	s.log.add("EXECUTE " + s.query)
	return s.Stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
}

// The statements of one card confirmation (Confirm: both units of work, the reads around
// them and the sandbox's journal), logged so that a change of the count shows. Every
// repository call is one statement, sent where it is called (no write is buffered):
//
//	 1 the buyer's session read (buyerSession)
//	 2 the charge protocol's begin: BEGIN
//	 3 its timeouts (this test's pool does not start with them; a pool from Open does)
//	 4 the session, FOR UPDATE
//	 5 the session's UPDATE (the charge in flight, by its owner)
//	 6 the attempt's INSERT
//	 7 COMMIT
//	 8 the sandbox's journal
//	 9 the protocol's apply: BEGIN
//	10 its timeouts
//	11 the session, FOR UPDATE
//	12 the attempt, FOR UPDATE
//	13 the payment's INSERT
//	14 the ledger: its balance rows, FOR UPDATE in sorted order (they exist after the first
//	   payment of the currency; before it, an INSERT … ON CONFLICT DO NOTHING and the lock again)
//	15 the ledger: the balance transaction's INSERT
//	16 the ledger: the release queue's INSERT (card funds are pending for two days)
//	17 the ledger: the postings' INSERT
//	18 the ledger: the balance rows' UPDATE, each row once
//	19 the attempt's UPDATE (applied)
//	20 payment_intent.succeeded, queued for the fan-out in the same statement
//	21 the receipt in mail_outbox
//	22 the session's UPDATE (complete)
//	23 checkout.session.completed, queued likewise
//	24 COMMIT
//
// (7 with the optimistic units and the write-behind buffer this replaced; docs/performance.md.)
func TestConfirmationStatements(t *testing.T) {
	t.Parallel()
	db, log := countedDB(t)
	scope := pgtest.Merchant(t, db)
	svc := paymentsOn(db, fixedClocks{payNow})
	s := createSession(t, svc, scope)
	// A first payment warms the prepared statements of the hot reads up (once per connection).
	mustPay(t, svc, createSession(t, svc, scope), visaDE)
	before := log.count()
	mustPay(t, svc, s, visaDE)
	sent := log.since(before)
	for i, q := range sent {
		t.Logf("%2d %s", i+1, q)
	}
	t.Logf("one confirmation: %d statements", len(sent))
	want := []string{"EXECUTE SELECT", "BEGIN", "SELECT set_config", "SELECT", "UPDATE checkout_sessions",
		"INSERT INTO charge_attempts", "COMMIT", "WITH ins AS ( INSERT INTO sandbox_charges",
		"BEGIN", "SELECT set_config", "SELECT", "SELECT", "INSERT INTO payments",
		"INSERT INTO payment_volume_days", "UPDATE charge_attempts",
		"WITH written AS (INSERT INTO events", "INSERT INTO mail_outbox", "UPDATE checkout_sessions",
		"WITH written AS (INSERT INTO events",
		"SELECT b.merchant_id", "INSERT INTO balance_transactions", "INSERT INTO ledger_releases", "INSERT INTO ledger_postings",
		"UPDATE ledger_balances", "COMMIT"}
	if len(sent) != len(want) {
		t.Fatalf("%d statements, want %d", len(sent), len(want))
	}
	for i, q := range sent {
		if !strings.HasPrefix(q, want[i]) {
			t.Errorf("statement %d: %s, want %s…", i+1, q, want[i])
		}
	}
	// The locks are taken in code order: the session (the payable), then the attempt.
	if !strings.Contains(sent[3], "checkout_mode") || !strings.Contains(sent[10], "checkout_mode") ||
		!strings.Contains(sent[11], "idempotency_key") {
		t.Errorf("lock order: %s; %s; %s", sent[3], sent[10], sent[11])
	}
}
