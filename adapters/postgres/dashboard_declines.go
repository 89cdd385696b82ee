package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// DeclineReader implements ports.DeclinedCharges for the dashboard: a read-only query over the
// charge attempts whose outcome was a decline. It runs on the pool, never in a unit of work.
type DeclineReader struct{ db *sqlx.DB }

var _ ports.DeclinedCharges = (*DeclineReader)(nil)

// NewDeclineReader returns the dashboard's reader of declined charges on db.
func NewDeclineReader(db *sqlx.DB) *DeclineReader { return &DeclineReader{db: db} }

// declinedColumns are the columns both queries read. An attempt of kind "action" is the buyer's
// answer to 3-D Secure: failed means the authentication failed.
const declinedColumns = `reference, number, kind, amount, currency, method, charged_at`

// DeclinedCharges implements ports.DeclinedCharges. Applied attempts with the outcome failed
// are the declines (a pending or abandoned attempt has no outcome yet or never reached the
// processor). One statement per shape, each fixed text: all of the scope's, or one payable's.
func (r *DeclineReader) DeclinedCharges(ctx context.Context, scope core.Scope, payableID string, limit int) ([]ports.DeclinedCharge, bool, error) {
	var rows []struct {
		Reference string    `db:"reference"`
		Number    int       `db:"number"`
		Kind      string    `db:"kind"`
		Amount    int64     `db:"amount"`
		Currency  string    `db:"currency"`
		Method    string    `db:"method"`
		ChargedAt time.Time `db:"charged_at"`
	}
	var err error
	if payableID == "" {
		err = r.db.SelectContext(ctx, &rows, `SELECT `+declinedColumns+` FROM charge_attempts
			WHERE merchant_id = $1 AND environment = $2 AND status = 'applied' AND outcome = 'failed'
			ORDER BY charged_at DESC, started_at DESC, idempotency_key DESC LIMIT $3`,
			scope.MerchantID, string(scope.Env), limit+1)
	} else {
		err = r.db.SelectContext(ctx, &rows, `SELECT `+declinedColumns+` FROM charge_attempts
			WHERE merchant_id = $1 AND environment = $2 AND reference = $3 AND status = 'applied' AND outcome = 'failed'
			ORDER BY charged_at DESC, number DESC LIMIT $4`,
			scope.MerchantID, string(scope.Env), payableID, limit+1)
	}
	if err != nil {
		return nil, false, fmt.Errorf("charge_attempts: declined: %w", err)
	}
	more := len(rows) > limit
	if more {
		rows = rows[:limit]
	}
	out := make([]ports.DeclinedCharge, 0, len(rows))
	for _, row := range rows {
		out = append(out, ports.DeclinedCharge{
			PayableID: row.Reference, Attempt: row.Number, Authentication: row.Kind == "action",
			Amount: row.Amount, Currency: row.Currency, Method: ports.PaymentMethodKind(row.Method),
			At: row.ChargedAt.UTC(),
		})
	}
	return out, more, nil
}
