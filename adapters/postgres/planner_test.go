package postgres_test

import (
	"context"
	"strings"
	"testing"

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
