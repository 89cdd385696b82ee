package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/billing"
)

// Balance sums the customer's balance transactions in currency; the caller holds the
// customer's row lock (billing.CustomerRepository).
func (r customerRepo) Balance(ctx context.Context, scope core.Scope, customerID string, currency core.Currency) (int64, error) {
	var sum int64
	err := sqlx.GetContext(ctx, r.q, &sum, `SELECT COALESCE(SUM(amount), 0)::bigint FROM customer_balance_transactions
		WHERE customer_id = $1 AND currency = $2 AND merchant_id = $3 AND environment = $4`,
		customerID, string(currency), scope.MerchantID, string(scope.Env))
	if err != nil {
		return 0, fmt.Errorf("customer_balance_transactions: sum %s: %w", customerID, r.q.a.note(err))
	}
	return sum, nil
}

// AddBalanceTransaction inserts one change of a customer's balance.
func (r customerRepo) AddBalanceTransaction(ctx context.Context, t *billing.BalanceTransaction) error {
	return r.q.exec(ctx, write{what: "customer_balance_transactions: insert " + t.ID, one: true,
		sql: `INSERT INTO customer_balance_transactions (id, merchant_id, environment, customer_id, currency, amount, reason,
			subscription_id, invoice_id, description, created) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		args: []any{t.ID, t.Scope.MerchantID, string(t.Scope.Env), t.Customer, string(t.Currency), t.Amount, t.Reason,
			t.Subscription, t.Invoice, t.Description, t.Created}})
}

// CustomerBalances is the customer's balance per currency it has transactions in.
func (st *BillingStore) CustomerBalances(ctx context.Context, scope core.Scope, customerID string) (map[core.Currency]int64, error) {
	var rows []struct {
		Currency string `db:"currency"`
		Balance  int64  `db:"balance"`
	}
	err := st.db.SelectContext(ctx, &rows, `SELECT currency, SUM(amount)::bigint AS balance FROM customer_balance_transactions
		WHERE customer_id = $1 AND merchant_id = $2 AND environment = $3 GROUP BY currency ORDER BY currency`,
		customerID, scope.MerchantID, string(scope.Env))
	if err != nil {
		return nil, fmt.Errorf("customer_balance_transactions: balances %s: %w", customerID, err)
	}
	out := make(map[core.Currency]int64, len(rows))
	for _, r := range rows {
		out[core.Currency(r.Currency)] = r.Balance
	}
	return out, nil
}

// customerBalanceTxnColumns are the columns of a customer's balance transaction (customerBalanceTxnRow).
const customerBalanceTxnColumns = `id, merchant_id, environment, customer_id, currency, amount, reason, subscription_id, invoice_id,
	description, created`

// customerBalanceTxnRow is one row of customer_balance_transactions.
type customerBalanceTxnRow struct {
	ID           string    `db:"id"`
	MerchantID   string    `db:"merchant_id"`
	Environment  string    `db:"environment"`
	CustomerID   string    `db:"customer_id"`
	Currency     string    `db:"currency"`
	Amount       int64     `db:"amount"`
	Reason       string    `db:"reason"`
	Subscription string    `db:"subscription_id"`
	Invoice      string    `db:"invoice_id"`
	Description  string    `db:"description"`
	Created      time.Time `db:"created"`
}

func (r customerBalanceTxnRow) txn() *billing.BalanceTransaction {
	return &billing.BalanceTransaction{ID: r.ID, Scope: core.Scope{MerchantID: r.MerchantID, Env: core.Environment(r.Environment)},
		Customer: r.CustomerID, Currency: core.Currency(r.Currency), Amount: r.Amount, Reason: r.Reason,
		Subscription: r.Subscription, Invoice: r.Invoice, Description: r.Description, Created: r.Created.UTC()}
}

// BalanceTransactions pages the customer's balance transactions newest first (D8); a cursor
// that is not one of the customer's is billing.ErrUnknownCursor.
func (st *BillingReads) BalanceTransactions(ctx context.Context, scope core.Scope, customerID string, q core.ListQuery) (core.Page[*billing.BalanceTransaction], error) {
	pq := pageQuery{table: "customer_balance_transactions", columns: customerBalanceTxnColumns, scope: scope, q: q,
		within: []cond{{"customer_id = ?", customerID}}, unknownCursor: billing.ErrUnknownCursor}
	rows, hasMore, err := pageBySeq[customerBalanceTxnRow](ctx, st.db, pq)
	if err != nil {
		return core.Page[*billing.BalanceTransaction]{}, err
	}
	out := core.Page[*billing.BalanceTransaction]{HasMore: hasMore, Items: make([]*billing.BalanceTransaction, 0, len(rows))}
	for i := range rows {
		out.Items = append(out.Items, rows[i].txn())
	}
	return out, nil
}
