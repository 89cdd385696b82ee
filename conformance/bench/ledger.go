package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/adapters/sandbox"
	"github.com/kassa-pay/kassa/conformance/harness"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payouts"
	"github.com/kassa-pay/kassa/ports"
)

// Scenario names of the ledger rows.
const (
	balanceSmall = "balance read, 10 balance transactions"
	balanceLarge = "balance read, 1,000,000 balance transactions"
)

// dashboardSession signs in to the dashboard as email and returns the session's Cookie header.
func dashboardSession(ctx context.Context, dashboard, email, password string) (string, error) {
	body, _ := json.Marshal(map[string]string{"email": email, "password": password})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, dashboard+"/api/v1/session", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := newClient(1).Do(req)
	if err != nil {
		return "", err
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err := check(resp.StatusCode, b, nil); err != nil {
		return "", fmt.Errorf("dashboard sign-in: %w", err)
	}
	var cookies []string
	for _, ck := range resp.Cookies() {
		cookies = append(cookies, ck.Name+"="+ck.Value)
	}
	return strings.Join(cookies, "; "), nil
}

// seedChunk is how many rows one seeding statement writes (each statement stays well inside
// the pool's statement timeout).
const seedChunk = 50_000

// seedLedger gives merchant id n available EUR payments in its test ledger, in SQL: the
// transactions, their postings and the balance rows they add up to.
func seedLedger(ctx context.Context, dbURL, id string, n int) error {
	db, err := postgres.Open(ctx, dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	for lo := 1; lo <= n; lo += seedChunk {
		hi := min(lo+seedChunk-1, n)
		for _, q := range []string{
			`INSERT INTO balance_transactions (id, merchant_id, environment, currency, type, amount, fee, net, source_id, payment_id,
				available_on, created)
			SELECT 'txn_b' || $1 || g, $1, 'test', 'EUR', 'payment', 1000, 40, 960, 'py_b' || $1 || g, 'py_b' || $1 || g,
				now() - interval '3 days', now() - interval '3 days' FROM generate_series($2::int, $3::int) g`,
			`INSERT INTO ledger_postings (merchant_id, environment, currency, transaction_id, kind, source, destination, amount, created)
			SELECT $1, 'test', 'EUR', 'txn_b' || $1 || g, 'post', x.s, x.d, x.a, now() - interval '3 days'
			FROM generate_series($2::int, $3::int) g CROSS JOIN (VALUES ('world', 'available', 1000), ('available', 'fees', 40)) x(s, d, a)`,
		} {
			if _, err := db.ExecContext(ctx, q, id, lo, hi); err != nil {
				return fmt.Errorf("seed ledger: %w", err)
			}
		}
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO ledger_balances (merchant_id, environment, currency, account, balance)
		VALUES ($1, 'test', 'EUR', 'available', 960 * $2::bigint), ($1, 'test', 'EUR', 'fees', 40 * $2::bigint),
			($1, 'test', 'EUR', 'world', -1000 * $2::bigint), ($1, 'test', 'EUR', 'pending', 0)`, id, n); err != nil {
		return fmt.Errorf("seed ledger: %w", err)
	}
	_, _ = db.ExecContext(ctx, `ANALYZE balance_transactions`)
	return nil
}

// balanceRead reads GET /api/v1/test/balance with a dashboard session.
func balanceRead(name, floor, dashboard, cookie string) scenario {
	hdr := map[string]string{"Cookie": cookie}
	return scenario{name: name, floor: floor, newOp: func(int) op {
		c := newClient(1)
		return func(ctx context.Context) error {
			st, _, b, err := do(ctx, c, http.MethodGet, dashboard+"/api/v1/test/balance", "", hdr, "")
			return check(st, b, err)
		}
	}}
}

// ledgerComparisons builds the balance-read comparison: the read with a million balance
// transactions against the same read with ten, interleaved (its ratio should be 1 within
// noise: a balance read never scans the history).
func ledgerComparisons(ctx context.Context, t *harness.Target) ([]comparison, error) {
	if t.DashboardURL == "" || t.DatabaseURL == "" {
		return nil, fmt.Errorf("needs the dashboard and the database of a local server")
	}
	var cookies [2]string
	for i, n := range []int{10, 1_000_000} {
		email := "bench-ledger+" + strings.ToLower(core.RandomBase62(8)) + "@example.com"
		password := "bench-" + core.RandomBase62(20)
		m, err := createMerchantOwned(ctx, t.BaseURL, t.OperatorToken, fmt.Sprintf("Bench ledger merchant %d", n), email, password)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(os.Stderr, "bench: seeding %d balance transactions …\n", n)
		if err := seedLedger(ctx, t.DatabaseURL, m.ID, n); err != nil {
			return nil, err
		}
		if cookies[i], err = dashboardSession(ctx, t.DashboardURL, email, password); err != nil {
			return nil, err
		}
	}
	small := balanceRead(balanceSmall, "", t.DashboardURL, cookies[0])
	large := balanceRead(balanceLarge, balanceSmall, t.DashboardURL, cookies[1])
	return []comparison{{key: "balance", sc: large, floor: &small}}, nil
}

// payoutRunResult is one payout run of the payout row.
type payoutRunResult struct {
	merchants, payouts int
	elapsed            time.Duration
}

func (r payoutRunResult) rate() float64 { return float64(r.payouts) / r.elapsed.Seconds() }

// benchPayoutRun measures the daily payout run for n merchants with an available balance, on a
// database of its own (the server's background loop would take them otherwise): payouts/s.
func benchPayoutRun(ctx context.Context, n int) (payoutRunResult, error) {
	url, drop, err := pgtest.CreateDatabase(ctx, pgtest.AdminURL())
	if err != nil {
		return payoutRunResult{}, err
	}
	defer drop()
	db, err := postgres.Open(ctx, url)
	if err != nil {
		return payoutRunResult{}, err
	}
	defer db.Close()
	if _, err := postgres.MigrateUp(ctx, db); err != nil {
		return payoutRunResult{}, err
	}
	for _, q := range []string{
		`INSERT INTO merchants (id, name, country, email, onboarded) SELECT 'mer_po' || g, 'Payout ' || g, 'DE', 'po' || g || '@example.com', true
		FROM generate_series(1, $1::int) g`,
		`INSERT INTO balance_transactions (id, merchant_id, environment, currency, type, amount, fee, net, source_id, payment_id, available_on, created)
		SELECT 'txn_po' || g, 'mer_po' || g, 'test', 'EUR', 'payment', 1000, 40, 960, 'py_po' || g, 'py_po' || g,
			now() - interval '3 days', now() - interval '3 days' FROM generate_series(1, $1::int) g`,
		`INSERT INTO ledger_postings (merchant_id, environment, currency, transaction_id, kind, source, destination, amount, created)
		SELECT 'mer_po' || g, 'test', 'EUR', 'txn_po' || g, 'post', x.s, x.d, x.a, now() - interval '3 days'
		FROM generate_series(1, $1::int) g CROSS JOIN (VALUES ('world', 'available', 1000), ('available', 'fees', 40)) x(s, d, a)`,
		`INSERT INTO ledger_balances (merchant_id, environment, currency, account, balance)
		SELECT 'mer_po' || g, 'test', 'EUR', x.a, x.b FROM generate_series(1, $1::int) g
		CROSS JOIN (VALUES ('available', 960), ('fees', 40), ('world', -1000), ('pending', 0)) x(a, b)`,
		`INSERT INTO ledger_payout_marks (merchant_id, environment, changed_at)
		SELECT 'mer_po' || g, 'test', now() - interval '3 days' FROM generate_series(1, $1::int) g`,
	} {
		if _, err := db.ExecContext(ctx, q, n); err != nil {
			return payoutRunResult{}, fmt.Errorf("seed payouts: %w", err)
		}
	}
	_, _ = db.ExecContext(ctx, `ANALYZE`)
	uow := postgres.NewUnitOfWork(db)
	svc, err := payouts.NewService(payouts.Deps{
		UoW:   postgres.Bind(uow, func(tx *postgres.Tx) payouts.Tx { return tx }),
		Store: postgres.NewPayoutStore(db), Ledger: postgres.NewLedgerStore(db),
		Rails:  map[core.Environment]ports.PayoutRail{core.EnvTest: sandbox.PayoutRail{}},
		Clocks: realClocks{}, Wall: core.SystemClock{},
	})
	if err != nil {
		return payoutRunResult{}, err
	}
	start := time.Now()
	if _, err := svc.ProcessDue(ctx, nil, time.Now()); err != nil {
		return payoutRunResult{}, err
	}
	elapsed := time.Since(start)
	var made int
	if err := db.GetContext(ctx, &made, `SELECT count(*) FROM payouts WHERE sent_at IS NOT NULL`); err != nil {
		return payoutRunResult{}, err
	}
	if made != n {
		return payoutRunResult{}, fmt.Errorf("payout run: %d payouts sent for %d merchants", made, n)
	}
	return payoutRunResult{merchants: n, payouts: made, elapsed: elapsed}, nil
}

// realClocks is real time for every scope (the payout bench has no test clocks).
type realClocks struct{}

func (realClocks) Now(context.Context, core.Scope) (time.Time, error) { return time.Now(), nil }

// reportPayouts prints the payout rows: payouts/s for 1,000 and 10,000 merchants (linear: the
// same rate).
func reportPayouts(w io.Writer, rs []payoutRunResult) {
	fmt.Fprintf(w, "\nDaily payout run (one EUR payout per merchant, recorded, posted, sent to the sandbox rail):\n")
	for _, r := range rs {
		fmt.Fprintf(w, "  %6d merchants: %d payouts in %s ms, %.0f payouts/s\n", r.merchants, r.payouts, ms(r.elapsed), r.rate())
	}
	if len(rs) == 2 && rs[0].rate() > 0 {
		fmt.Fprintf(w, "  payouts/s at %d ÷ at %d merchants: %.2f (linear: 1 within noise)\n", rs[1].merchants, rs[0].merchants, rs[1].rate()/rs[0].rate())
	}
}
