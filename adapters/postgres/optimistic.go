package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/checkout"
	"github.com/kassa-pay/kassa/modules/payments"
)

// Optimistic units of work.
//
// A use case asks for one with ports.Optimistic(ctx) (checkout's two charge transactions do).
// When ctx carries no transaction yet, UnitOfWork.Do then opens none: no BEGIN, no COMMIT.
//
//   - The repositories' Lock (Sessions().Lock, ChargeAttempts().Lock) read their row on the
//     pool, without FOR UPDATE, together with its version: the system column xmin, which
//     every update of the row changes (every writer bumps it; no migration, no column to
//     maintain). Other reads (a complete session's payment, a store called with ctx) run on
//     the pool as well.
//   - The writes are buffered as in a transaction (write-behind, writebehind.go). When fn
//     returns nil they go out as ONE autocommit statement of data-modifying CTEs. Each update
//     of a row read through Lock carries AND xmin::text = <the version read>; each row read
//     through Lock but not written gets a CTE that selects it FOR SHARE at that version, so it
//     cannot change before the statement commits. The statement commits when it returns, so
//     it checks itself: its final SELECT compares the counts of the guarded CTEs and of the
//     writes that must write one row with 1, and in its CASE's ELSE branch (evaluated only
//     then) calls kassa_unit_abort (migration 00021), which raises: the statement fails and
//     nothing of it persists. SQLSTATE KA001 (a guarded row changed) is a conflict: Do runs fn
//     again with fresh reads, like a serialization failure (retryable). KA002 (an unguarded
//     write missed its row) is an error, as the transaction's flush reports it.
//   - A unique violation maps to the module's sentinel (flushSentinels), as in a transaction:
//     a second pending attempt is still payments.ErrChargeInProgress.
//
// What the mode refuses (ports.Optimistic's contract), with ErrOptimisticMisuse, from the
// call and from Do: a read after a buffered write; a statement outside the typed repositories
// (a store's own write, a store method's transaction, a nested unit of work); a row written
// twice; the locking reads of sweeps (ClaimDue, LockDue) and SaveDue.
//
// Inside a unit of work that already has a transaction (a keyed request's gate), the request
// is ignored: Do joins the outer transaction in a savepoint, as always.
//
// The statement runs with the pool's server-side timeouts (Open sets them on every
// connection); an optimistic unit holds no connection between its statements.

// ErrOptimisticMisuse is what an optimistic unit of work answers to a use its contract
// forbids (ports.Optimistic): a programming error.
var ErrOptimisticMisuse = errors.New("postgres: not allowed in an optimistic unit of work")

// conflictCode is the SQLSTATE kassa_unit_abort raises when a guarded row changed.
const conflictCode = "KA001"

// missedCode is the SQLSTATE kassa_unit_abort raises when an unguarded write missed its row.
const missedCode = "KA002"

// optimistic is the state of an optimistic unit of work (ambient.opt).
type optimistic struct {
	db    *sqlx.DB
	reads []version // the rows read through Lock, in order
}

// version is a row read through a repository's Lock, and the version it had.
type version struct {
	row   string // as a write of the row names it (write.row)
	table string
	key   string // its primary key as a condition, parameters from $1
	args  []any
	xmin  string
}

// misuse fails the unit with ErrOptimisticMisuse: what it answers, and what Do reports.
func (a *ambient) misuse(what string) error {
	err := fmt.Errorf("%w: %s", ErrOptimisticMisuse, what)
	if a.failed == nil {
		a.failed = err
	}
	return err
}

func (b *writeBuffer) buffered() bool { return len(b.writes)+len(b.events)+len(b.mails) > 0 }

// poolRead returns where a read of an optimistic unit runs: the pool, before any write.
func (a *ambient) poolRead() (*sqlx.DB, error) {
	if a.failed != nil {
		return nil, a.failed
	}
	if a.buffered() {
		return nil, a.misuse("a read after a write")
	}
	return a.opt.db, nil
}

