package postgres

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/ledger"
	"github.com/kassa-pay/kassa/modules/payouts"
)

// AppPayoutsSQL is the App API's page of a scope's payouts, newest first (the payouts_list
// index): $3 is the page size plus one, $4 the offset.
const AppPayoutsSQL = `SELECT ` + payoutColumns + ` FROM payouts
	WHERE merchant_id = $1 AND environment = $2 AND ` + ListPredicate + `
	ORDER BY seq DESC LIMIT $3 OFFSET $4`

// Balances reads the scope's balance per currency (available and pending), by currency: one
// row per currency and account (ledger_balances), whatever the number of transactions.
func (r *AppReader) Balances(ctx context.Context, scope core.Scope) ([]ledger.Balance, error) {
	return r.ledger.Balances(ctx, scope)
}

// Payouts returns the scope's payouts newest first, skipping offset rows, at most limit; more
// reports whether a row follows the page.
func (r *AppReader) Payouts(ctx context.Context, scope core.Scope, limit int, offset int64) (page []*payouts.Payout, more bool, err error) {
	var rows []payoutRow
	if err := sqlx.SelectContext(ctx, r.db, &rows, AppPayoutsSQL, scope.MerchantID, string(scope.Env), limit+1, offset); err != nil {
		return nil, false, fmt.Errorf("app api: payouts: %w", err)
	}
	if len(rows) > limit {
		rows, more = rows[:limit], true
	}
	return payoutsOf(rows), more, nil
}
