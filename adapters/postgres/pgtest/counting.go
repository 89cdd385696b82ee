package pgtest

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
)

// StatementLog records every statement a database handle sends: each is one round trip
// (with binary_parameters, as postgres.Open sets it, a parameterised statement is one).
type StatementLog struct {
	mu   sync.Mutex
	sent []string
}

func (l *StatementLog) add(query string) {
	q := strings.Join(strings.Fields(query), " ")
	if len(q) > 60 {
		q = q[:60] + "…"
	}
	l.mu.Lock()
	l.sent = append(l.sent, q)
	l.mu.Unlock()
}

// Since returns the statements sent after the first n (each its first 60 characters).
func (l *StatementLog) Since(n int) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.sent[n:]...)
}

// Count is the number of statements sent so far.
func (l *StatementLog) Count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.sent)
}

// NewCounted returns a fresh migrated database opened through a driver that records every
// statement in the returned log (BEGIN, COMMIT and ROLLBACK included).
func NewCounted(t testing.TB) (*sqlx.DB, *StatementLog) {
	t.Helper()
	ctx := context.Background()
	url, drop, err := CreateMigratedDatabase(ctx, AdminURL())
	if err != nil {
		t.Fatal(err)
	}
	plain, err := postgres.Open(ctx, url)
	if err != nil {
		drop()
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = plain.Close(); drop() })
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	conn, err := pq.NewConnector(url + sep + "binary_parameters=yes")
	if err != nil {
		t.Fatal(err)
	}
	log := &StatementLog{}
	db := sqlx.NewDb(sql.OpenDB(countingConnector{Connector: conn, log: log}), "postgres")
	db.SetMaxOpenConns(4)
	t.Cleanup(func() { _ = db.Close() })
	return db, log
}

type countingConnector struct {
	*pq.Connector
	log *StatementLog
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
	log   *StatementLog
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
	log   *StatementLog
}

func (t countingTx) Commit() error   { t.log.add("COMMIT"); return t.inner.Commit() }
func (t countingTx) Rollback() error { t.log.add("ROLLBACK"); return t.inner.Rollback() }

type countingStmt struct {
	driver.Stmt
	query string
	log   *StatementLog
}

func (s countingStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	s.log.add("EXECUTE " + s.query)
	return s.Stmt.(driver.StmtExecContext).ExecContext(ctx, args)
}
func (s countingStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	s.log.add("EXECUTE " + s.query)
	return s.Stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
}
