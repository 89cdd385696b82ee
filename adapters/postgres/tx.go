package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/kassa-pay/kassa/adapters/wire"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// Transactions are explicit.
//
// A unit of work (UnitOfWork.Do) opens one transaction and hands it to its function as typed
// repositories (Tx, through Bind). Only those repositories run on it. A store (SessionStore,
// CatalogStore, …) runs on the pool: called inside a unit of work, it does not join the
// transaction, it takes a connection of its own and sees only what is committed. So a reader
// of fn sees from the code which statements belong to the transaction: the ones made through
// tx. A store bound to a transaction on purpose (Tx.Catalog) is one of tx's repositories.
//
// The context Do hands fn carries the transaction for one purpose only: a Do called with it
// (a use case's unit of work inside a keyed request's, which the idempotency gate opens) joins
// it within a savepoint instead of opening a second transaction. Nothing else reads it. The
// context key is unexported: nothing outside this package can see or forge the transaction.
//
// The same context carries ports.WithinTransaction's mark, which every call that leaves the
// process checks (ports.OutsideTransaction): a processor call, a mail or a webhook inside a
// unit of work answers ports.ErrInsideTransaction.
//
// Every statement runs where it is called: a repository's Save or Insert sends its statement
// at once and answers its outcome (a missed row, the module's sentinel for a unique
// violation) on the spot.

type ambientKey struct{}

// ambient is the transaction of a unit of work and its bookkeeping. It is used by one
// goroutine at a time, like the *sqlx.Tx it holds.
type ambient struct {
	tx         *sqlx.Tx
	savepoints int   // savepoints opened so far, for unique names
	retry      error // the first serialization failure or deadlock seen, if any
}

// ambientOf returns the transaction a Do called with ctx joins (nil: none).
func ambientOf(ctx context.Context) *ambient {
	a, _ := ctx.Value(ambientKey{}).(*ambient)
	return a
}

// note remembers a serialization failure or deadlock reported by any statement of the unit of
// work, even when the caller turns the error into something else (an HTTP 500): the whole unit
// then rolls back and runs again (see UnitOfWork.Do).
func (a *ambient) note(err error) error {
	if a.retry == nil && retryable(err) {
		a.retry = err
	}
	return err
}

// nested runs fn inside a savepoint of the transaction: when fn fails, what it wrote is undone
// and the transaction stays usable, exactly as if fn had run in a transaction of its own that
// rolled back.
func (a *ambient) nested(ctx context.Context, fn func() error) (err error) {
	a.savepoints++
	name := fmt.Sprintf("kassa_%d", a.savepoints)
	if _, err := a.tx.ExecContext(ctx, "SAVEPOINT "+name); err != nil {
		return a.note(err)
	}
	defer func() {
		if p := recover(); p != nil {
			_, _ = a.tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT "+name)
			panic(p)
		}
	}()
	if err = fn(); err != nil {
		_ = a.note(err) // remembered for the retry; err itself is returned below
		if _, rerr := a.tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT "+name); rerr != nil {
			return errors.Join(err, a.note(rerr))
		}
		return err
	}
	if _, err := a.tx.ExecContext(ctx, "RELEASE SAVEPOINT "+name); err != nil {
		return a.note(err)
	}
	return nil
}

// handle is the database handle of a store: the pool, or (a store bound to a transaction as a
// repository of Tx: bound) that transaction. The context never decides.
type handle struct {
	db *sqlx.DB
	a  *ambient // set: the store is bound to this transaction
}

func wrap(db *sqlx.DB) handle { return handle{db: db} }

// bound returns the handle on the transaction a.
func bound(a *ambient) handle { return handle{a: a} }

func (h handle) on() sqlx.ExtContext {
	if h.a != nil {
		return h.a.tx
	}
	return h.db
}

func (h handle) noted(err error) error {
	if h.a != nil && err != nil {
		_ = h.a.note(err) // remembered for the retry; err itself is returned
	}
	return err
}

// ExecContext runs a statement that returns no rows.
func (h handle) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	res, err := h.on().ExecContext(ctx, query, args...)
	return res, h.noted(err)
}

// QueryContext runs a query.
func (h handle) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	rows, err := h.on().QueryContext(ctx, query, args...)
	return rows, h.noted(err)
}

