package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
)

// Write-behind.
//
// Every statement is a round trip, and round trips are most of what a unit of work costs. So
// the writes of the typed unit of work's repositories (Tx: Sessions().Save, Payments().Insert,
// ChargeAttempts().Insert and Save, Outbox().Add, Mail().Enqueue) are not sent when they are
// made: the ambient transaction buffers them, and sends the consecutive ones as ONE statement
// of data-modifying CTEs, their parameters renumbered one after the other:
//
//	WITH w1 AS (INSERT INTO payments … RETURNING 1), w2 AS (UPDATE charge_attempts … RETURNING 1), …
//	SELECT (SELECT count(*) FROM w1), (SELECT count(*) FROM w2), …
//
// The buffer is flushed
//   - before any other statement on the transaction (every read, and every write that is not
//     buffered, of any store that joins it: the handle, txq, the prepared reads), so a read
//     always sees the writes made before it;
//   - before a savepoint is opened, and before a nested Do's savepoint is released (a failing
//     nested Do drops its unsent writes with its savepoint);
//   - before COMMIT, once fn returned nil. When fn fails, nothing is sent.
//
// What a write answered when it was sent, the flush answers for all of them:
//   - a write that must change one row (a session's update, a pending attempt's resolution)
//     and changed none fails the flush: the statement checks its own counts and raises
//     (kassa_unit_abort, migration 00021), the same check an optimistic unit's statement makes;
//   - a unique violation is the module's sentinel, by constraint name (flushSentinels):
//     payments.ErrPaymentExists, payments.ErrChargeInProgress;
//   - a serialization failure or deadlock is noted for Do's retry (ambient.note).
//
// The error reaches the caller of the statement that flushed (a repository's read, a store
// call, the nested Do), not the repository call that buffered the write, which answered nil.
// No module reacts to a repository write's error inside its function other than by returning
// it, so this changes no outcome; and when a flush fails, the transaction is failed: every
// later statement answers the same error, and Do (or the nested Do) reports it even when fn
// returned another error or none.
//
// Postgres cannot write one row twice in one statement (the second write would not see the
// first), so a write of a row already in the buffer sends the buffer first. The events of all
// Outbox().Add of one flush become one multi-row INSERT, in their order (seq follows the VALUES
// rows), and the mails of all Mail().Enqueue one INSERT.

// write is one buffered statement.
type write struct {
	what string // names it in errors: "checkout_sessions: update cs_…"
	sql  string // one INSERT or UPDATE, its parameters from $1, without RETURNING
	args []any
	row  string // the row it writes ("table key…"); "" for a row no other write of the unit names
	one  bool   // it must write exactly one row
}

// maxFlushParams bounds the parameters of one flush, well below Postgres' 65535.
const maxFlushParams = 30000

// writeBuffer is what the ambient transaction has not sent yet.
type writeBuffer struct {
	writes []write
	events [][]any     // eventValues of every Outbox().Add, in order
	mails  []core.Mail // of every Mail().Enqueue
	// failed is the error of a failed flush: the transaction cannot go on (Postgres aborted
	// it, or a write missed its row). Every later statement answers it, until the savepoint
	// that contains it is rolled back.
	failed error
}

func (b *writeBuffer) params() int {
	n := eventParams*len(b.events) + mailColumns*len(b.mails)
	for _, w := range b.writes {
		n += len(w.args)
	}
	return n
}

// drop forgets the unsent writes and a failed flush: their savepoint is rolled back.
func (b *writeBuffer) drop() {
	b.writes, b.events, b.mails, b.failed = nil, nil, nil, nil
}

// conn returns the transaction for a statement that is not buffered, once the buffered writes
// before it were sent.
func (a *ambient) conn(ctx context.Context) (*sqlx.Tx, error) {
	if a.opt != nil {
		if a.failed != nil {
			return nil, a.failed
		}
		return nil, a.misuse("a statement outside the typed repositories")
	}
	if err := a.flush(ctx); err != nil {
		return nil, err
	}
	return a.tx, nil
}

// add buffers w. A write of a row the buffer holds already, or one that would take it past
// maxFlushParams, sends the buffer first.
func (a *ambient) add(ctx context.Context, w write) error {
	full := false
	for _, b := range a.writes {
		full = full || (w.row != "" && b.row == w.row)
	}
	if err := a.makeRoom(ctx, len(w.args), full, w.what+": a row written twice, or too many writes"); err != nil {
		return err
	}
	a.writes = append(a.writes, w)
	return nil
}

