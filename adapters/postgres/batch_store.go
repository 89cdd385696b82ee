package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/kassa-pay/kassa/modules/billing"
	"github.com/kassa-pay/kassa/modules/invoicing"
)

// The set-based writes of a renewal batch (billing.ProcessDue): each method is one statement
// for all its rows, whatever their number. The rows travel as one JSON array, read back with
// json_populate_recordset over the table's own row type, so the SQL is static (no statement is
// built per row) and each column keeps its table's type.

// jsonRows encodes rows of cols (values as the single-row statements pass them) as one JSON
// array of objects keyed by column. A column of jsonb (named in jsonCols) holds JSON text (a
// string, or a *string for a nullable one) and is embedded as JSON.
func jsonRows(cols []string, jsonCols map[string]bool, rows [][]any) (string, error) {
	out := make([]map[string]any, 0, len(rows))
	for _, vals := range rows {
		if len(vals) != len(cols) {
			return "", fmt.Errorf("postgres: %d values for %d columns", len(vals), len(cols))
		}
		o := make(map[string]any, len(cols))
		for i, c := range cols {
			v := vals[i]
			if jsonCols[c] {
				switch t := v.(type) {
				case string:
					v = json.RawMessage(t)
				case *string:
					if t == nil {
						v = nil
					} else {
						v = json.RawMessage(*t)
					}
				}
			}
			o[c] = v
		}
		out = append(out, o)
	}
	b, err := json.Marshal(out)
	return string(b), err // text: a []byte would be sent as bytea
}

// LockMany reads the customers FOR UPDATE in one statement, locked and answered in id order.
func (r customerRepo) LockMany(ctx context.Context, refs []billing.CustomerRef) ([]*billing.Customer, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	mers, envs, ids := make([]string, len(refs)), make([]string, len(refs)), make([]string, len(refs))
	for i, c := range refs {
		mers[i], envs[i], ids[i] = c.Scope.MerchantID, string(c.Scope.Env), c.ID
	}
	var rows []customerRow
	err := sqlx.SelectContext(ctx, r.q, &rows, `SELECT `+customerColumns+` FROM customers
		WHERE (merchant_id, environment, id) IN (SELECT * FROM unnest($1::text[], $2::text[], $3::text[]))
		ORDER BY id FOR UPDATE`, pq.Array(mers), pq.Array(envs), pq.Array(ids))
	if err != nil {
		return nil, fmt.Errorf("customers: lock many: %w", r.q.a.note(err))
	}
	out := make([]*billing.Customer, 0, len(rows))
	for _, row := range rows {
		out = append(out, row.customer())
	}
	return out, nil
}

// GetMany reads the methods in one statement.
func (r methodRepo) GetMany(ctx context.Context, refs []billing.MethodRef) ([]*billing.PaymentMethod, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	mers, envs, ids := make([]string, len(refs)), make([]string, len(refs)), make([]string, len(refs))
	for i, m := range refs {
		mers[i], envs[i], ids[i] = m.Scope.MerchantID, string(m.Scope.Env), m.ID
	}
	var rows []methodRow
	err := sqlx.SelectContext(ctx, r.q, &rows, `SELECT `+methodColumns+` FROM customer_payment_methods
		WHERE (merchant_id, environment, id) IN (SELECT * FROM unnest($1::text[], $2::text[], $3::text[]))`,
		pq.Array(mers), pq.Array(envs), pq.Array(ids))
	if err != nil {
		return nil, fmt.Errorf("customer_payment_methods: get many: %w", r.q.a.note(err))
	}
	out := make([]*billing.PaymentMethod, 0, len(rows))
	for _, row := range rows {
		out = append(out, row.method())
	}
	return out, nil
}

// Balances sums the balance transactions of each key in one statement, in the keys' order.
func (r customerRepo) Balances(ctx context.Context, keys []billing.BalanceKey) ([]int64, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	n := len(keys)
	mers, envs, custs, curs := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	for i, k := range keys {
		mers[i], envs[i], custs[i], curs[i] = k.Scope.MerchantID, string(k.Scope.Env), k.Customer, string(k.Currency)
	}
	var sums []int64
	err := sqlx.SelectContext(ctx, r.q, &sums, `SELECT COALESCE(SUM(t.amount), 0)::bigint
		FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS k(merchant_id, environment, customer_id, currency, ord)
		LEFT JOIN customer_balance_transactions t ON t.customer_id = k.customer_id AND t.currency = k.currency
			AND t.merchant_id = k.merchant_id AND t.environment = k.environment
		GROUP BY k.ord ORDER BY k.ord`, pq.Array(mers), pq.Array(envs), pq.Array(custs), pq.Array(curs))
	if err != nil {
		return nil, fmt.Errorf("customer_balance_transactions: sums: %w", r.q.a.note(err))
	}
	if len(sums) != n {
		return nil, fmt.Errorf("customer_balance_transactions: %d sums for %d keys", len(sums), n)
	}
	return sums, nil
}

