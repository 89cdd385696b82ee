package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/billing"
)

// MRRStore reads the monthly recurring revenue history (billing.MRRStore).
type MRRStore struct {
	db handle
}

// NewMRRStore returns the reads over db.
func NewMRRStore(db *sqlx.DB) *MRRStore { return &MRRStore{db: wrap(db)} }

var _ billing.MRRStore = (*MRRStore)(nil)

// MRRDaysSQL reads a scope's recorded days in a range with their amounts (exported for the
// planner test); a day with no revenue has one row with a NULL currency.
const MRRDaysSQL = `SELECT s.day, a.currency, a.amount FROM mrr_snapshots s
	LEFT JOIN mrr_snapshot_amounts a ON a.merchant_id = s.merchant_id AND a.environment = s.environment AND a.day = s.day
	WHERE s.merchant_id = $1 AND s.environment = $2 AND s.day BETWEEN $3::date AND $4::date
	ORDER BY s.day`

// MRRDays reads the scope's recorded days from..to, oldest first.
func (st *MRRStore) MRRDays(ctx context.Context, scope core.Scope, from, to time.Time) ([]billing.MRRDay, error) {
	var rows []struct {
		Day      time.Time      `db:"day"`
		Currency sql.NullString `db:"currency"`
		Amount   sql.NullInt64  `db:"amount"`
	}
	if err := st.db.SelectContext(ctx, &rows, MRRDaysSQL, scope.MerchantID, string(scope.Env),
		from.UTC().Format(time.DateOnly), to.UTC().Format(time.DateOnly)); err != nil {
		return nil, fmt.Errorf("mrr_snapshots: days: %w", err)
	}
	var out []billing.MRRDay
	for _, r := range rows {
		day := time.Date(r.Day.Year(), r.Day.Month(), r.Day.Day(), 0, 0, 0, 0, time.UTC)
		if len(out) == 0 || !out[len(out)-1].Day.Equal(day) {
			out = append(out, billing.MRRDay{Day: day})
		}
		if r.Currency.Valid {
			d := &out[len(out)-1]
			d.MRR = append(d.MRR, core.NewMoney(r.Amount.Int64, core.Currency(r.Currency.String)))
		}
	}
	return out, nil
}

// MRRNextSQL reads a scope's next snapshot time if it is due by $3 (exported for the planner
// test; one mark per scope, so max is that mark or NULL).
const MRRNextSQL = `SELECT max(next_at) FROM mrr_snapshot_marks WHERE merchant_id = $1 AND environment = $2 AND next_at <= $3`

// NextMRR is the scope's next snapshot time at or before until.
func (st *MRRStore) NextMRR(ctx context.Context, scope core.Scope, until time.Time) (time.Time, bool, error) {
	var at sql.NullTime
	if err := st.db.GetContext(ctx, &at, MRRNextSQL, scope.MerchantID, string(scope.Env), until); err != nil {
		return time.Time{}, false, fmt.Errorf("mrr_snapshot_marks: next: %w", err)
	}
	return at.Time.UTC(), at.Valid, nil
}

// mrrRepo is billing.MRRRepository on a transaction.
type mrrRepo Tx

// MRR is the MRR history's repository on this transaction.
func (t *Tx) MRR() billing.MRRRepository { return mrrRepo(*t) }

var _ billing.MRRTx = (*Tx)(nil)

// ClaimDue locks up to limit marks due by until, earliest first, SKIP LOCKED.
func (r mrrRepo) ClaimDue(ctx context.Context, scope *core.Scope, until time.Time, limit int) ([]billing.MRRMark, error) {
	inScope, args := sweepScope("m", scope, []any{until})
	args = append(args, limit)
	var rows []struct {
		MerchantID  string    `db:"merchant_id"`
		Environment string    `db:"environment"`
		NextAt      time.Time `db:"next_at"`
	}
	err := sqlx.SelectContext(ctx, r.q, &rows, fmt.Sprintf(`SELECT m.merchant_id, m.environment, m.next_at
		FROM mrr_snapshot_marks m WHERE m.next_at <= $1 AND %s
		ORDER BY m.next_at, m.merchant_id, m.environment LIMIT $%d FOR UPDATE OF m SKIP LOCKED`, inScope, len(args)), args...)
	if err != nil {
		return nil, fmt.Errorf("mrr_snapshot_marks: claim: %w", r.q.a.note(err))
	}
	out := make([]billing.MRRMark, len(rows))
	for i, x := range rows {
		out[i] = billing.MRRMark{Scope: core.Scope{MerchantID: x.MerchantID, Env: core.Environment(x.Environment)}, NextAt: x.NextAt.UTC()}
	}
	return out, nil
}

// RecurringGroups sums the scope's active and past-due subscriptions in this transaction.
func (r mrrRepo) RecurringGroups(ctx context.Context, scope core.Scope) ([]billing.RecurringGroup, error) {
	gs, err := recurringGroups(ctx, r.q, scope)
	return gs, r.q.a.note(err)
}

// mrrRecordSQL writes the snapshots of the midnights $3..$4 not recorded yet and, for those
// it wrote, their amounts ($6 currencies, $7 amounts; none for a day without revenue).
const mrrRecordSQL = `WITH days AS (
		INSERT INTO mrr_snapshots (merchant_id, environment, day, taken_at)
		SELECT $1, $2, d::date, $5 FROM generate_series($3::date, $4::date, interval '1 day') d
		ON CONFLICT DO NOTHING RETURNING day)
	INSERT INTO mrr_snapshot_amounts (merchant_id, environment, day, currency, amount)
	SELECT $1, $2, days.day, a.currency, a.amount FROM days CROSS JOIN unnest($6::text[], $7::bigint[]) a (currency, amount)`

// Record writes the snapshot of every midnight from..to with its amounts, in one statement,
// except the days recorded already: the first snapshot of a day stands.
func (r mrrRepo) Record(ctx context.Context, scope core.Scope, from, to, takenAt time.Time, mrr []core.Money) error {
	f, t := from.UTC().Format(time.DateOnly), to.UTC().Format(time.DateOnly)
	curs, amounts := make([]string, len(mrr)), make([]int64, len(mrr))
	for i, m := range mrr {
		curs[i], amounts[i] = string(m.Currency()), m.Amount()
	}
	if _, err := r.q.ExecContext(ctx, mrrRecordSQL, scope.MerchantID, string(scope.Env), f, t, takenAt,
		pq.Array(curs), pq.Array(amounts)); err != nil {
		return fmt.Errorf("mrr_snapshots: insert %s..%s: %w", f, t, err)
	}
	return nil
}

// Advance moves the scope's mark to next.
func (r mrrRepo) Advance(ctx context.Context, scope core.Scope, next time.Time) error {
	return r.q.exec(ctx, write{what: "mrr_snapshot_marks: advance", one: true,
		sql:  `UPDATE mrr_snapshot_marks SET next_at = $3 WHERE merchant_id = $1 AND environment = $2`,
		args: []any{scope.MerchantID, string(scope.Env), next}})
}