// addEvents buffers rendered events (eventValues).
func (a *ambient) addEvents(ctx context.Context, rows [][]any) error {
	if err := a.makeRoom(ctx, eventParams*len(rows), false, "too many events"); err != nil {
		return err
	}
	a.events = append(a.events, rows...)
	return nil
}

// addMails buffers mails to queue.
func (a *ambient) addMails(ctx context.Context, mails []core.Mail) error {
	if err := a.makeRoom(ctx, mailColumns*len(mails), false, "too many mails"); err != nil {
		return err
	}
	a.mails = append(a.mails, mails...)
	return nil
}

// makeRoom readies the buffer for a write of n parameters: a failed flush answers its error;
// when the buffer must be sent first (clash: the write's row is in it already; or n would
// take it past maxFlushParams) it is flushed, except in an optimistic unit, which has one
// statement only and answers misuse(what).
func (a *ambient) makeRoom(ctx context.Context, n int, clash bool, what string) error {
	if a.failed != nil {
		return a.failed
	}
	if !clash && a.params()+n <= maxFlushParams {
		return nil
	}
	if a.opt != nil {
		return a.misuse(what)
	}
	return a.flush(ctx)
}

// flush sends the buffered writes as one statement (nothing when there are none). Its failure
// is kept in a.failed and noted for Do's retry.
//
// An optimistic unit (optimistic.go) sends its writes once, at its end (commitOptimistic): a
// flush before that, for a read or any other statement, is a misuse when anything is buffered.
func (a *ambient) flush(ctx context.Context) error {
	if a.failed != nil {
		return a.failed
	}
	if a.opt != nil {
		if a.buffered() {
			return a.misuse("a read after a write")
		}
		return nil
	}
	ws := a.pending()
	a.drop()
	if len(ws) == 0 {
		return nil
	}
	if err := send(ctx, a.tx, ws, nil); err != nil {
		a.failed = a.note(err)
		return err
	}
	return nil
}

// pending is what the buffer holds, as the writes of one statement: the buffered writes, then
// the events in one INSERT, then the mails in one INSERT.
func (b *writeBuffer) pending() []write {
	ws := b.writes
	if len(b.events) > 0 {
		ws = append(ws, eventsInsert(b.events)...)
	}
	if len(b.mails) > 0 {
		q, args := mailInsert(b.mails, 1)
		ws = append(ws, write{what: fmt.Sprintf("mail_outbox: queue %s", b.mails[0].Kind), sql: q, args: args})
	}
	return ws
}

// send runs ws as one statement of data-modifying CTEs, on the transaction of a unit of work
// or (an optimistic unit, reads guarding the rows it read) on the pool. The statement checks
// the rows each write wrote itself and fails as a whole when one is wrong (unitStatement), so
// the same statement serves both: nothing of it persists, in or out of a transaction.
func send(ctx context.Context, q rowQueryer, ws []write, reads []version) error {
	query, args, checks, err := unitStatement(ws, reads)
	if err != nil {
		return err
	}
	var ok int
	if err := q.QueryRowContext(ctx, query, args...).Scan(&ok); err != nil {
		return unitError(err, ws, checks)
	}
	return nil
}

// rowQueryer is a transaction or the pool.
type rowQueryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

var placeholder = regexp.MustCompile(`\$(\d+)`)

// renumber shifts the parameters $1… of query by offset. The buffered statements hold no
// dollar sign other than their parameters.
func renumber(query string, offset int) string {
	if offset == 0 {
		return query
	}
	return placeholder.ReplaceAllStringFunc(query, func(p string) string {
		n, _ := strconv.Atoi(p[1:])
		return "$" + strconv.Itoa(n+offset)
	})
}

// flushSentinels are the module errors of the unique constraints a buffered write may break.
var flushSentinels = map[string]error{
	"payments_session":            payments.ErrPaymentExists,    // a second payment of a session
	"charge_attempts_one_pending": payments.ErrChargeInProgress, // a second pending attempt of a payable
}

// flushError is the error of a flush of ws that failed with err: the module's sentinel for a
// constraint it names (wrapping err), or err with what the flush held.
func flushError(err error, ws []write) error {
	var pe *pq.Error
	if errors.As(err, &pe) && pe.Code == "23505" {
		if sentinel, ok := flushSentinels[pe.Constraint]; ok {
			return fmt.Errorf("%w: %w", sentinel, err)
		}
	}
	what := make([]string, len(ws))
	for i, w := range ws {
		what[i] = w.what
	}
	return fmt.Errorf("%s: %w", strings.Join(what, "; "), err)
}