// NextNumbers adds each block's count to its counter (created at the count) in one statement,
// the rows locked in key order, and answers each block's first number.
func (r invoiceRepo) NextNumbers(ctx context.Context, blocks []invoicing.NumberBlock) ([]int64, error) {
	if len(blocks) == 0 {
		return nil, nil
	}
	type key struct {
		mer, env string
		year     int
	}
	n := len(blocks)
	mers, envs, years, counts := make([]string, n), make([]string, n), make([]int64, n), make([]int64, n)
	at := make(map[key]int, n)
	for i, b := range blocks {
		k := key{b.Scope.MerchantID, string(b.Scope.Env), b.Year}
		if _, dup := at[k]; dup || b.Count < 1 {
			return nil, fmt.Errorf("invoice_number_counters: block %d (%s %s %d, %d numbers) repeats a key or asks for none",
				i, k.mer, k.env, k.year, b.Count)
		}
		at[k] = i
		mers[i], envs[i], years[i], counts[i] = k.mer, k.env, int64(k.year), int64(b.Count)
	}
	rows, err := r.q.QueryxContext(ctx, `INSERT INTO invoice_number_counters (merchant_id, environment, year, last)
		SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::bigint[]) AS k(merchant_id, environment, year, n)
		ORDER BY merchant_id, environment, year
		ON CONFLICT (merchant_id, environment, year) DO UPDATE SET last = invoice_number_counters.last + EXCLUDED.last
		RETURNING merchant_id, environment, year, last`, pq.Array(mers), pq.Array(envs), pq.Array(years), pq.Array(counts))
	if err != nil {
		return nil, fmt.Errorf("invoice_number_counters: next many: %w", r.q.a.note(err))
	}
	defer func() { _ = rows.Close() }()
	first := make([]int64, n)
	seen := 0
	for rows.Next() {
		var k key
		var last int64
		if err := rows.Scan(&k.mer, &k.env, &k.year, &last); err != nil {
			return nil, fmt.Errorf("invoice_number_counters: next many: %w", err)
		}
		i, ok := at[k]
		if !ok {
			return nil, fmt.Errorf("invoice_number_counters: next many: unasked counter %v", k)
		}
		first[i] = last - counts[i] + 1
		seen++
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("invoice_number_counters: next many: %w", r.q.a.note(err))
	}
	if seen != n {
		return nil, fmt.Errorf("invoice_number_counters: next many: %d counters for %d blocks", seen, n)
	}
	return first, nil
}

// invoiceInsertColumns are the columns an invoice is inserted with, in invoiceArgs' order
// after id, merchant_id, environment, and then its subscription and balances.
var invoiceInsertColumns = []string{"id", "merchant_id", "environment", "status", "number", "currency", "customer_name",
	"customer_email", "lines", "days_until_due", "memo", "metadata", "public_token", "issue_date", "due_date", "amount_paid",
	"payment_id", "created", "updated", "finalized_at", "paid_at", "voided_at", "uncollectible_at", "charging", "attempts",
	"pending_action", "processing", "dunning_stage", "next_payment_attempt", "processing_off_session", "saved_method",
	"subscription_id", "starting_balance", "ending_balance"}

var invoiceJSONColumns = map[string]bool{"lines": true, "metadata": true, "pending_action": true}

