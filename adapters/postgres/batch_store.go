package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

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

// columnNames splits a comma-separated column list (one of the constants the single-row and
// the batch statements of a table share) into the names jsonRows keys its rows by.
func columnNames(list string) []string {
	out := strings.Split(list, ",")
	for i, c := range out {
		out[i] = strings.TrimSpace(c)
	}
	return out
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

// invoiceInsertColumns are invoiceInsertList's names, which InsertMany's rows are keyed by.
var invoiceInsertColumns = columnNames(invoiceInsertList)

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
	res, err := r.q.ExecContext(ctx, `INSERT INTO invoices (`+invoiceInsertList+`)
		SELECT `+invoiceInsertList+`
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

// invoiceSaveColumns are the key and invoiceStateList's names, which SaveMany's rows are
// keyed by.
var invoiceSaveColumns = columnNames("id, merchant_id, environment, " + invoiceStateList)

// SaveMany writes the invoices' states (invoiceStateList, as Save does each) in one UPDATE over
// their rows; each must be there, once.
func (r invoiceRepo) SaveMany(ctx context.Context, invs []*invoicing.Invoice) error {
	if len(invs) == 0 {
		return nil
	}
	rows := make([][]any, 0, len(invs))
	seen := make(map[string]bool, len(invs))
	for _, inv := range invs {
		if seen[inv.ID()] {
			return fmt.Errorf("invoices: update many: %s twice", inv.ID())
		}
		seen[inv.ID()] = true
		args, err := invoiceArgs(inv)
		if err != nil {
			return err
		}
		rows = append(rows, append([]any{inv.ID(), inv.Scope().MerchantID, string(inv.Scope().Env)}, args...))
	}
	doc, err := jsonRows(invoiceSaveColumns, invoiceJSONColumns, rows)
	if err != nil {
		return err
	}
	res, err := r.q.ExecContext(ctx, `WITH x AS (SELECT * FROM json_populate_recordset(NULL::invoices, $1::json))
		UPDATE invoices i SET (`+invoiceStateList+`) = (SELECT `+invoiceStateList+` FROM x
			WHERE x.id = i.id AND x.merchant_id = i.merchant_id AND x.environment = i.environment)
		WHERE (i.merchant_id, i.environment, i.id) IN (SELECT merchant_id, environment, id FROM x)`, doc)
	if err != nil {
		return fmt.Errorf("invoices: update %d: %w", len(invs), r.q.a.note(err))
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("invoices: update %d: %w", len(invs), err)
	}
	if n != int64(len(invs)) {
		return fmt.Errorf("invoices: update %d: %w (%d rows)", len(invs), invoicing.ErrNotFound, n)
	}
	return nil
}

// subscriptionSaveColumns are the key and subscriptionStateList's names, which SaveMany's rows
// are keyed by.
var subscriptionSaveColumns = columnNames("id, merchant_id, environment, " + subscriptionStateList)

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
	res, err := r.q.ExecContext(ctx, `WITH x AS (SELECT * FROM json_populate_recordset(NULL::subscriptions, $1::json))
		UPDATE subscriptions s SET (`+subscriptionStateList+`) = (SELECT `+subscriptionStateList+` FROM x
			WHERE x.id = s.id AND x.merchant_id = s.merchant_id AND x.environment = s.environment)
		WHERE (s.merchant_id, s.environment, s.id) IN (SELECT merchant_id, environment, id FROM x)`, doc)
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

// LockMany reads the subscriptions FOR UPDATE in one statement, locked and answered in the
// order of merchant, environment and id; one that is not there is missing from the answer.
func (r subscriptionRepo) LockMany(ctx context.Context, refs []billing.SubscriptionRef) ([]*billing.Subscription, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	mers, envs, ids := make([]string, len(refs)), make([]string, len(refs)), make([]string, len(refs))
	for i, ref := range refs {
		mers[i], envs[i], ids[i] = ref.Scope.MerchantID, string(ref.Scope.Env), ref.ID
	}
	var rows []subscriptionRow
	if err := sqlx.SelectContext(ctx, r.q, &rows, `SELECT `+subscriptionColumns+` FROM subscriptions
		WHERE (merchant_id, environment, id) IN (SELECT * FROM unnest($1::text[], $2::text[], $3::text[]))
		ORDER BY merchant_id, environment, id FOR UPDATE`, pq.Array(mers), pq.Array(envs), pq.Array(ids)); err != nil {
		return nil, fmt.Errorf("subscriptions: lock many: %w", r.q.a.note(err))
	}
	out := make([]*billing.Subscription, 0, len(rows))
	for i := range rows {
		sub, err := rows[i].subscription()
		if err != nil {
			return nil, err
		}
		out = append(out, sub)
	}
	return out, nil
}

// DeleteForInvoices removes, with one statement, each subscription's pending setup that was
// made for the invoice its ref names.
func (r setupRepo) DeleteForInvoices(ctx context.Context, refs []billing.SetupRef) error {
	if len(refs) == 0 {
		return nil
	}
	n := len(refs)
	mers, envs, subs, invs := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	for i, ref := range refs {
		mers[i], envs[i], subs[i], invs[i] = ref.Scope.MerchantID, string(ref.Scope.Env), ref.Subscription, ref.Invoice
	}
	if _, err := r.q.ExecContext(ctx, `DELETE FROM subscription_setups
		WHERE (merchant_id, environment, subscription_id, invoice_id) IN
			(SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]))`,
		pq.Array(mers), pq.Array(envs), pq.Array(subs), pq.Array(invs)); err != nil {
		return fmt.Errorf("subscription_setups: delete %d for their invoices: %w", n, r.q.a.note(err))
	}
	return nil
}
