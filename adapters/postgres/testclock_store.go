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
// environment; no row, or a NULL frozen_time, means real time) with the advance in progress
// (advance_to) and the process running it (advance_owner: the id of its Presence). It stands
// for the process of its presence. Every method is one statement on the pool: none joins a
// unit of work (a test clock advance runs outside any transaction; the request that starts
// one may hold one of its own).
type TestClockStore struct {
	db *sqlx.DB
	me int32
}

// NewTestClockStore returns the test clock store on db, for the process whose presence id is
// owner (Presence.ID; 0 for a process that runs no advance).
func NewTestClockStore(db *sqlx.DB, owner int32) *TestClockStore {
	return &TestClockStore{db: db, me: owner}
}

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
	return utcPtr(frozen), nil
}

type clockRow struct {
	Frozen    *time.Time `db:"frozen_time"`
	To        *time.Time `db:"advance_to"`
	Owner     *int32     `db:"advance_owner"`
	OwnerLive bool       `db:"owner_live"`
}

// State returns the clock and its advance in progress.
func (st *TestClockStore) State(ctx context.Context, scope core.Scope) (testclock.State, error) {
	var r clockRow
	err := st.db.GetContext(ctx, &r, `SELECT c.frozen_time, c.advance_to, c.advance_owner,
		c.advance_owner IS NOT NULL AND `+presenceAlive("c.advance_owner")+` AS owner_live
		FROM test_clocks c WHERE c.merchant_id = $1 AND c.environment = $2`, scope.MerchantID, string(scope.Env))
	if errors.Is(err, sql.ErrNoRows) {
		return testclock.State{}, nil
	}
	if err != nil {
		return testclock.State{}, fmt.Errorf("test_clocks: state: %w", err)
	}
	out := testclock.State{Frozen: utcPtr(r.Frozen)}
	if r.To != nil {
		mine := r.Owner != nil && *r.Owner == st.me
		out.Advancing = &testclock.Advancing{To: r.To.UTC(), Running: r.OwnerLive || mine, Mine: mine}
	}
	return out, nil
}

// Begin records the advance to target by this process, in one statement: the row is created
// when absent, and changed only when frozen_time is still from and no advance other than a
// given-up one to target is recorded.
func (st *TestClockStore) Begin(ctx context.Context, scope core.Scope, from *time.Time, target time.Time) (bool, error) {
	res, err := st.db.ExecContext(ctx, `INSERT INTO test_clocks AS c (merchant_id, environment, frozen_time, advance_to, advance_owner)
		VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (merchant_id, environment) DO UPDATE
			SET advance_to = EXCLUDED.advance_to, advance_owner = EXCLUDED.advance_owner
			WHERE c.frozen_time IS NOT DISTINCT FROM EXCLUDED.frozen_time
			  AND (c.advance_to IS NULL
			    OR (c.advance_to = EXCLUDED.advance_to AND (c.advance_owner IS NULL OR c.advance_owner = EXCLUDED.advance_owner
			        OR NOT `+presenceAlive("c.advance_owner")+`)))`,
		scope.MerchantID, string(scope.Env), from, target, st.me)
	if err != nil {
		return false, fmt.Errorf("test_clocks: begin: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("test_clocks: begin: %w", err)
	}
	return n == 1, nil
}

// Finish sets frozen_time to target and ends the advance to target.
func (st *TestClockStore) Finish(ctx context.Context, scope core.Scope, target time.Time) (bool, error) {
	res, err := st.db.ExecContext(ctx, `UPDATE test_clocks SET frozen_time = advance_to, advance_to = NULL, advance_owner = NULL
		WHERE merchant_id = $1 AND environment = $2 AND advance_to = $3`, scope.MerchantID, string(scope.Env), target)
	if err != nil {
		return false, fmt.Errorf("test_clocks: finish: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("test_clocks: finish: %w", err)
	}
	return n == 1, nil
}

// Release gives up this process's run of the advance to target.
func (st *TestClockStore) Release(ctx context.Context, scope core.Scope, target time.Time) error {
	if _, err := st.db.ExecContext(ctx, `UPDATE test_clocks SET advance_owner = NULL
		WHERE merchant_id = $1 AND environment = $2 AND advance_to = $3 AND advance_owner = $4`,
		scope.MerchantID, string(scope.Env), target, st.me); err != nil {
		return fmt.Errorf("test_clocks: release: %w", err)
	}
	return nil
}

// Pending lists the advances in progress that no other live process runs, through
// test_clocks_advancing (the rows with an advance: few).
func (st *TestClockStore) Pending(ctx context.Context, limit int) ([]testclock.Pending, error) {
	var rows []struct {
		Merchant string    `db:"merchant_id"`
		Env      string    `db:"environment"`
		To       time.Time `db:"advance_to"`
	}
	if err := st.db.SelectContext(ctx, &rows, PendingAdvancesSQL, st.me, limit); err != nil {
		return nil, fmt.Errorf("test_clocks: pending: %w", err)
	}
	out := make([]testclock.Pending, len(rows))
	for i, r := range rows {
		out[i] = testclock.Pending{Scope: core.Scope{MerchantID: r.Merchant, Env: core.Environment(r.Env)}, To: r.To.UTC()}
	}
	return out, nil
}

// PendingAdvancesSQL is Pending's statement (exported for the planner test).
var PendingAdvancesSQL = `SELECT c.merchant_id, c.environment, c.advance_to FROM test_clocks c
	WHERE c.advance_to IS NOT NULL
	  AND (c.advance_owner IS NULL OR c.advance_owner = $1 OR NOT ` + presenceAlive("c.advance_owner") + `)
	ORDER BY c.advance_to LIMIT $2`

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
