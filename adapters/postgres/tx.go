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

// The ambient transaction.
//
// A unit of work (UnitOfWork.Do) opens one transaction and puts it in the context it hands to
// its function. Every store reads and writes through a handle, and every handle checks the
// context first: when it carries a transaction, the statement runs on that transaction instead
// of on a pooled connection. So any store method called inside a unit of work becomes part of
// it without knowing, and a request holds exactly one connection while its unit of work is
// open. Reading through the pool from inside a transaction would need a second connection
// while the first is held; with a small pool and enough concurrent requests every connection
// would be held by a request waiting for another one, and nothing would move.
//
// The context key is unexported: nothing outside this package can see or forge the
// transaction, and ports never mention *sql.Tx.
//
// The writes of the typed unit of work's repositories do not go out one by one: the ambient
// transaction buffers them and sends them together before whatever runs next on it (see
// "Write-behind" in writebehind.go). Every path to the transaction (handle.on, txq, the
// prepared reads, a savepoint, the commit) goes through ambient.conn or ambient.flush, so
// nothing runs before the writes made ahead of it.

type ambientKey struct{}

// ambient is the transaction of a unit of work and its bookkeeping. It is used by one
// goroutine at a time, like the *sqlx.Tx it holds.
type ambient struct {
	tx          *sqlx.Tx
	savepoints  int   // savepoints opened so far, for unique names
	retry       error // the first serialization failure or deadlock seen, if any
	writeBuffer       // the repositories' writes not sent yet (see "Write-behind" in writebehind.go)
	// opt is set in an optimistic unit of work, which has no transaction (tx is nil): see
	// optimistic.go.
	opt *optimistic
}

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

// nested runs fn inside a savepoint of the ambient transaction: when fn fails, what it wrote is
// undone and the transaction stays usable, exactly as if fn had run in a transaction of its
// own that rolled back. A store method is atomic whether or not it runs in a unit of work.
// The writes buffered before it are sent before the savepoint; fn's own are sent before the
// savepoint is released, or dropped with it when fn fails (see "Write-behind").
func (a *ambient) nested(ctx context.Context, fn func() error) (err error) {
	if a.opt != nil {
		if a.failed != nil {
			return a.failed
		}
		return a.misuse("a unit of work or a store's transaction inside it")
	}
	tx, err := a.conn(ctx)
	if err != nil {
		return err
	}
	a.savepoints++
	name := fmt.Sprintf("kassa_%d", a.savepoints)
	if _, err := tx.ExecContext(ctx, "SAVEPOINT "+name); err != nil {
		return a.note(err)
	}
	defer func() {
		if p := recover(); p != nil {
			a.drop()
			_, _ = tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT "+name)
			panic(p)
		}
	}()
	if err = fn(); err == nil {
		err = a.flush(ctx)
	}
	if a.failed != nil && !errors.Is(err, a.failed) {
		err = a.failed // fn hid a failed flush behind another outcome, or behind none
	}
	if err != nil {
		_ = a.note(err) // remembered for the retry; err itself is returned below
		a.drop()        // fn's unsent writes, and the failure of its flush, go with the savepoint
		if _, rerr := tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT "+name); rerr != nil {
			return errors.Join(err, a.note(rerr))
		}
		return err
	}
	if _, err := tx.ExecContext(ctx, "RELEASE SAVEPOINT "+name); err != nil {
		return a.note(err)
	}
	return nil
}

// handle is the database handle of the stores: each method runs on the ambient transaction of
// ctx when there is one, after the writes it buffered (see "Write-behind"), and on the pool
// otherwise (see "The ambient transaction" above).
type handle struct{ db *sqlx.DB }

func wrap(db *sqlx.DB) handle { return handle{db: db} }

// on returns where a statement of ctx runs, and the ambient transaction if it is that: the
// writes buffered so far are sent first, and their failure is on's. In an optimistic unit of
// work (no transaction) a read runs on the pool, before any write, and a write is refused.
func (h handle) on(ctx context.Context, read bool) (sqlx.ExtContext, *ambient, error) {
	if a := ambientOf(ctx); a != nil {
		if a.opt != nil && read {
			db, err := a.poolRead()
			return db, a, err
		}
		tx, err := a.conn(ctx)
		return tx, a, err
	}
	return h.db, nil, nil
}

func noted[T any](a *ambient, v T, err error) (T, error) {
	if a != nil && err != nil {
		_ = a.note(err) // remembered for the retry; err itself is returned below
	}
	return v, err
}

