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
// one. One statement: the insert, or the row another call inserted first.
func (j *SandboxJournal) Remember(ctx context.Context, scope core.Scope, key string, res ports.ChargeResult) (ports.ChargeResult, error) {
	body, err := jsonText(res)
	if err != nil {
		return ports.ChargeResult{}, err
	}
	if _, err := j.db.ExecContext(ctx, `INSERT INTO sandbox_charges (merchant_id, environment, idempotency_key, result)
		VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`, scope.MerchantID, string(scope.Env), key, body); err != nil {
		return ports.ChargeResult{}, fmt.Errorf("sandbox_charges: insert: %w", err)
	}
	stored, ok, err := j.Recall(ctx, scope, key)
	if err == nil && !ok {
		err = errors.New("sandbox_charges: the stored charge vanished")
	}
	return stored, err
}

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
