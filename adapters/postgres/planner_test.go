package postgres_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
)

// seedCatalog gives merchant m n products with one price each, in SQL (fast).
func seedCatalog(t *testing.T, db *sqlx.DB, m string, n int) {
	t.Helper()
	ctx := context.Background()
	for _, q := range []string{
		`INSERT INTO merchants (id, name, country, email) VALUES ($1, 'Planner', 'DE', $1 || '@example.com')`,
		`INSERT INTO products (id, merchant_id, environment, name, active, created, updated)
			SELECT 'prod_' || $1 || '_' || g, $1, 'test', 'p', true, now(), now() FROM generate_series(1, $2::int) g`,
		`INSERT INTO prices (id, merchant_id, environment, product_id, currency, unit_amount, tax_behavior, active, created, updated)
			SELECT 'price_' || $1 || '_' || g, $1, 'test', 'prod_' || $1 || '_' || g, 'EUR', 100, 'unspecified', true, now(), now()
			FROM generate_series(1, $2::int) g`,
	} {
		args := []any{m}
		if strings.Count(q, "$2") > 0 {
			args = append(args, n)
		}
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
}

// plan is EXPLAIN's text for query.
func plan(t *testing.T, db *sqlx.DB, query string, args ...any) string {
	t.Helper()
	var lines []string
	if err := db.SelectContext(context.Background(), &lines, "EXPLAIN "+query, args...); err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

// A merchant whose rows arrived after the last ANALYZE (a new merchant importing its catalog)
// is looked up through the index that matches the whole query, not through its list index
// filtered row by row: the lookups do not depend on the statistics knowing the merchant
// (migration 00018). Before it, each of these plans walked prices_scope / products_scope_*
// over every row of the merchant.
func TestLookupsIgnoreStaleMerchantStatistics(t *testing.T) {
	db := pgtest.New(t)
	ctx := context.Background()
	seedCatalog(t, db, "m_old", 3000)
	if _, err := db.ExecContext(ctx, "ANALYZE"); err != nil {
		t.Fatal(err)
	}
	seedCatalog(t, db, "m_new", 3000) // unknown to the statistics

	cases := []struct {
		name, query string
		args        []any
		index, cond string // the index and a column its Index Cond must name
	}{
		{"prices of a product", postgres.CatalogPricesOfSQL, []any{"m_new", "test", pq.StringArray{"prod_m_new_7"}}, "prices_product", "product_id"},
		{"prices of a product, locked", postgres.CatalogPricesOfSQL + " FOR UPDATE OF p", []any{"m_new", "test", pq.StringArray{"prod_m_new_7"}}, "prices_product", "product_id"},
		{"price by id", `SELECT * FROM prices WHERE merchant_id = $1 AND environment = $2 AND id = $3`, []any{"m_new", "test", "price_m_new_7"}, "prices_pkey", "id ="},
		{"product by id", `SELECT * FROM products WHERE id = $1 AND merchant_id = $2 AND environment = $3`, []any{"prod_m_new_7", "m_new", "test"}, "products_pkey", "id ="},
	}
	for _, c := range cases {
		p := plan(t, db, c.query, c.args...)
		cond := ""
		for _, l := range strings.Split(p, "\n") {
			if strings.Contains(l, "Index Cond:") {
				cond = l
			}
		}
		if !strings.Contains(p, c.index) || !strings.Contains(cond, c.cond) {
			t.Errorf("%s: want an index scan of %s with %s in its condition; plan:\n%s", c.name, c.index, c.cond, p)
		}
	}
}

// Every table with a merchant_id column leaves it without statistics (see migration 00018): a
// new table must say so in its own migration.
func TestTenantColumnsHaveNoStatistics(t *testing.T) {
	db := pgtest.New(t)
	var tables []string
	if err := db.SelectContext(context.Background(), &tables, `
		SELECT c.relname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
		JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = current_schema() AND c.relkind = 'r' AND a.attname = 'merchant_id'
		  AND NOT a.attisdropped AND COALESCE(a.attstattarget, -1) <> 0
		ORDER BY 1`); err != nil {
		t.Fatal(err)
	}
	if len(tables) > 0 {
		t.Fatalf("merchant_id has planner statistics in %v: add ALTER TABLE … ALTER COLUMN merchant_id SET STATISTICS 0 to the migration that creates them", tables)
	}
}

// In a database that has never been analysed (a fresh install before autovacuum's first
// ANALYZE) the prices of a product are found through prices_product with the product in the
// index condition, for one product and for several, locked or not, and so they are with
// statistics that do not know the merchant and with fresh ones (migration 00019). Before it,
// every never-analysed plan walked prices_scope and filtered every price of the merchant.
func TestPricesOfProductPlanInEveryStatisticsState(t *testing.T) {
	db := pgtest.New(t)
	ctx := context.Background()
	check := func(state, m string) {
		t.Helper()
		for _, lock := range []string{"", " FOR UPDATE OF p"} {
			for _, ids := range []pq.StringArray{{"prod_" + m + "_7"}, {"prod_" + m + "_7", "prod_" + m + "_8"}} {
				p := plan(t, db, postgres.CatalogPricesOfSQL+lock, m, "test", ids)
				ok := false
				for _, l := range strings.Split(p, "\n") {
					if strings.Contains(l, "Index Scan using prices_product on prices") {
						ok = true
					}
					if strings.Contains(l, "Filter:") || strings.Contains(l, "prices_scope") || strings.Contains(l, "Seq Scan on prices") {
						ok = false
						break
					}
				}
				if !ok {
					t.Errorf("%s, %d products, lock %q: want an index scan of prices_product and no filter; plan:\n%s", state, len(ids), lock, p)
				}
			}
		}
	}
	seedCatalog(t, db, "m_first", 3000)
	check("never analysed", "m_first")
	if _, err := db.ExecContext(ctx, "ANALYZE"); err != nil {
		t.Fatal(err)
	}
	check("analysed", "m_first")
	seedCatalog(t, db, "m_new", 3000)
	check("statistics without the merchant", "m_new")
}

// planOK reports whether p scans index and nothing else: no sequential scan, no sort, and no
// filter (every condition in the index) other than the filters allowed.
func planOK(p, index string, allowed ...string) bool {
	if !strings.Contains(p, "using "+index+" ") || strings.Contains(p, "Seq Scan") || strings.Contains(p, "Sort") {
		return false
	}
	for _, l := range strings.Split(p, "\n") {
		if f, ok := strings.CutPrefix(strings.TrimSpace(l), "Filter: "); ok && !slices.Contains(allowed, f) {
			return false
		}
	}
	return true
}

// In a database never analysed, a lookup by primary key takes the primary key in every table, whatever other indexes lead with the tenant's columns (migration 00023):
// list indexes are partial on postgres.ListPredicate, which no lookup states, and other unique
// keys lead with their own column. Before it, the lookups of ten tables (sessions, payments,
// events, prices, …) walked a list or unique index of the merchant and filtered it.
func TestLookupByPrimaryKeyInEveryTable(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	var keys []struct {
		Table string `db:"relname"`
		Index string `db:"indexname"`
		Cols  string `db:"cols"`
	}
	if err := db.Select(&keys, `SELECT c.relname, i.relname AS indexname,
		string_agg(a.attname || ':' || format_type(a.atttypid, a.atttypmod), ',' ORDER BY k.ord) AS cols
		FROM pg_index x JOIN pg_class c ON c.oid = x.indrelid JOIN pg_class i ON i.oid = x.indexrelid
		JOIN pg_namespace n ON n.oid = c.relnamespace
		CROSS JOIN LATERAL unnest(x.indkey) WITH ORDINALITY k(attnum, ord)
		JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
		WHERE n.nspname = current_schema() AND x.indisprimary
		GROUP BY c.relname, i.relname ORDER BY 1`); err != nil {
		t.Fatal(err)
	}
	if len(keys) < 20 {
		t.Fatalf("only %d tables with a primary key", len(keys))
	}
	check := func(state string) {
		for _, k := range keys {
			var conds []string
			for _, c := range strings.Split(k.Cols, ",") {
				name, typ, _ := strings.Cut(c, ":")
				lit := "'1'"
				switch {
				case strings.HasPrefix(typ, "timestamp"), typ == "date":
					lit = "'epoch'"
				case typ == "uuid":
					lit = "'00000000-0000-4000-8000-000000000000'"
				}
				conds = append(conds, name+" = "+lit)
			}
			where := strings.Join(conds, " AND ")
			for _, q := range []string{
				"SELECT * FROM " + k.Table + " WHERE " + where,
				"SELECT * FROM " + k.Table + " WHERE " + where + " FOR UPDATE",
			} {
				if p := plan(t, db, q); !planOK(p, k.Index) {
					t.Errorf("%s, %s: want the primary key %s and no filter; plan:\n%s", state, q, k.Index, p)
				}
			}
		}
	}
	// (Analysed while empty, a table is scanned, which is right; TestSweepAndListPlans… checks
	// analysed tables that hold rows.)
	check("never analysed")
}

// seedSessions gives merchant m n open test sessions expiring one second apart, in SQL (fast).
func seedSessions(t *testing.T, db *sqlx.DB, m string, n int) {
	t.Helper()
	for _, q := range []string{
		`INSERT INTO merchants (id, name, country, email) VALUES ($1, 'Planner', 'DE', $1 || '@example.com')`,
		`INSERT INTO checkout_sessions (id, merchant_id, environment, checkout_mode, status, amount, currency, client_secret,
			client_secret_hash, checkout_url, embed_url, customer_name, customer_email, created, expires_at)
		SELECT 'cs_' || $1 || '_' || g, $1, 'test', 'payment', 'open', 100, 'EUR', 's' || $1 || g, sha256(('s' || $1 || g)::bytea),
			'u', 'u', 'n', 'e', now(), now() + g * interval '1 second' FROM generate_series(1, $2::int) g`,
	} {
		args := []any{m}
		if strings.Contains(q, "$2") {
			args = append(args, n)
		}
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatal(err)
		}
	}
}

// The queries of the session expiry sweep and of a test clock advance (claim a scope's due
// sessions, its next due time, save one session, the due payments, the advances to resume)
// and the lists run through indexes that need no statistics, with no sort and no filter of the
// merchant's rows: on a table never analysed holding 12,000 sessions of the merchant (the
// state in which a sweep of those sessions took 41–62 ms per session), with statistics that do
// not know the merchant, and analysed.
func TestSweepAndListPlansInEveryStatisticsState(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	type c struct {
		name, query, index string
		args               []any
		filter             string // a filter the index leaves (a condition not in it)
		empty              bool   // the table holds no row: checked never analysed only (analysed empty, a scan is right)
	}
	const charging, claimFilter = "(charging_attempt IS NULL)", "((charging_attempt IS NULL) AND (status = 'open'::text))"
	cases := func(m string) []c {
		return []c{
			{"session by id, locked", `SELECT * FROM checkout_sessions WHERE merchant_id = $1 AND environment = $2 AND id = $3 FOR UPDATE`,
				"checkout_sessions_pkey", []any{m, "test", "cs_" + m + "_77"}, "", false},
			{"session saved", `UPDATE checkout_sessions SET status = 'expired' WHERE merchant_id = $1 AND environment = $2 AND id = $3`,
				"checkout_sessions_pkey", []any{m, "test", "cs_" + m + "_77"}, "", false},
			{"claim due sessions of a scope", `SELECT * FROM checkout_sessions s WHERE s.status = 'open' AND s.expires_at <= $3
				AND s.charging_attempt IS NULL AND s.merchant_id = $1 AND s.environment = $2
				ORDER BY s.expires_at, s.id LIMIT 100 FOR UPDATE OF s SKIP LOCKED`,
				"checkout_sessions_scope_due", []any{m, "test", time.Now().AddDate(2, 0, 0)}, claimFilter, false},
			{"next due session", postgres.SessionNextDueSQL, "checkout_sessions_scope_due", []any{m, "test", time.Now().AddDate(2, 0, 0)}, charging, false},
			{"sessions listed", `SELECT * FROM checkout_sessions WHERE merchant_id = $1 AND environment = $2 AND ` + postgres.ListPredicate +
				` ORDER BY seq DESC LIMIT 11`, "checkout_sessions_scope", []any{m, "test"}, "", false},
			{"payments listed", `SELECT * FROM payments WHERE merchant_id = $1 AND environment = $2 AND ` + postgres.ListPredicate +
				` ORDER BY seq DESC LIMIT 11`, "payments_scope", []any{m, "test"}, "", true},
			{"payment by id", `SELECT * FROM payments WHERE merchant_id = $1 AND environment = $2 AND id = $3 FOR UPDATE`,
				"payments_pkey", []any{m, "test", "pi_1"}, "", true},
			{"next due payment", `SELECT min(due_at) FROM payments WHERE merchant_id = $1 AND environment = $2 AND due_at <= $3`,
				"payments_due_scope", []any{m, "test", time.Now()}, "", true},
			{"next due dispute", `SELECT min(due_at) FROM disputes WHERE merchant_id = $1 AND environment = $2 AND due_at <= $3`,
				"disputes_due_scope", []any{m, "test", time.Now()}, "", true},
			{"dispute by id, locked", `SELECT * FROM disputes WHERE merchant_id = $1 AND environment = $2 AND id = $3 FOR UPDATE`,
				"disputes_pkey", []any{m, "test", "dp_1"}, "", true},
			{"events listed", `SELECT * FROM events WHERE merchant_id = $1 AND environment = $2 AND ` + postgres.ListPredicate +
				` ORDER BY seq DESC LIMIT 11`, "events_scope", []any{m, "test"}, "", true},
			{"customer by e-mail, locked", `SELECT * FROM customers WHERE merchant_id = $1 AND environment = $2 AND email_key = $3 FOR UPDATE`,
				"customers_email", []any{m, "test", "ada@example.com"}, "", true},
			{"saved method by processor reference", `SELECT * FROM customer_payment_methods WHERE merchant_id = $1 AND environment = $2
				AND processor_ref = $3`, "customer_payment_methods_ref", []any{m, "test", "sbx_pm"}, "", true},
			{"customer's saved methods listed", `SELECT * FROM customer_payment_methods WHERE merchant_id = $1 AND environment = $2
				AND customer_id = $3 AND ` + postgres.ListPredicate + ` ORDER BY seq DESC`, "customer_payment_methods_list",
				[]any{m, "test", "cus_1"}, "", true},
			{"customer's balance in a currency", `SELECT COALESCE(SUM(amount), 0)::bigint FROM customer_balance_transactions
				WHERE customer_id = $1 AND currency = $2 AND merchant_id = $3 AND environment = $4`,
				"customer_balance_transactions_customer", []any{"cus_1", "EUR", m, "test"}, "", true},
			{"customer's balances", `SELECT currency, SUM(amount)::bigint AS balance FROM customer_balance_transactions
				WHERE customer_id = $1 AND merchant_id = $2 AND environment = $3 GROUP BY currency ORDER BY currency`,
				"customer_balance_transactions_customer", []any{"cus_1", m, "test"}, "", true},
			{"customer's balance transactions listed", `SELECT * FROM customer_balance_transactions WHERE merchant_id = $1 AND environment = $2
				AND customer_id = $3 AND ` + postgres.ListPredicate + ` ORDER BY seq DESC LIMIT 11`, "customer_balance_transactions_list",
				[]any{m, "test", "cus_1"}, "", true},
			{"subscriptions listed", `SELECT * FROM subscriptions WHERE merchant_id = $1 AND environment = $2 AND ` + postgres.ListPredicate +
				` ORDER BY seq DESC LIMIT 11`, "subscriptions_list", []any{m, "test"}, "", true},
			{"subscriptions of a status listed", `SELECT * FROM subscriptions WHERE merchant_id = $1 AND environment = $2 AND status = $3 AND ` +
				postgres.ListPredicate + ` ORDER BY seq DESC LIMIT 11`, "subscriptions_list_status", []any{m, "test", "active"}, "", true},
			{"subscriptions of a customer listed", `SELECT * FROM subscriptions WHERE merchant_id = $1 AND environment = $2 AND customer_id = $3 AND ` +
				postgres.ListPredicate + ` ORDER BY seq DESC LIMIT 11`, "subscriptions_list_customer", []any{m, "test", "cus_1"}, "", true},
			{"subscriptions of a price listed", `SELECT * FROM subscriptions WHERE merchant_id = $1 AND environment = $2 AND price_id = $3 AND ` +
				postgres.ListPredicate + ` ORDER BY seq DESC LIMIT 11`, "subscriptions_list_price", []any{m, "test", "price_1"}, "", true},
			{"subscription by its first payment", `SELECT * FROM subscriptions WHERE payment_intent = $1`,
				"subscriptions_payment_intent", []any{"pi_1"}, "", true},
			{"next due subscription", postgres.SubscriptionNextDueSQL, "subscriptions_scope_due", []any{m, "test", time.Now()}, "", true},
			{"advances to resume", postgres.PendingAdvancesSQL, "test_clocks_advancing", []any{1, 100}, "", true},
			{"daily volume", postgres.VolumeByDaySQL, "payments_volume",
				[]any{m, "test", pq.Array([]string{"succeeded", "refunded"}), time.Now().AddDate(0, 0, -90), time.Now()}, "", true},
			{"balance read", `SELECT merchant_id, environment, currency, account, balance FROM ledger_balances
				WHERE merchant_id = $1 AND environment = $2 AND account IN ('available', 'pending') ORDER BY currency`,
				"ledger_balances_pkey", []any{m, "test"}, "(account = ANY ('{available,pending}'::text[]))", true},
			{"balance transactions listed", `SELECT * FROM balance_transactions WHERE merchant_id = $1 AND environment = $2 AND ` +
				postgres.ListPredicate + ` ORDER BY seq DESC LIMIT 11`, "balance_transactions_list", []any{m, "test"}, "", true},
			{"balance transactions of a payment", `SELECT * FROM balance_transactions WHERE merchant_id = $1 AND environment = $2
				AND payment_id = $3 AND ` + postgres.ListPredicate + ` ORDER BY seq DESC LIMIT 11`, "balance_transactions_list_payment",
				[]any{m, "test", "py_1"}, "", true},
			{"payouts listed", `SELECT * FROM payouts WHERE merchant_id = $1 AND environment = $2 AND ` + postgres.ListPredicate +
				` ORDER BY seq DESC LIMIT 11`, "payouts_list", []any{m, "test"}, "", true},
			{"payouts arrived", `SELECT * FROM payouts p WHERE p.status = 'pending' AND p.arrival_date <= $1 AND p.sent_at IS NOT NULL
				ORDER BY p.arrival_date, p.merchant_id, p.environment, p.id LIMIT 100`, "payouts_arrival", []any{time.Now()}, "(sent_at IS NOT NULL)", true},
			{"customers listed", `SELECT * FROM customers WHERE merchant_id = $1 AND environment = $2 AND ` + postgres.ListPredicate +
				` ORDER BY seq DESC LIMIT 11`, "customers_list", []any{m, "test"}, "", true},
			{"customer by e-mail", `SELECT * FROM customers WHERE merchant_id = $1 AND environment = $2 AND email_key = $3`,
				"customers_email", []any{m, "test", "ada@example.com"}, "", true},
			{"recurring revenue groups", postgres.RecurringGroupsSQL, "subscriptions_list_status", []any{m, "test", "active"}, "", true},
			{"MRR history days", postgres.MRRDaysSQL, "mrr_snapshots_pkey", []any{m, "test", "2026-08-30", "2026-11-27"}, "", true},
			{"next MRR snapshot", postgres.MRRNextSQL, "mrr_snapshot_marks_pkey", []any{m, "test", time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)},
				"(next_at <= '2026-11-27 00:00:00+00'::timestamp with time zone)", true},
			{"invoices of a customer's e-mail", postgres.InvoicesByEmailSQL, "invoices_customer_email", []any{m, "test", "ada@example.com", 20}, "", true},
			{"payments of a customer's e-mail", postgres.PaymentsByEmailSQL, "payments_customer_email", []any{m, "test", "ada@example.com", 20}, "", true},
		}
	}
	check := func(state, m string) {
		t.Helper()
		for _, c := range cases(m) {
			if c.empty && state != "never analysed" {
				continue
			}
			var p string
			if c.name == "claim due sessions of a scope" { // as claimDueSessions runs it
				tx := db.MustBegin()
				tx.MustExec(`SET LOCAL enable_sort = off`)
				var lines []string
				if err := tx.Select(&lines, "EXPLAIN "+c.query, c.args...); err != nil {
					t.Fatal(err)
				}
				_ = tx.Rollback()
				p = strings.Join(lines, "\n")
			} else {
				p = plan(t, db, c.query, c.args...)
			}
			if c.name == "daily volume" { // an aggregate over the scope's rows, as the overview's sums: grouped and sorted
				if !strings.Contains(p, "using "+c.index+" ") || strings.Contains(p, "Seq Scan on payments") {
					t.Errorf("%s, %s: want %s; plan:\n%s", state, c.name, c.index, p)
				}
				continue
			}
			if c.name == "recurring revenue groups" { // an aggregate over one status's rows of the scope: grouped and sorted
				if !strings.Contains(p, "using "+c.index+" ") || !strings.Contains(p, "status = 'active'::text))") ||
					strings.Contains(p, "Seq Scan on subscriptions") || strings.Contains(p, "Filter:") {
					t.Errorf("%s, %s: want %s with the status in its condition; plan:\n%s", state, c.name, c.index, p)
				}
				continue
			}
			if c.name == "advances to resume" { // its filter is the owner's liveness
				if !strings.Contains(p, "using "+c.index+" ") || strings.Contains(p, "Seq Scan on test_clocks") {
					t.Errorf("%s, %s: want %s; plan:\n%s", state, c.name, c.index, p)
				}
				continue
			}
			if !planOK(p, c.index, c.filter) {
				t.Errorf("%s, %s: want %s alone; plan:\n%s", state, c.name, c.index, p)
			}
		}
	}
	seedSessions(t, db, "m_first", 12000)
	check("never analysed", "m_first")
	if _, err := db.ExecContext(ctx, "ANALYZE"); err != nil {
		t.Fatal(err)
	}
	check("analysed", "m_first")
	seedSessions(t, db, "m_new", 12000)
	check("statistics without the merchant", "m_new")
}