// ExecContext runs a statement that returns no rows.
func (h handle) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	q, a, err := h.on(ctx, false)
	if err != nil {
		return nil, err
	}
	res, err := q.ExecContext(ctx, query, args...)
	return noted(a, res, err)
}

// QueryContext runs a query.
func (h handle) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	q, a, err := h.on(ctx, true)
	if err != nil {
		return nil, err
	}
	rows, err := q.QueryContext(ctx, query, args...)
	return noted(a, rows, err)
}

// QueryxContext runs a query with sqlx's rows.
func (h handle) QueryxContext(ctx context.Context, query string, args ...any) (*sqlx.Rows, error) {
	q, a, err := h.on(ctx, true)
	if err != nil {
		return nil, err
	}
	rows, err := q.QueryxContext(ctx, query, args...)
	return noted(a, rows, err)
}

// QueryRowxContext runs a query that returns at most one row. A *sqlx.Row cannot carry the
// failure of the flush before it: the query then meets the failed transaction, and the unit of
// work reports the flush's error (ambient.failed) whatever fn makes of the row's.
func (h handle) QueryRowxContext(ctx context.Context, query string, args ...any) *sqlx.Row {
	if a := ambientOf(ctx); a != nil && a.opt == nil {
		_ = a.flush(ctx) // its failure is kept in a.failed
		return a.tx.QueryRowxContext(ctx, query, args...)
	} else if a != nil {
		_, _ = a.poolRead() // a read after a write fails the unit (a.failed); the read itself is harmless
	}
	return h.db.QueryRowxContext(ctx, query, args...)
}

// GetContext scans the one row of a query into dest.
func (h handle) GetContext(ctx context.Context, dest any, query string, args ...any) error {
	q, a, err := h.on(ctx, true)
	if err != nil {
		return err
	}
	_, err = noted(a, struct{}{}, sqlx.GetContext(ctx, q, dest, query, args...))
	return err
}

// SelectContext scans the rows of a query into dest.
func (h handle) SelectContext(ctx context.Context, dest any, query string, args ...any) error {
	q, a, err := h.on(ctx, true)
	if err != nil {
		return err
	}
	_, err = noted(a, struct{}{}, sqlx.SelectContext(ctx, q, dest, query, args...))
	return err
}

// BeginTxx starts a transaction on the pool; inTx is what stores use (it joins the ambient
// transaction instead).
func (h handle) BeginTxx(ctx context.Context, opts *sql.TxOptions) (*sqlx.Tx, error) {
	return h.db.BeginTxx(ctx, opts)
}

// beginner is what inTx needs of a database: the store handle or a bare *sqlx.DB.
type beginner interface {
	BeginTxx(ctx context.Context, opts *sql.TxOptions) (*sqlx.Tx, error)
}