// QueryxContext runs a query with sqlx's rows.
func (h handle) QueryxContext(ctx context.Context, query string, args ...any) (*sqlx.Rows, error) {
	rows, err := h.on().QueryxContext(ctx, query, args...)
	return rows, h.noted(err)
}

// QueryRowxContext runs a query that returns at most one row.
func (h handle) QueryRowxContext(ctx context.Context, query string, args ...any) *sqlx.Row {
	return h.on().QueryRowxContext(ctx, query, args...)
}

// GetContext scans the one row of a query into dest.
func (h handle) GetContext(ctx context.Context, dest any, query string, args ...any) error {
	return h.noted(sqlx.GetContext(ctx, h.on(), dest, query, args...))
}

// SelectContext scans the rows of a query into dest.
func (h handle) SelectContext(ctx context.Context, dest any, query string, args ...any) error {
	return h.noted(sqlx.SelectContext(ctx, h.on(), dest, query, args...))
}

// BeginTxx starts a transaction on the pool; inTx is what stores use (on a bound handle it
// opens a savepoint instead).
func (h handle) BeginTxx(ctx context.Context, opts *sql.TxOptions) (*sqlx.Tx, error) {
	if h.a != nil {
		return nil, errors.New("postgres: a transaction inside a bound store's transaction")
	}
	return h.db.BeginTxx(ctx, opts)
}

// beginner is what inTx needs of a database: the store handle or a bare *sqlx.DB.
type beginner interface {
	BeginTxx(ctx context.Context, opts *sql.TxOptions) (*sqlx.Tx, error)
}

// inTx runs fn in one transaction: committed when fn returns nil, rolled back otherwise (and on
// panic). Every store method that changes state goes through it, together with its events.
// On a store bound to a transaction (a repository of Tx) it runs within a savepoint of that
// transaction instead (so a failing fn still undoes only its own writes), and the unit of work
// commits. The context never makes it join anything.
func inTx(ctx context.Context, db beginner, fn func(tx *sqlx.Tx) error) (err error) {
	if h, ok := db.(handle); ok && h.a != nil {
		return h.a.nested(ctx, func() error { return fn(h.a.tx) })
	}
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return err
	}
	defer rollbackUnlessDone(tx, &err)
	if err = fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// rollbackUnlessDone, deferred right after BeginTxx, rolls tx back when the function fails
// (*err set) or panics (the panic goes on).
func rollbackUnlessDone(tx *sqlx.Tx, err *error) {
	if p := recover(); p != nil {
		_ = tx.Rollback()
		panic(p)
	}
	if *err != nil {
		_ = tx.Rollback()
	}
}

