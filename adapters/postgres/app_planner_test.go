package postgres_test

import (
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/modules/payments"
)

// seedAppPayments gives merchant m (created when missing) n succeeded test invoice payments
// (no session rows needed), created one minute apart, in SQL.
func seedAppPayments(t *testing.T, db *sqlx.DB, m string, n int) {
	t.Helper()
	for _, q := range []string{
		`INSERT INTO merchants (id, name, country, email) VALUES ($1, 'Planner', 'DE', $1 || '@example.com')
			ON CONFLICT DO NOTHING`,
		`INSERT INTO payments (id, merchant_id, environment, payable_kind, payable_key, invoice_id, amount, currency,
			status, payment_method, card_brand, fee_service_eur, fee_psp_eur, fee_service_charge_currency, fee_currency,
			fee_rate_date, customer_name, customer_email, processor_ref, created)
		SELECT 'py_' || $1 || '_' || g, $1, 'test', 'invoice', 'in_' || $1 || '_' || g, 'in_' || $1 || '_' || g, 1000, 'EUR',
			'succeeded', 'card', 'visa', 10, 5, 10, 'EUR', current_date, 'n', 'e', 'ch_' || g, now() - g * interval '1 minute'
		FROM generate_series(1, $2::int) g`,
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

// The App API's pages (payments, payments of one status, products; limit and offset) walk
// the list index newest first and never sort the merchant's rows, in every statistics state,
// as AppReader runs them (sorts off). Without postgres.ListPredicate the list index was no
// candidate and every page, the first too, read and sorted all the merchant's payments (5.4 s
// at a million, docs/performance.md); with it but sorts on, an offset beyond the planner's
// fixed estimate of a merchant's rows still chose a sort of all of them.
func TestAppPagePlansInEveryStatisticsState(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	check := func(state, m string) {
		t.Helper()
		for _, c := range []struct {
			name, query, index string
			args               []any
			filter             string
		}{
			{"first payments page", postgres.AppFirstPaymentsSQL, "payments_scope", []any{m, "test", 26}, ""},
			{"payments page", postgres.AppPaymentsSQL, "payments_scope", []any{m, "test", 26, 10000}, ""},
			{"payments page of a status", postgres.AppPaymentsByStatusSQL, "payments_scope", []any{m, "test", 26, 0, "refunded"},
				"(status = 'refunded'::text)"},
			{"products page", postgres.AppProductsSQL, "products_scope", []any{m, "test", 26, 0}, ""},
		} {
			tx := db.MustBegin() // as sortedByIndex runs them
			tx.MustExec(`SET LOCAL enable_sort = off`)
			var lines []string
			if err := tx.Select(&lines, "EXPLAIN "+c.query, c.args...); err != nil {
				t.Fatal(err)
			}
			_ = tx.Rollback()
			p := strings.Join(lines, "\n")
			if !planOK(p, c.index, c.filter) {
				t.Errorf("%s, %s: want %s alone, no sort; plan:\n%s", state, c.name, c.index, p)
			}
			if c.name == "payments page" && !strings.Contains(p, "Index Only Scan using payments_scope ") {
				t.Errorf("%s, %s: want the offset found by an index-only scan of payments_scope; plan:\n%s", state, c.name, p)
			}
		}
	}
	// The summary: the window's whole days through the primary key of payment_volume_days,
	// its partial days through an index-only scan of payments_volume once the visibility map
	// knows the pages (VACUUM, as autovacuum runs it after inserts; without it an index-only
	// scan reads every row's page and is no better than the primary key), whatever the
	// statistics.
	volumes := func(state, m string) {
		t.Helper()
		if _, err := db.Exec(`INSERT INTO payment_volume_days (merchant_id, environment, day, currency, gross, refunded, fees, payments)
			SELECT merchant_id, environment, (created AT TIME ZONE 'UTC')::date, currency, sum(amount), sum(amount_refunded),
				sum(fee_service_charge_currency), count(*)
			FROM payments WHERE merchant_id = $1 AND status IN ('succeeded', 'partially_refunded', 'refunded', 'disputed')
			GROUP BY 1, 2, 3, 4 ON CONFLICT DO NOTHING`, m); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec("VACUUM payments"); err != nil {
			t.Fatal(err)
		}
		end := time.Now().Truncate(time.Second).Add(time.Second)
		from := end.AddDate(-1, 0, 0)
		first, last := postgres.VolumeDays(from, end)
		p := plan(t, db, postgres.AppVolumesSQL, m, "test", from, end, first, last)
		if strings.Count(p, "Index Only Scan using payments_volume ") != 2 || !strings.Contains(p, " payment_volume_days_pkey ") ||
			strings.Contains(p, "Seq Scan") || strings.Contains(p, "Heap Scan on payments") {
			t.Errorf("%s, analytics volumes: want the whole days by payment_volume_days_pkey, the partial ones by an index-only scan of payments_volume; plan:\n%s", state, p)
		}
	}
	// The statement states the index's predicate as the migration writes it: the captured
	// statuses, exactly.
	var in []string
	for _, st := range payments.CapturedStatuses {
		in = append(in, "'"+string(st)+"'")
	}
	if want := "status IN (" + strings.Join(in, ", ") + ")"; !strings.Contains(postgres.AppVolumesSQL, want) {
		t.Fatalf("AppVolumesSQL does not state %s (payments.CapturedStatuses, the predicate of payments_volume)", want)
	}
	// Other merchants' daily totals: a year of two currencies for each of 50 merchants.
	for _, q := range []string{
		`INSERT INTO merchants (id, name, country, email) SELECT 'm_other' || g, 'Other', 'DE', 'o' || g || '@example.com'
			FROM generate_series(1, 50) g`,
		`INSERT INTO payment_volume_days (merchant_id, environment, day, currency, gross, refunded, fees, payments)
			SELECT 'm_other' || g, 'test', current_date - d, c, 1000, 0, 10, 1
			FROM generate_series(1, 50) g, generate_series(0, 364) d, unnest(ARRAY['EUR', 'USD']) c`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	seedCatalog(t, db, "m_first", 2000)
	seedAppPayments(t, db, "m_first", 20000)
	check("never analysed", "m_first")
	volumes("never analysed", "m_first")
	if _, err := db.Exec("ANALYZE"); err != nil {
		t.Fatal(err)
	}
	check("analysed", "m_first")
	volumes("analysed", "m_first")
	seedCatalog(t, db, "m_new", 2000)
	seedAppPayments(t, db, "m_new", 20000)
	check("statistics without the merchant", "m_new")
	volumes("statistics without the merchant", "m_new")
}
