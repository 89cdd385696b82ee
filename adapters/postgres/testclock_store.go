package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/testclock"
)

// TestClockStore keeps the sandbox test clocks in test_clocks (one row per merchant test
// environment; no row, or a NULL frozen_time, means real time).
type TestClockStore struct {
	db handle
}

// NewTestClockStore returns the test clock store on db.
func NewTestClockStore(db *sqlx.DB) *TestClockStore { return &TestClockStore{db: wrap(db)} }

var _ testclock.Store = (*TestClockStore)(nil)

// FrozenTime returns the clock's frozen time, nil when it runs on real time.
func (st *TestClockStore) FrozenTime(ctx context.Context, scope core.Scope) (*time.Time, error) {
	var frozen *time.Time
	err := st.db.GetContext(ctx, &frozen, `SELECT frozen_time FROM test_clocks
		WHERE merchant_id = $1 AND environment = $2`, scope.MerchantID, string(scope.Env))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("test_clocks: get: %w", err)
	}
	if frozen != nil {
		t := frozen.UTC()
		frozen = &t
	}
	return frozen, nil
}

// ClaimAdvance claims the clock for one advance in one short statement: the row is created
// when absent, and a claim is taken over only when its lease (the database's wall clock) has
// run out. No lock or connection is held once it returns.
func (st *TestClockStore) ClaimAdvance(ctx context.Context, scope core.Scope, token string, lease time.Duration) (*time.Time, bool, error) {
	var rows []struct {
		Frozen *time.Time `db:"frozen_time"`
	}
	err := st.db.SelectContext(ctx, &rows, `INSERT INTO test_clocks AS c (merchant_id, environment, advance_claim, advance_lease_until)
		VALUES ($1, $2, $3, clock_timestamp() + make_interval(secs => $4))
		ON CONFLICT (merchant_id, environment) DO UPDATE
			SET advance_claim = EXCLUDED.advance_claim, advance_lease_until = EXCLUDED.advance_lease_until
			WHERE c.advance_claim IS NULL OR c.advance_lease_until < clock_timestamp()
		RETURNING c.frozen_time`, scope.MerchantID, string(scope.Env), token, lease.Seconds())
	if err != nil {
		return nil, false, fmt.Errorf("test_clocks: claim: %w", err)
	}
	if len(rows) == 0 {
		return nil, false, nil
	}
	return utcPtr(rows[0].Frozen), true, nil
}

// FinishAdvance sets frozen_time to target and releases the claim, if token still holds it.
func (st *TestClockStore) FinishAdvance(ctx context.Context, scope core.Scope, token string, target time.Time) (bool, error) {
	res, err := st.db.ExecContext(ctx, `UPDATE test_clocks SET frozen_time = $4, advance_claim = NULL, advance_lease_until = NULL
		WHERE merchant_id = $1 AND environment = $2 AND advance_claim = $3`, scope.MerchantID, string(scope.Env), token, target)
	if err != nil {
		return false, fmt.Errorf("test_clocks: set: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("test_clocks: set: %w", err)
	}
	return n == 1, nil
}

// ReleaseAdvance releases the claim of token; a clock row that was never frozen goes with it
// (no row and a row without frozen_time both mean real time).
func (st *TestClockStore) ReleaseAdvance(ctx context.Context, scope core.Scope, token string) error {
	if _, err := st.db.ExecContext(ctx, `DELETE FROM test_clocks
		WHERE merchant_id = $1 AND environment = $2 AND advance_claim = $3 AND frozen_time IS NULL`,
		scope.MerchantID, string(scope.Env), token); err != nil {
		return fmt.Errorf("test_clocks: release: %w", err)
	}
	if _, err := st.db.ExecContext(ctx, `UPDATE test_clocks SET advance_claim = NULL, advance_lease_until = NULL
		WHERE merchant_id = $1 AND environment = $2 AND advance_claim = $3`, scope.MerchantID, string(scope.Env), token); err != nil {
		return fmt.Errorf("test_clocks: release: %w", err)
	}
	return nil
}

// sweepScope is the scope condition of a background sweep over the rows of table alias t.
// With a scope: only that scope's rows (its merchant id and environment are appended to args
// and numbered after them). Without one: live rows, and test rows of merchants whose test clock
// is not frozen; those move only with their clock (an advance sweeps them with their scope).
func sweepScope(t string, scope *core.Scope, args []any) (string, []any) {
	if scope != nil {
		n := len(args)
		return fmt.Sprintf(`%[1]s.merchant_id = $%[2]d AND %[1]s.environment = $%[3]d`, t, n+1, n+2),
			append(args, scope.MerchantID, string(scope.Env))
	}
	return fmt.Sprintf(`(%[1]s.environment = 'live' OR NOT EXISTS (
			SELECT 1 FROM test_clocks c
			WHERE c.merchant_id = %[1]s.merchant_id AND c.environment = %[1]s.environment AND c.frozen_time IS NOT NULL))`, t), args
}
