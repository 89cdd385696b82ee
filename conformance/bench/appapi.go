package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/kassa-pay/kassa/conformance/harness"
)

// The App API's read endpoints on a merchant with appPayments payments (issue: App API
// performance): the payments list at three offsets, one payment by id, and the analytics
// summary over 365 days. The list and the lookup are compared with the primary-key SELECT
// floor in interleaved windows; the summary is held to an absolute p99 (its cost grows with
// the payments in the window, not with the machine's round trips).
//
// The payments are written by one INSERT … SELECT over generate_series (no sessions, no
// events: only what the App API reads), created evenly over the last 364 days in seq order,
// so "newest first" is also "latest created first". A payment is an invoice payment (the
// payments table has no foreign key to invoices), so no session row is needed. The mix:
// EUR 80 %, USD 15 %, GBP 5 %; 5 % failed, 5 % partially refunded, 2 % refunded, the rest
// succeeded. VACUUM ANALYZE afterwards is the state autovacuum leaves after a bulk insert.

const (
	appPayments    = 1_000_000
	appListName    = "app api: list payments (limit 25), offset "
	appGetName     = "app api: retrieve payment"
	appSummaryName = "app api: analytics summary, 365 days, 1 connection"
)

// appListOffsets are the offsets whose cost is reported.
var appListOffsets = []int{0, 10_000, 100_000}

// seedPaymentsSQL writes $2 payments for merchant $1 in the test environment. Ids are
// py_bench<g, 16 digits>, so a random payment's id is known without reading it back.
const seedPaymentsSQL = `INSERT INTO payments (id, merchant_id, environment, payable_kind, payable_key, invoice_id,
	amount, amount_refunded, currency, status, payment_method, card_brand, card_last4, card_country, card_funding,
	card_exp_month, card_exp_year, fee_service_eur, fee_psp_eur, fee_service_charge_currency, fee_currency,
	fee_rate_date, customer_name, customer_email, reference, processor_ref, created)
SELECT 'py_bench' || lpad(g::text, 16, '0'), $1, 'test', 'invoice', 'in_bench' || g, 'in_bench' || g,
	a.amount,
	CASE WHEN g % 20 = 1 THEN a.amount / 2 WHEN g % 50 = 2 THEN a.amount ELSE 0 END,
	a.currency,
	CASE WHEN g % 20 = 0 THEN 'failed' WHEN g % 20 = 1 THEN 'partially_refunded' WHEN g % 50 = 2 THEN 'refunded' ELSE 'succeeded' END,
	'card', 'visa', '4242', 'DE', 'credit', 12, 2030,
	a.amount * 14 / 1000 + 25, 20, a.amount * 14 / 1000 + 25, a.currency, current_date,
	'Ada Lovelace', 'ada@example.com', 'order-' || g, 'ch_bench' || g,
	$3::timestamptz - (($2 - g) * (364 * 86400.0 / $2)) * interval '1 second'
FROM generate_series(1, $2::int) g
CROSS JOIN LATERAL (SELECT 500 + (g::bigint * 7919) % 20000 AS amount,
	CASE WHEN g % 20 < 16 THEN 'EUR' WHEN g % 20 < 19 THEN 'USD' ELSE 'GBP' END AS currency) a`

// seedVolumeDaysSQL writes merchant $1's daily volume totals (payment_volume_days) from its
// payments, as the payments module keeps them when it writes a payment (and as migration
// 00055 backfills them): the payments above are written in SQL, beside the module.
const seedVolumeDaysSQL = `INSERT INTO payment_volume_days (merchant_id, environment, day, currency, gross, refunded, fees, payments)
SELECT merchant_id, environment, (created AT TIME ZONE 'UTC')::date, currency,
	sum(amount), sum(amount_refunded), sum(fee_service_charge_currency), count(*)
FROM payments WHERE merchant_id = $1 AND status IN ('succeeded', 'partially_refunded', 'refunded', 'disputed')
GROUP BY 1, 2, 3, 4`

// appBench is the installing merchant's test token and its payments' count.
type appBench struct {
	base  string
	token string
	n     int
	seed  time.Duration // how long writing the payments took (INSERT, then VACUUM ANALYZE)
}