// retryable reports a serialization failure (40001) or a deadlock (40P01): the transaction
// lost a race and running it again from the start is the documented remedy.
func retryable(err error) bool {
	var pe *pq.Error
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

// UnitOfWork implements ports.UnitOfWork on PostgreSQL (see "Transactions are explicit").
type UnitOfWork struct {
	db       *sqlx.DB
	attempts int
	// statementTimeout and idleTimeout bound every statement and every pause between two
	// statements of a unit of work on the server side, so a transaction whose client hangs
	// or vanishes cannot keep its locks (an idempotency key's among them) for long.
	statementTimeout, idleTimeout time.Duration
	// pool is what every connection of db starts with (Open sets the defaults above in the
	// startup packet). A transaction sets its own timeouts, one statement after BEGIN, only
	// when they differ from these or these are not known.
	pool sessionTimeouts
}

var _ ports.UnitOfWork = (*UnitOfWork)(nil)

// Defaults of NewUnitOfWork.
const (
	UnitOfWorkAttempts         = 5
	UnitOfWorkStatementTimeout = 20 * time.Second
	UnitOfWorkIdleTimeout      = 20 * time.Second
)

// NewUnitOfWork returns the unit of work on db: up to UnitOfWorkAttempts attempts, and the
// default statement and idle-in-transaction timeouts. On a pool from Open every connection
// already has them (sessionTimeouts), so a transaction costs BEGIN, its statements and
// COMMIT; on any other pool each transaction sets them first.
func NewUnitOfWork(db *sqlx.DB) *UnitOfWork {
	return &UnitOfWork{db: db, attempts: UnitOfWorkAttempts,
		statementTimeout: UnitOfWorkStatementTimeout, idleTimeout: UnitOfWorkIdleTimeout,
		pool: timeoutsOf(db)}
}

// WithTimeouts returns a copy of u whose transactions use these server-side timeouts: the way
// for a long run (a payout run, a backfill, an export) past the default 20 s. The timeouts are
// set for each of its transactions only (SET LOCAL), so the pool's connections keep the
// defaults. Prefer batches (each its own unit of work, resumable from the last one committed);
// use this for one statement that must run long, with a bound still (0 turns a timeout off:
// never on a request path). Bind(u.WithTimeouts(…), …) gives the typed form.
func (u *UnitOfWork) WithTimeouts(statement, idle time.Duration) *UnitOfWork {
	c := *u
	c.statementTimeout, c.idleTimeout = statement, idle
	return &c
}

// Do implements ports.UnitOfWork. Inside another unit of work (ctx carries its transaction) it
// joins it within a savepoint and commits nothing. Otherwise it runs fn in a new transaction,
// and when the transaction fails with a serialization failure or a deadlock, anywhere in fn
// and even if fn turned that error into another, it rolls back and runs fn again, up to
// UnitOfWorkAttempts times with a short random pause.
func (u *UnitOfWork) Do(ctx context.Context, fn func(ctx context.Context) error) error {
	if a := ambientOf(ctx); a != nil {
		return a.nested(ctx, func() error { return fn(ctx) })
	}
	for attempt := 1; ; attempt++ {
		err := u.once(ctx, fn)
		if err == nil || !retryable(err) || attempt >= u.attempts {
			return err
		}
		// 5–10 ms, then 10–20, 20–40, …: enough for the winner of the race to commit.
		base := time.Duration(5<<(attempt-1)) * time.Millisecond
		pause := time.NewTimer(base + rand.N(base)) //nolint:gosec // G404: jitter of a retry pause, not a secret
		select {
		case <-ctx.Done():
			pause.Stop()
			return err
		case <-pause.C:
		}
	}
}

func (u *UnitOfWork) once(ctx context.Context, fn func(ctx context.Context) error) (err error) {
	tx, err := u.db.BeginTxx(ctx, nil)
	if err != nil {
		return err
	}
	a := &ambient{tx: tx}
	defer rollbackUnlessDone(tx, &err)
	if u.setsTimeouts() {
		if _, err = tx.ExecContext(ctx, `SELECT set_config('statement_timeout', $1, true),
			set_config('idle_in_transaction_session_timeout', $2, true)`,
			msSetting(u.statementTimeout), msSetting(u.idleTimeout)); err != nil {
			return err
		}
	}
	err = fn(ports.WithinTransaction(context.WithValue(ctx, ambientKey{}, a)))
	if a.retry != nil && !retryable(err) {
		// fn hid a lost race behind another outcome (or behind none): report the race, so Do
		// retries.
		err = a.retry
	}
	if err != nil {
		return err
	}
	return tx.Commit()
}

// setsTimeouts reports whether a transaction must set its timeouts itself: the connections
// of the pool do not start with them (or nobody knows what they start with).
func (u *UnitOfWork) setsTimeouts() bool {
	if u.pool.known {
		return u.statementTimeout != u.pool.statement || u.idleTimeout != u.pool.idle
	}
	return u.statementTimeout > 0 || u.idleTimeout > 0
}

// msSetting renders d for a Postgres time setting; 0 turns the timeout off.
func msSetting(d time.Duration) string { return fmt.Sprintf("%dms", d.Milliseconds()) }

// insertEvents writes events to the outbox inside the caller's transaction, so an event exists
// exactly when the change it reports was committed, and queues those a channel carries for the
// fan-out: one statement (outboxInsert), one round trip, in their order (seq, which orders the
// outbox, follows the order of the VALUES rows).
func insertEvents(ctx context.Context, tx sqlx.ExecerContext, events []core.Event) error {
	if len(events) == 0 {
		return nil
	}
	rows, err := eventRows(events)
	if err != nil {
		return err
	}
	w := outboxInsert(rows)
	if _, err := tx.ExecContext(ctx, w.sql, w.args...); err != nil {
		return fmt.Errorf("%s: %w", w.what, err)
	}
	return nil
}

// eventRows renders the rows of events in the events table, in order (eventValues).
func eventRows(events []core.Event) ([][]any, error) {
	rows := make([][]any, len(events))
	for i, e := range events {
		var err error
		if rows[i], err = eventValues(e); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// eventColumns is the number of values of an event's row (eventValues).
const eventColumns = 8

// eventValues renders the values of e's row in the events table: what the event is about
// (type, object kind, object id) and the object at event time, which each channel renders
// when it reads the event (wire.RenderEvent).
func eventValues(e core.Event) ([]any, error) {
	kind, obj, err := wire.EventObject(e)
	if err != nil {
		return nil, fmt.Errorf("outbox: %w", err)
	}
	object, err := jsonText(obj)
	if err != nil {
		return nil, fmt.Errorf("outbox: encode %s: %w", e.Type, err)
	}
	// object_id: the indexed id of the object the event is about (NULL: none).
	var objectID *string
	if e.ObjectID != "" {
		objectID = &e.ObjectID
	}
	return []any{e.ID, e.Scope.MerchantID, string(e.Scope.Env), string(e.Type), e.Created, object, objectID, string(kind)}, nil
}

// outboxInsert is the one statement that writes rendered event rows, in their order, and
// queues for the fan-out (webhooks.Worker, which decides who receives each) the events a
// channel carries, in the same order.
//
// It wakes the delivery workers (NOTIFY kassa_webhooks, LISTENed by ListenWebhooks) only when
// the queue was empty as the statement began: a transaction that has sent a NOTIFY takes one
// database-wide lock at commit until its commit record is flushed, so notifying with every
// event would make event-writing transactions commit one after the other. A worker that finds
// the queue non-empty is awake already: it fans out until the queue is empty and then polls
// again shortly, so an event queued behind others is picked up without a notification. (The
// wake subquery sees the statement's snapshot, without the rows the statement inserts;
// Postgres keeps one notification of identical channel and payload per transaction.)
func outboxInsert(rows [][]any) write {
	values := make([]string, len(rows))
	args := make([]any, 0, eventColumns*len(rows))
	var queued []string
	for i, r := range rows {
		n := i * eventColumns
		values[i] = fmt.Sprintf("($%d, $%d, $%d, $%d, $%d, $%d, $%d, $%d)", n+1, n+2, n+3, n+4, n+5, n+6, n+7, n+8)
		args = append(args, r...)
		if s, ok := core.LookupEventType(r[3].(string)); ok && s.Channels != 0 {
			queued = append(queued, fmt.Sprintf("($%d, $%d, $%d)", n+2, n+3, n+1))
		}
	}
	insert := `INSERT INTO events (id, merchant_id, environment, type, created, object, object_id, object_kind)
		VALUES ` + strings.Join(values, ", ")
	what := fmt.Sprintf("outbox: insert %d events", len(rows))
	if len(queued) == 0 {
		return write{what: what, sql: insert, args: args}
	}
	return write{what: what, args: args, sql: `WITH written AS (` + insert + ` RETURNING 1)
		INSERT INTO event_fanout (merchant_id, environment, event_id)
		SELECT q.merchant_id, q.environment, q.event_id
		FROM (VALUES ` + strings.Join(queued, ", ") + `) AS q(merchant_id, environment, event_id),
			(SELECT CASE WHEN (` + fanoutQueued + `) IS NOT NULL THEN false
				ELSE pg_notify('` + WebhookChannel + `', '') IS NULL END AS woke) AS wake`}
}

// fanoutQueued finds the first row of the fan-out queue (NULL: it is empty) through its index
// on seq: the worker deletes what it fans out, so between two vacuums the table's pages are
// mostly dead rows, which a sequential scan would read on every event written; the index skips
// entries known dead. (An EXISTS would not do: the planner drops its ORDER BY and LIMIT.)
const fanoutQueued = `SELECT seq FROM event_fanout ORDER BY seq LIMIT 1`

// jsonText encodes v for a json/jsonb parameter. It is passed as text: with lib/pq's
// binary_parameters (see Open) a []byte argument would be sent in binary format, which jsonb
// does not accept as plain JSON.
func jsonText(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}
