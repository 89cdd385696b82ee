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

// Advance locks the clock row (creating it when absent) for one transaction, so advances of
// one merchant run one after the other; fn runs under the lock and the clock is set to the
// target it returns. The row lock does not block readers of the clock (Now), which keep
// seeing the old time until the advance commits.
func (st *TestClockStore) Advance(ctx context.Context, scope core.Scope, fn func(frozen *time.Time) (time.Time, error)) error {
	return inTx(ctx, st.db, func(tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO test_clocks (merchant_id, environment) VALUES ($1, $2)
			ON CONFLICT (merchant_id, environment) DO NOTHING`, scope.MerchantID, string(scope.Env)); err != nil {
			return fmt.Errorf("test_clocks: create: %w", err)
		}
		var frozen *time.Time
		if err := tx.GetContext(ctx, &frozen, `SELECT frozen_time FROM test_clocks
			WHERE merchant_id = $1 AND environment = $2 FOR UPDATE`, scope.MerchantID, string(scope.Env)); err != nil {
			return fmt.Errorf("test_clocks: lock: %w", err)
		}
		if frozen != nil {
			t := frozen.UTC()
			frozen = &t
		}
		target, err := fn(frozen)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE test_clocks SET frozen_time = $3
			WHERE merchant_id = $1 AND environment = $2`, scope.MerchantID, string(scope.Env), target); err != nil {
			return fmt.Errorf("test_clocks: set: %w", err)
		}
		return nil
	})
}
