package postgres

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/billing"
	"github.com/kassa-pay/kassa/modules/payments"
)

// AppDisputesSQL is the App API's page of a scope's disputes, newest first (the disputes_scope
// index): $3 is the page size plus one, $4 the offset.
const AppDisputesSQL = `SELECT ` + disputeColumns + ` FROM disputes d
	WHERE d.merchant_id = $1 AND d.environment = $2 AND d.` + ListPredicate + `
	ORDER BY d.seq DESC LIMIT $3 OFFSET $4`

// AppSubscriptionsSQL is the App API's page of a scope's subscriptions in every status, newest
// first (the subscriptions_list index): $3 is the page size plus one, $4 the offset.
const AppSubscriptionsSQL = `SELECT ` + subscriptionColumns + ` FROM subscriptions
	WHERE merchant_id = $1 AND environment = $2 AND ` + ListPredicate + `
	ORDER BY seq DESC LIMIT $3 OFFSET $4`

// Disputes returns the scope's disputes newest first, skipping offset rows, at most limit;
// more reports whether a row follows the page.
func (r *AppReader) Disputes(ctx context.Context, scope core.Scope, limit int, offset int64) (page []*payments.Dispute, more bool, err error) {
	var rows []disputeRow
	if err := sqlx.SelectContext(ctx, r.db, &rows, AppDisputesSQL, scope.MerchantID, string(scope.Env), limit+1, offset); err != nil {
		return nil, false, fmt.Errorf("app api: disputes: %w", err)
	}
	if len(rows) > limit {
		rows, more = rows[:limit], true
	}
	return disputesOf(rows), more, nil
}

// Subscriptions returns the scope's subscriptions newest first, skipping offset rows, at most
// limit; more reports whether a row follows the page.
func (r *AppReader) Subscriptions(ctx context.Context, scope core.Scope, limit int, offset int64) (page []*billing.Subscription, more bool, err error) {
	var rows []subscriptionRow
	if err := sqlx.SelectContext(ctx, r.db, &rows, AppSubscriptionsSQL, scope.MerchantID, string(scope.Env), limit+1, offset); err != nil {
		return nil, false, fmt.Errorf("app api: subscriptions: %w", err)
	}
	if len(rows) > limit {
		rows, more = rows[:limit], true
	}
	page = make([]*billing.Subscription, 0, len(rows))
	for i := range rows {
		s, err := rows[i].subscription()
		if err != nil {
			return nil, false, err
		}
		page = append(page, s)
	}
	return page, more, nil
}
