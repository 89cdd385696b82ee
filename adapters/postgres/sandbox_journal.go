package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// SandboxJournal keeps the sandbox processor's answers in sandbox_charges (migration 00014),
// keyed by scope and idempotency key, so that the sandbox's Lookup answers across restarts
// and processes as a live processor's records would. Kassa's modules never read the table. It
// implements sandbox.Journal (the wiring joins the two; adapters do not import each other).
type SandboxJournal struct {
	db handle
}

// NewSandboxJournal returns the journal on db.
func NewSandboxJournal(db *sqlx.DB) *SandboxJournal { return &SandboxJournal{db: wrap(db)} }

// Remember stores res unless a result is stored under the key already; it returns the stored
// one. One statement, one round trip: the insert, or the row another call inserted first
// (when that call committed after this statement's snapshot, the row is read again).
//
// The statement runs on the pool (the processor is never called inside a unit of work, and
// the journal is the sandbox's own memory, not Kassa's) and commits without waiting for its
// WAL flush (synchronous_commit off for that one implicit transaction). That
// is safe: everything Kassa writes about the charge comes later in the WAL (the attempt's
// outcome, the payment), and a commit that is durable makes every earlier WAL record durable.
// A crash can lose only a sandbox answer of which Kassa recorded nothing; the attempt sweep
// then finds the charge unknown and abandons the attempt, as with a processor that never
// received it.
func (j *SandboxJournal) Remember(ctx context.Context, scope core.Scope, key string, res ports.ChargeResult) (ports.ChargeResult, error) {
	body, err := jsonText(res)
	if err != nil {
		return ports.ChargeResult{}, err
	}
	const sync = "off"
	var row struct {
		Result []byte `db:"result"`
		Sync   string `db:"sync"`
	}
	if err := j.db.GetContext(ctx, &row, sandboxRememberSQL,
		scope.MerchantID, string(scope.Env), key, body, sync); err != nil {
		return ports.ChargeResult{}, fmt.Errorf("sandbox_charges: insert: %w", err)
	}
	if row.Result == nil {
		stored, ok, err := j.Recall(ctx, scope, key)
		if err == nil && !ok {
			err = errors.New("sandbox_charges: the stored charge vanished")
		}
		return stored, err
	}
	var stored ports.ChargeResult
	if err := json.Unmarshal(row.Result, &stored); err != nil {
		return ports.ChargeResult{}, fmt.Errorf("sandbox_charges: decode: %w", err)
	}
	return stored, nil
}

// sandboxRememberSQL inserts a result or reads the one stored first, in one statement ($5:
// synchronous_commit of its transaction, set as the one row of the SELECT is computed).
const sandboxRememberSQL = `WITH ins AS (
		INSERT INTO sandbox_charges (merchant_id, environment, idempotency_key, result)
		VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING result)
	SELECT COALESCE((SELECT result FROM ins), (SELECT result FROM sandbox_charges
			WHERE merchant_id = $1 AND environment = $2 AND idempotency_key = $3)) AS result,
		set_config('synchronous_commit', $5, true) AS sync`

// Recall reads the result stored under key.
func (j *SandboxJournal) Recall(ctx context.Context, scope core.Scope, key string) (ports.ChargeResult, bool, error) {
	var body []byte
	err := j.db.GetContext(ctx, &body, `SELECT result FROM sandbox_charges
		WHERE merchant_id = $1 AND environment = $2 AND idempotency_key = $3`, scope.MerchantID, string(scope.Env), key)
	if errors.Is(err, sql.ErrNoRows) {
		return ports.ChargeResult{}, false, nil
	}
	if err != nil {
		return ports.ChargeResult{}, false, fmt.Errorf("sandbox_charges: get: %w", err)
	}
	var res ports.ChargeResult
	if err := json.Unmarshal(body, &res); err != nil {
		return ports.ChargeResult{}, false, fmt.Errorf("sandbox_charges: decode: %w", err)
	}
	return res, true, nil
}