// recordVersion records the version of a row fn read through a Lock. The same row read again at
// another version has changed in between: a conflict.
func (a *ambient) recordVersion(v version) error {
	for _, r := range a.opt.reads {
		if r.row == v.row {
			if r.xmin != v.xmin {
				return a.note(&pq.Error{Code: conflictCode, Message: "read twice at two versions: " + v.row})
			}
			return nil
		}
	}
	a.opt.reads = append(a.opt.reads, v)
	return nil
}

// commitOptimistic sends what the unit buffered, guarded by the versions it read, as one
// autocommit statement (nothing when it neither read through Lock nor wrote).
func (a *ambient) commitOptimistic(ctx context.Context) error {
	if a.failed != nil {
		return a.failed
	}
	ws := a.pending()
	a.drop()
	if len(ws) == 0 && len(a.opt.reads) == 0 {
		return nil
	}
	if err := send(ctx, a.opt.db, ws, a.opt.reads); err != nil {
		a.failed = a.note(err)
		return err
	}
	return nil
}

// onceOptimistic runs fn once as an optimistic unit of work.
func (u *UnitOfWork) onceOptimistic(ctx context.Context, fn func(ctx context.Context) error) error {
	a := &ambient{opt: &optimistic{db: u.db}}
	err := fn(context.WithValue(ctx, ambientKey{}, a))
	if err == nil {
		err = a.commitOptimistic(ctx)
	}
	switch {
	case a.retry != nil && !retryable(err):
		err = a.retry
	case a.failed != nil && !errors.Is(err, a.failed):
		err = a.failed
	}
	return err
}

// unitStatement builds the one statement that sends ws (send): the writes, in an optimistic
// unit the updates of rows in reads guarded by their version and a FOR SHARE guard of every
// other row in reads, and the final check that fails the statement (kassa_unit_abort) when a
// write that must write one row did not, or a guarded row changed. checks names what each
// count of the check is.
func unitStatement(ws []write, reads []version) (query string, args []any, checks []string, err error) {
	var ctes, counts, guarded []string
	used := make([]bool, len(reads))
	for i, w := range ws {
		q := renumber(w.sql, len(args))
		args = append(args, w.args...)
		g := -1
		for j, r := range reads {
			if w.row != "" && r.row == w.row {
				g = j
			}
		}
		if g >= 0 {
			if !strings.HasPrefix(strings.TrimSpace(w.sql), "UPDATE") {
				return "", nil, nil, fmt.Errorf("%w: %s: only an update can be guarded", ErrOptimisticMisuse, w.what)
			}
			used[g] = true
			args = append(args, reads[g].xmin)
			q += fmt.Sprintf(" AND xmin::text = $%d", len(args))
		}
		name := fmt.Sprintf("w%d", i+1)
		ctes = append(ctes, fmt.Sprintf("%s AS (%s RETURNING 1)", name, q))
		if w.one || g >= 0 {
			counts = append(counts, fmt.Sprintf("(SELECT count(*) FROM %s)", name))
			guarded = append(guarded, strconv.FormatBool(g >= 0))
			checks = append(checks, w.what)
		}
	}
	for j, r := range reads {
		if used[j] {
			continue
		}
		q := renumber(r.key, len(args))
		args = append(args, r.args...)
		args = append(args, r.xmin)
		name := fmt.Sprintf("g%d", j+1)
		ctes = append(ctes, fmt.Sprintf("%s AS (SELECT 1 FROM %s WHERE %s AND xmin::text = $%d FOR SHARE)", name, r.table, q, len(args)))
		counts = append(counts, fmt.Sprintf("(SELECT count(*) FROM %s)", name))
		guarded = append(guarded, "true")
		checks = append(checks, r.row+" (read)")
	}
	if len(args) > maxFlushParams {
		return "", nil, nil, fmt.Errorf("%w: %d parameters in one statement", ErrOptimisticMisuse, len(args))
	}
	query = "WITH " + strings.Join(ctes, ", ") + " SELECT 0"
	if len(counts) > 0 {
		ones := strings.TrimSuffix(strings.Repeat("1,", len(counts)), ",")
		query = "WITH " + strings.Join(ctes, ", ") +
			" SELECT CASE WHEN c.n = ARRAY[" + ones + "]::bigint[] THEN 0" +
			" ELSE kassa_unit_abort(c.n, ARRAY[" + strings.Join(guarded, ",") + "]) END" +
			" FROM (SELECT ARRAY[" + strings.Join(counts, ", ") + "]::bigint[] AS n OFFSET 0) c"
	}
	return query, args, checks, nil
}