// setupAppBench creates a merchant, registers an app and installs it there through the
// operator API, and writes n payments for the merchant in SQL.
func setupAppBench(ctx context.Context, t *harness.Target, n int) (*appBench, error) {
	if t.DatabaseURL == "" {
		return nil, fmt.Errorf("needs the database URL (the payments are written in SQL)")
	}
	m, err := createMerchant(ctx, t.BaseURL, t.OperatorToken, "Bench app merchant")
	if err != nil {
		return nil, err
	}
	c := newClient(1)
	body := `{"name":"Bench app","redirect_uris":["https://app.example/cb"],"scopes":["payments:read","analytics:read"]}`
	st, _, b, err := do(ctx, c, http.MethodPost, t.BaseURL+"/operator/v1/apps", t.OperatorToken, nil, body)
	if err := check(st, b, err); err != nil {
		return nil, fmt.Errorf("operator API: create app: %w", err)
	}
	var app struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(b, &app); err != nil || app.ID == "" {
		return nil, fmt.Errorf("operator API: create app: unexpected body %.200s", b)
	}
	st, _, b, err = do(ctx, c, http.MethodPost, t.BaseURL+"/operator/v1/apps/"+app.ID+"/installations", t.OperatorToken, nil,
		`{"merchant_id":"`+m.ID+`"}`)
	if err := check(st, b, err); err != nil {
		return nil, fmt.Errorf("operator API: install app: %w", err)
	}
	var inst struct {
		TestToken string `json:"test_token"`
	}
	if err := json.Unmarshal(b, &inst); err != nil || inst.TestToken == "" {
		return nil, fmt.Errorf("operator API: install app: unexpected body %.200s", b)
	}
	db, err := openFloorDB(ctx, t.DatabaseURL, 1)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	fmt.Fprintf(os.Stderr, "bench: writing %d payments for the app's merchant …\n", n)
	start := time.Now()
	// The clock of the test environment is the real one (no test clock advanced): created
	// runs up to a minute ago.
	if _, err := db.ExecContext(ctx, seedPaymentsSQL, m.ID, n, time.Now().Add(-time.Minute)); err != nil {
		return nil, fmt.Errorf("write the payments: %w", err)
	}
	if _, err := db.ExecContext(ctx, seedVolumeDaysSQL, m.ID); err != nil {
		return nil, fmt.Errorf("write the daily volume totals: %w", err)
	}
	if _, err := db.ExecContext(ctx, `VACUUM ANALYZE payments, payment_volume_days`); err != nil {
		return nil, fmt.Errorf("vacuum the payments: %w", err)
	}
	ab := &appBench{base: t.BaseURL + "/app", token: inst.TestToken, n: n, seed: time.Since(start)}
	fmt.Fprintf(os.Stderr, "bench: wrote %d payments in %.1f s\n", n, ab.seed.Seconds())
	return ab, nil
}

// get is one App API GET whose answer must be 200 and JSON of the wanted object.
func (ab *appBench) get(ctx context.Context, c *http.Client, path, object string) error {
	st, _, b, err := do(ctx, c, http.MethodGet, ab.base+path, ab.token, nil, "")
	if err := check(st, b, err); err != nil {
		return err
	}
	var o struct {
		Object string            `json:"object"`
		Data   []json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(b, &o); err != nil || o.Object != object {
		return fmt.Errorf("GET %s: unexpected body %.200s", path, b)
	}
	if object == "list" && len(o.Data) != 25 {
		return fmt.Errorf("GET %s: %d payments, want 25", path, len(o.Data))
	}
	return nil
}

// list pages the payments at offset, 25 at a time.
func (ab *appBench) list(offset int) scenario {
	path := "/v1/payments?limit=25&offset=" + strconv.Itoa(offset)
	return scenario{name: appListName + fmtThousands(offset), floor: floorSelect, newOp: func(int) op {
		c := newClient(1)
		return func(ctx context.Context) error { return ab.get(ctx, c, path, "list") }
	}}
}

// retrieve reads payments by id, each worker its own random sequence over all n.
func (ab *appBench) retrieve() scenario {
	return scenario{name: appGetName, floor: floorSelect, newOp: func(w int) op {
		c := newClient(1)
		r := rand.New(rand.NewPCG(uint64(w), 7919))
		return func(ctx context.Context) error {
			id := fmt.Sprintf("py_bench%016d", 1+r.IntN(ab.n))
			return ab.get(ctx, c, "/v1/payments/"+id, "payment")
		}
	}}
}

// summary asks for the analytics summary of the last 365 days (every seeded payment), one
// request at a time, interleaved with the floor on one connection too: its latency is the
// summary's own cost, not a queue of 32 of them on 2 cores (each request reads the year's
// daily totals and the payments of its two partial days).
func (ab *appBench) summary() scenario {
	return scenario{name: appSummaryName, floor: floorSelect, conns: 1, newOp: func(int) op {
		c := newClient(1)
		return func(ctx context.Context) error {
			return ab.get(ctx, c, "/v1/analytics/summary?days=365", "analytics_summary")
		}
	}}
}

// fmtThousands writes n with comma thousands separators (10000 → 10,000).
func fmtThousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