// InsertMany writes the invoices in one INSERT … SELECT over their rows.
func (r invoiceRepo) InsertMany(ctx context.Context, invs []*invoicing.Invoice) error {
	if len(invs) == 0 {
		return nil
	}
	rows := make([][]any, 0, len(invs))
	for _, inv := range invs {
		args, err := invoiceArgs(inv)
		if err != nil {
			return err
		}
		rows = append(rows, append(append([]any{inv.ID(), inv.Scope().MerchantID, string(inv.Scope().Env)}, args...),
			inv.Subscription(), inv.StartingBalance(), inv.EndingBalance()))
	}
	doc, err := jsonRows(invoiceInsertColumns, invoiceJSONColumns, rows)
	if err != nil {
		return err
	}
	res, err := r.q.ExecContext(ctx, `INSERT INTO invoices (id, merchant_id, environment, status, number, currency,
		customer_name, customer_email, lines, days_until_due, memo, metadata, public_token, issue_date, due_date, amount_paid,
		payment_id, created, updated, finalized_at, paid_at, voided_at, uncollectible_at, charging, attempts, pending_action,
		processing, dunning_stage, next_payment_attempt, processing_off_session, saved_method, subscription_id,
		starting_balance, ending_balance)
		SELECT id, merchant_id, environment, status, number, currency, customer_name, customer_email, lines, days_until_due,
			memo, COALESCE(metadata, '{}'), public_token, issue_date, due_date, amount_paid, payment_id, created, updated,
			finalized_at, paid_at, voided_at, uncollectible_at, charging, attempts, pending_action, processing, dunning_stage,
			next_payment_attempt, processing_off_session, saved_method, subscription_id, starting_balance, ending_balance
		FROM json_populate_recordset(NULL::invoices, $1::json)`, doc)
	if err != nil {
		return fmt.Errorf("invoices: insert %d: %w", len(invs), r.q.a.note(err))
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("invoices: insert %d: %w", len(invs), err)
	}
	if n != int64(len(invs)) {
		return fmt.Errorf("invoices: insert %d: %d rows written", len(invs), n)
	}
	return nil
}

// subscriptionSaveColumns are the columns a subscription is saved with, in subscriptionArgs'
// order after id, merchant_id, environment.
var subscriptionSaveColumns = []string{"id", "merchant_id", "environment", "status", "customer_id", "price_id", "quantity",
	"currency", "unit_amount", "interval", "interval_count", "anchor", "period_start", "period_end", "trial_start", "trial_end",
	"latest_invoice", "client_secret", "default_payment_method", "cancel_at_period_end", "canceled_at", "ended_at", "metadata",
	"created", "updated", "due_at", "payment_intent", "trial_notified", "open_invoice", "renewed_at", "next_charge", "failures",
	"unpaid_at", "pause_collection", "pending_update", "pending_lines"}

var subscriptionJSONColumns = map[string]bool{"default_payment_method": true, "metadata": true, "pause_collection": true,
	"pending_update": true, "pending_lines": true}

// SaveMany writes the subscriptions' states in one UPDATE … FROM their rows; each must be there.
func (r subscriptionRepo) SaveMany(ctx context.Context, subs []*billing.Subscription) error {
	if len(subs) == 0 {
		return nil
	}
	rows := make([][]any, 0, len(subs))
	seen := make(map[string]bool, len(subs))
	for _, sub := range subs {
		if seen[sub.ID()] {
			return fmt.Errorf("subscriptions: update many: %s twice", sub.ID())
		}
		seen[sub.ID()] = true
		args, err := subscriptionArgs(sub)
		if err != nil {
			return err
		}
		rows = append(rows, append([]any{sub.ID(), sub.Scope().MerchantID, string(sub.Scope().Env)}, args...))
	}
	doc, err := jsonRows(subscriptionSaveColumns, subscriptionJSONColumns, rows)
	if err != nil {
		return err
	}
	res, err := r.q.ExecContext(ctx, `UPDATE subscriptions s SET status = x.status, customer_id = x.customer_id,
		price_id = x.price_id, quantity = x.quantity, currency = x.currency, unit_amount = x.unit_amount,
		interval = x.interval, interval_count = x.interval_count, anchor = x.anchor, period_start = x.period_start,
		period_end = x.period_end, trial_start = x.trial_start, trial_end = x.trial_end, latest_invoice = x.latest_invoice,
		client_secret = x.client_secret, default_payment_method = x.default_payment_method,
		cancel_at_period_end = x.cancel_at_period_end, canceled_at = x.canceled_at, ended_at = x.ended_at,
		metadata = x.metadata, created = x.created, updated = x.updated, due_at = x.due_at,
		payment_intent = x.payment_intent, trial_notified = x.trial_notified, open_invoice = x.open_invoice,
		renewed_at = x.renewed_at, next_charge = x.next_charge, failures = x.failures, unpaid_at = x.unpaid_at,
		pause_collection = x.pause_collection, pending_update = x.pending_update, pending_lines = x.pending_lines
		FROM json_populate_recordset(NULL::subscriptions, $1::json) x
		WHERE s.id = x.id AND s.merchant_id = x.merchant_id AND s.environment = x.environment`, doc)
	if err != nil {
		return fmt.Errorf("subscriptions: update many: %w", r.q.a.note(err))
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("subscriptions: update many: %w", err)
	}
	if n != int64(len(subs)) {
		return fmt.Errorf("subscriptions: update many: %w (%d of %d rows)", billing.ErrSubscriptionMissing, n, len(subs))
	}
	return nil
}