// unitError is the error of a unit's statement that failed with err: a conflict or a missed
// row named after its checks, or what any failed flush answers (flushError).
func unitError(err error, ws []write, checks []string) error {
	var pe *pq.Error
	if !errors.As(err, &pe) || (pe.Code != conflictCode && pe.Code != missedCode) {
		return flushError(err, ws)
	}
	var failed []string
	counts := strings.Split(strings.Trim(pe.Detail, "{}"), ",")
	for i, c := range counts {
		if c != "1" && i < len(checks) {
			failed = append(failed, fmt.Sprintf("%s: %s rows, not 1", checks[i], c))
		}
	}
	if pe.Code == conflictCode {
		return fmt.Errorf("changed since read: %s: %w", strings.Join(failed, "; "), err)
	}
	return fmt.Errorf("%s: %w", strings.Join(failed, "; "), err)
}

// sessionVersionSQL reads a session and its version, unlocked (an optimistic Lock).
var sessionVersionSQL = `SELECT ` + sessionCols("") + `, xmin::text AS row_version FROM checkout_sessions
	WHERE merchant_id = $1 AND environment = $2 AND id = $3`

// readSession is Sessions().Lock in an optimistic unit.
func (a *ambient) readSession(ctx context.Context, scope core.Scope, id string) (*checkout.Session, error) {
	db, err := a.poolRead()
	if err != nil {
		return nil, err
	}
	var r struct {
		sessionRow
		Version string `db:"row_version"`
	}
	err = db.GetContext(ctx, &r, sessionVersionSQL, scope.MerchantID, string(scope.Env), id)
	s, err := sessionOf(ctx, db, &r.sessionRow, err, id)
	if err != nil {
		return nil, a.note(err)
	}
	return s, a.recordVersion(version{row: sessionRowKey(scope, id), table: "checkout_sessions",
		key:  "merchant_id = $1 AND environment = $2 AND id = $3",
		args: []any{scope.MerchantID, string(scope.Env), id}, xmin: r.Version})
}

// readChargeAttempt is ChargeAttempts().Lock in an optimistic unit.
func (a *ambient) readChargeAttempt(ctx context.Context, scope core.Scope, reference, key string) (*payments.ChargeAttempt, error) {
	db, err := a.poolRead()
	if err != nil {
		return nil, err
	}
	var r struct {
		chargeAttemptRow
		Version string `db:"row_version"`
	}
	err = db.GetContext(ctx, &r, `SELECT `+chargeAttemptColumns+`, xmin::text AS row_version FROM charge_attempts
		WHERE merchant_id = $1 AND environment = $2 AND idempotency_key = $3 AND reference = $4`,
		scope.MerchantID, string(scope.Env), key, reference)
	at, err := chargeAttemptOf(&r.chargeAttemptRow, err, key)
	if err != nil {
		return nil, a.note(err)
	}
	return at, a.recordVersion(version{row: chargeAttemptRowKey(at), table: "charge_attempts",
		key:  "merchant_id = $1 AND environment = $2 AND idempotency_key = $3",
		args: []any{scope.MerchantID, string(scope.Env), key}, xmin: r.Version})
}