// inTx runs fn in one transaction: committed when fn returns nil, rolled back otherwise (and on
// panic). Every store method that changes state goes through it, together with its events.
// Inside a unit of work it joins the ambient transaction instead, within a savepoint (so a
// failing fn still undoes only its own writes), and the unit of work commits.
func inTx(ctx context.Context, db beginner, fn func(tx *sqlx.Tx) error) (err error) {
	if a := ambientOf(ctx); a != nil {
		return a.nested(ctx, func() error { return fn(a.tx) })
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
//
// The conflict of an optimistic unit of work (conflictCode: a row it read changed before its
// statement committed) is one too: fn runs again with fresh reads.
func retryable(err error) bool {
	var pe *pq.Error
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01" || pe.Code == conflictCode)
}

// UnitOfWork implements ports.UnitOfWork on PostgreSQL (see "The ambient transaction").
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

// WithTimeouts returns a copy of u whose transactions use these server-side timeouts.
func (u *UnitOfWork) WithTimeouts(statement, idle time.Duration) *UnitOfWork {
	c := *u
	c.statementTimeout, c.idleTimeout = statement, idle
	return &c
}

// Do implements ports.UnitOfWork. Inside another unit of work (ctx carries its transaction) it
// joins it within a savepoint and commits nothing. Otherwise it runs fn in a new transaction,
// and when the transaction fails with a serialization failure or a deadlock, anywhere in fn
// and even if fn turned that error into another, it rolls back and runs fn again, up to
// UnitOfWorkAttempts times with a short random pause. When ctx asks for an optimistic unit
// (ports.Optimistic) it opens no transaction (optimistic.go), and a conflict is retried the
// same way.
func (u *UnitOfWork) Do(ctx context.Context, fn func(ctx context.Context) error) error {
	if a := ambientOf(ctx); a != nil {
		return a.nested(ctx, func() error { return fn(ctx) })
	}
	once := u.once
	if ports.IsOptimistic(ctx) {
		once = u.onceOptimistic
	}
	for attempt := 1; ; attempt++ {
		err := once(ctx, fn)
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
	if err = fn(context.WithValue(ctx, ambientKey{}, a)); err == nil {
		err = a.flush(ctx) // the writes still buffered; nothing is sent when fn failed
	}
	switch {
	case a.retry != nil && !retryable(err):
		// fn hid a lost race behind another outcome: report the race, so Do retries.
		err = a.retry
	case a.failed != nil && !errors.Is(err, a.failed):
		// fn hid a failed flush behind another outcome, or behind none: report it.
		err = a.failed
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
// fan-out (eventsInsert). (The unit of work's outbox buffers them instead: eventsInsert of
// every Add of one flush.)
func insertEvents(ctx context.Context, tx sqlx.ExecerContext, events []core.Event) error {
	if len(events) == 0 {
		return nil
	}
	rows, err := eventRows(events)
	if err != nil {
		return err
	}
	for _, w := range eventsInsert(rows) {
		if _, err := tx.ExecContext(ctx, w.sql, w.args...); err != nil {
			return fmt.Errorf("%s: %w", w.what, err)
		}
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

// eventColumns is the number of values of an event's row (eventValues); fanoutColumns of its
// row in the fan-out queue. eventParams is the most parameters an event takes in a flush.
const (
	eventColumns  = 8
	fanoutColumns = 3
	eventParams   = eventColumns + fanoutColumns
)

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

// eventsInsert is the INSERT of rendered event rows, in their order (seq follows the order of
// the VALUES rows), and the INSERT that queues for the fan-out the events a channel carries
// (fanoutInsert). Both go in the statement of the flush, so an event is queued exactly when it
// is committed.
func eventsInsert(rows [][]any) []write {
	values := make([]string, len(rows))
	args := make([]any, 0, eventColumns*len(rows))
	var queued [][]any
	for i, r := range rows {
		n := i * eventColumns
		values[i] = fmt.Sprintf("($%d, $%d, $%d, $%d, $%d, $%d, $%d, $%d)", n+1, n+2, n+3, n+4, n+5, n+6, n+7, n+8)
		args = append(args, r...)
		if s, ok := core.LookupEventType(r[3].(string)); ok && s.Channels != 0 {
			queued = append(queued, []any{r[1], r[2], r[0]})
		}
	}
	ws := []write{{what: fmt.Sprintf("outbox: insert %d events", len(rows)),
		sql: `INSERT INTO events (id, merchant_id, environment, type, created, object, object_id, object_kind)
		VALUES ` + strings.Join(values, ", "), args: args}}
	if len(queued) > 0 {
		ws = append(ws, fanoutInsert(queued))
	}
	return ws
}

// fanoutInsert queues events (merchant_id, environment, event id) for the fan-out
// (webhooks.Worker), which decides who receives each. It wakes the delivery workers (NOTIFY
// kassa_webhooks, LISTENed by ListenWebhooks) only when the queue was empty as the statement
// began: a transaction that has sent a NOTIFY takes one database-wide lock at commit until its
// commit record is flushed, so notifying on every event would make event-writing transactions
// commit one after the other. A worker that finds the queue non-empty is awake already: it
// fans out until the queue is empty and then polls again shortly, so an event queued behind
// others is picked up without a notification. (The wake subquery is evaluated for the
// statement, whose snapshot does not see the rows it inserts; Postgres keeps one notification
// of identical channel and payload per transaction.)
func fanoutInsert(queued [][]any) write {
	values := make([]string, len(queued))
	args := make([]any, 0, fanoutColumns*len(queued))
	for i, q := range queued {
		n := i * fanoutColumns
		values[i] = fmt.Sprintf("($%d, $%d, $%d)", n+1, n+2, n+3)
		args = append(args, q...)
	}
	return write{what: fmt.Sprintf("event_fanout: queue %d events", len(queued)),
		sql: `INSERT INTO event_fanout (merchant_id, environment, event_id)
		SELECT q.merchant_id, q.environment, q.event_id
		FROM (VALUES ` + strings.Join(values, ", ") + `) AS q(merchant_id, environment, event_id),
			(SELECT CASE WHEN EXISTS (SELECT 1 FROM event_fanout) THEN false
				ELSE pg_notify('` + WebhookChannel + `', '') IS NULL END AS woke) AS wake`, args: args}
}

// jsonText encodes v for a json/jsonb parameter. It is passed as text: with lib/pq's
// binary_parameters (see Open) a []byte argument would be sent in binary format, which jsonb
// does not accept as plain JSON.
func jsonText(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}
