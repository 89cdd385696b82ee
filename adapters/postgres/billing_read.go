package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/billing"
	"github.com/kassa-pay/kassa/modules/invoicing"
	"github.com/kassa-pay/kassa/modules/payments"
)

// BillingReads are the dashboard's read queries over customers and subscriptions
// (billing.Reads), and the invoices and payments of a customer's e-mail address.
type BillingReads struct {
	db handle
}

// NewBillingReads returns the reads over db.
func NewBillingReads(db *sqlx.DB) *BillingReads { return &BillingReads{db: wrap(db)} }

var _ billing.Reads = (*BillingReads)(nil)

// Customers pages the scope's customers newest first, optionally the one with an e-mail key.
func (st *BillingReads) Customers(ctx context.Context, scope core.Scope, q core.ListQuery, f billing.CustomerFilter) (core.Page[*billing.Customer], error) {
	if f.Email != nil {
		// One customer per e-mail key: a lookup on its unique key, a list of at most one.
		c, err := getCustomer(ctx, st.db, scope, `email_key = $3`, *f.Email, false)
		if errors.Is(err, billing.ErrNotFound) {
			return core.Page[*billing.Customer]{Items: []*billing.Customer{}}, nil
		}
		if err != nil {
			return core.Page[*billing.Customer]{}, err
		}
		return core.Page[*billing.Customer]{Items: []*billing.Customer{c}}, nil
	}
	pq := pageQuery{table: "customers", columns: customerColumns, scope: scope, q: q, unknownCursor: billing.ErrUnknownCursor}
	rows, hasMore, err := pageBySeq[customerRow](ctx, st.db, pq)
	if err != nil {
		return core.Page[*billing.Customer]{}, err
	}
	out := core.Page[*billing.Customer]{HasMore: hasMore, Items: make([]*billing.Customer, 0, len(rows))}
	for i := range rows {
		out.Items = append(out.Items, rows[i].customer())
	}
	return out, nil
}

// RecurringGroupsSQL is RecurringGroups' statement for one status (exported for the planner
// test): the status is an index condition of the status list index. A paused subscription
// (pause_collection set) is a group of its own: it counts, but adds no recurring revenue.
const RecurringGroupsSQL = `SELECT status, currency, interval, interval_count, paused, count(*) AS n,
	sum(unit_amount * quantity)::bigint AS amount
	FROM (SELECT status, currency, interval, interval_count, pause_collection IS NOT NULL AS paused, unit_amount, quantity
		FROM subscriptions
		WHERE merchant_id = $1 AND environment = $2 AND status = $3 AND ` + ListPredicate + ` ORDER BY seq DESC) s
	GROUP BY status, currency, interval, interval_count, paused`

// RecurringGroups sums the scope's active and past-due subscriptions per status, currency,
// cycle and pause.
func (st *BillingReads) RecurringGroups(ctx context.Context, scope core.Scope) ([]billing.RecurringGroup, error) {
	return recurringGroups(ctx, st.db, scope)
}

// recurringGroups runs RecurringGroupsSQL for each counted status on q (the database, or the
// MRR sweep's transaction).
func recurringGroups(ctx context.Context, q sqlx.QueryerContext, scope core.Scope) ([]billing.RecurringGroup, error) {
	type groupRow struct {
		Status        string `db:"status"`
		Currency      string `db:"currency"`
		Interval      string `db:"interval"`
		IntervalCount int    `db:"interval_count"`
		Paused        bool   `db:"paused"`
		N             int64  `db:"n"`
		Amount        int64  `db:"amount"`
	}
	var out []billing.RecurringGroup
	for _, status := range []billing.Status{billing.StatusActive, billing.StatusPastDue} {
		var rows []groupRow
		if err := sqlx.SelectContext(ctx, q, &rows, RecurringGroupsSQL, scope.MerchantID, string(scope.Env), string(status)); err != nil {
			return nil, fmt.Errorf("subscriptions: recurring groups: %w", err)
		}
		for _, r := range rows {
			out = append(out, billing.RecurringGroup{Status: billing.Status(r.Status), Currency: core.Currency(r.Currency),
				Interval: r.Interval, IntervalCount: r.IntervalCount, Paused: r.Paused, Count: r.N, Amount: r.Amount})
		}
	}
	return out, nil
}

// InvoicesByEmailSQL and PaymentsByEmailSQL read the newest invoices and payments of an
// e-mail key (exported for the planner test).
const InvoicesByEmailSQL = `SELECT ` + invoiceColumns + ` FROM invoices WHERE merchant_id = $1 AND environment = $2
	AND lower(btrim(customer_email)) = $3 AND ` + ListPredicate + ` ORDER BY seq DESC LIMIT $4`

var PaymentsByEmailSQL = `SELECT ` + paymentColumns + ` FROM payments WHERE merchant_id = $1 AND environment = $2
	AND lower(btrim(customer_email)) = $3 AND ` + ListPredicate + ` ORDER BY seq DESC LIMIT $4`

// InvoicesByEmail reads the scope's newest invoices made out to emailKey (billing.EmailKey),
// at most limit.
func (st *BillingReads) InvoicesByEmail(ctx context.Context, scope core.Scope, emailKey string, limit int) ([]*invoicing.Invoice, error) {
	var rows []invoiceRow
	if err := st.db.SelectContext(ctx, &rows, InvoicesByEmailSQL, scope.MerchantID, string(scope.Env), emailKey, limit); err != nil {
		return nil, fmt.Errorf("invoices: by e-mail: %w", err)
	}
	out := make([]*invoicing.Invoice, 0, len(rows))
	for i := range rows {
		inv, err := rows[i].invoice()
		if err != nil {
			return nil, err
		}
		out = append(out, inv)
	}
	return out, nil
}

// PaymentsByEmail reads the scope's newest payments made with emailKey, at most limit.
func (st *BillingReads) PaymentsByEmail(ctx context.Context, scope core.Scope, emailKey string, limit int) ([]*payments.Payment, error) {
	var rows []paymentRow
	if err := st.db.SelectContext(ctx, &rows, PaymentsByEmailSQL, scope.MerchantID, string(scope.Env), emailKey, limit); err != nil {
		return nil, fmt.Errorf("payments: by e-mail: %w", err)
	}
	out := make([]*payments.Payment, 0, len(rows))
	for i := range rows {
		p, err := rows[i].payment()
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}
