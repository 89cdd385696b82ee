package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/kassa-pay/kassa/conformance/harness"
)

// The renewal run: n subscriptions due at the same instant across renewalMerchants
// merchants, renewed by the server's own sweep as a test clock advance runs it (each
// merchant's clock advanced past the period end through the merchant API): per subscription
// an invoice made, numbered and finalised, charged off-session on the saved sandbox card
// (outside any transaction), a payment with its fee, the invoice paid, the period advanced,
// the events and the receipt e-mail queued.
//
// Seeding: each merchant gets one subscription made through the API (the subscribe scenario:
// created, first payment confirmed with 4242 4242 4242 4242, so its customer has a saved
// sandbox card and the subscription is active with its period end a month ahead); the others
// are copies of it written in SQL (INSERT … SELECT over generate_series): a customer each
// (their own e-mail) and a subscription each with the same period and due time, whose default
// method is the merchant's saved card (one saved method per merchant, charged by every copy:
// the sandbox answers a saved method by its reference). VACUUM ANALYZE follows, then the 100
// clocks are advanced at once (an hour past the period end) and the run ends when every
// clock reports ready; the counts of paid renewal invoices, renewal payments and advanced
// periods are checked to be n each.

const (
	renewalMerchants = 100
	renewalAdvancers = 8
)

type renewalResult struct {
	n        int
	seed     time.Duration
	elapsed  time.Duration
	invoices int
	payments int
	advanced int
	// floor is how long the floor took (renewalFloor), floorRows the rows it inserted.
	floor      time.Duration
	floorRows  int64
	floorSteps []floorStep
}

func (r renewalResult) rate() float64 { return float64(r.n) / r.elapsed.Seconds() }

// floorRate is the floor's renewals/s: n renewals' rows over the time the floor took.
func (r renewalResult) floorRate() float64 { return float64(r.n) / r.floor.Seconds() }

// benchRenewals seeds n subscriptions on the running server's database and renews them.
func benchRenewals(ctx context.Context, t *harness.Target, n int) (renewalResult, error) {
	res := renewalResult{n: n}
	start := time.Now()
	sd, err := seedRenewals(ctx, t, renewalMerchants, n)
	if err != nil {
		return res, err
	}
	defer sd.db.Close()
	ms, ids, due, db, per := sd.ms, sd.ids, sd.due, sd.db, n/renewalMerchants
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if first == nil {
			first = err
		}
	}
	res.seed = time.Since(start)
	fmt.Fprintf(os.Stderr, "bench: seeded %d subscriptions in %.1f s; advancing %d clocks …\n", n, res.seed.Seconds(), len(ms))

	to := strconv.FormatInt(due.Add(time.Hour).Unix(), 10)
	start = time.Now()
	wall := start.Add(-time.Second) // the sandbox journal's rows of the run are written after this
	// renewalAdvancers clocks are advanced at a time: an advance with an Idempotency-Key holds
	// a connection of the server's key-lock pool (8 connections) while it waits for its due
	// work (up to the clock wait, 15 s), so a hundred at once queue for that pool and the
	// last ones wait past the server's write timeout (docs/performance.md).
	adv := make(chan struct{}, renewalAdvancers)
	for i := range ms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			adv <- struct{}{}
			defer func() { <-adv }()
			if err := advanceClock(ctx, t.BaseURL, ms[i].m.TestKey, to); err != nil {
				fail(err)
			}
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	if first != nil {
		return res, first
	}
	if err := db.GetContext(ctx, &res.invoices, `SELECT count(*) FROM invoices WHERE merchant_id = ANY($1)
		AND environment = 'test' AND subscription_id IS NOT NULL AND status = 'paid' AND created >= $2`, pq.Array(ids), due); err != nil {
		return res, err
	}
	if err := db.GetContext(ctx, &res.payments, `SELECT count(*) FROM payments WHERE merchant_id = ANY($1)
		AND environment = 'test' AND status = 'succeeded' AND created >= $2`, pq.Array(ids), due); err != nil {
		return res, err
	}
	if err := db.GetContext(ctx, &res.advanced, `SELECT count(*) FROM subscriptions WHERE merchant_id = ANY($1)
		AND environment = 'test' AND status = 'active' AND period_end > $2 AND open_invoice = ''`, pq.Array(ids), due); err != nil {
		return res, err
	}
	if res.invoices != n || res.payments != n || res.advanced != n {
		return res, fmt.Errorf("renewal run: %d invoices paid, %d payments, %d periods advanced, want %d each",
			res.invoices, res.payments, res.advanced, n)
	}
	fmt.Fprintf(os.Stderr, "bench: renewed %d in %.1f s; writing the floor's rows …\n", n, res.elapsed.Seconds())
	res.floor, res.floorRows, res.floorSteps, err = renewalFloor(ctx, db, ids, due, wall, per)
	return res, err
}

type seededMerchant struct {
	m   merchant
	sub string
}

// seeded is a renewal run's seeding: its merchants, their ids, the instant every
// subscription falls due, and a connection to the server's database (closed by the caller).
type seeded struct {
	ms  []seededMerchant
	ids []string
	due time.Time
	db  *sqlx.DB
}

// seedRenewals seeds n subscriptions across merchants (each through the API once, then
// copied in SQL; see above), all due at one instant.
func seedRenewals(ctx context.Context, t *harness.Target, merchants, n int) (sd seeded, err error) {
	if t.DatabaseURL == "" || t.CheckoutURL == "" {
		return sd, fmt.Errorf("needs the checkout and database URLs")
	}
	per := n / merchants
	if per < 1 || per*merchants != n {
		return sd, fmt.Errorf("n = %d is not a multiple of %d", n, merchants)
	}
	ms := make([]seededMerchant, merchants)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if first == nil {
			first = err
		}
	}
	sem := make(chan struct{}, 8)
	for i := range ms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			m, err := createMerchant(ctx, t.BaseURL, t.OperatorToken, fmt.Sprintf("Bench renewal merchant %d", i))
			if err != nil {
				fail(err)
				return
			}
			a := api{base: t.BaseURL, key: m.TestKey}
			price, err := a.setupSubscriptionPrice(ctx)
			if err != nil {
				fail(err)
				return
			}
			if err := a.subscribe(t.CheckoutURL, price).newOp(i)(ctx); err != nil {
				fail(err)
				return
			}
			ms[i].m = m
		}()
	}
	wg.Wait()
	if first != nil {
		return sd, fmt.Errorf("subscribe the template subscriptions: %w", first)
	}
	db, err := openFloorDB(ctx, t.DatabaseURL, 1)
	if err != nil {
		return sd, err
	}
	defer func() {
		if err != nil {
			db.Close()
		}
	}()
	var due time.Time
	ids := make([]string, len(ms))
	for i := range ms {
		ids[i] = ms[i].m.ID
		var row struct {
			ID     string    `db:"id"`
			Period time.Time `db:"period_end"`
		}
		if err := db.GetContext(ctx, &row, `SELECT id, period_end FROM subscriptions
			WHERE merchant_id = $1 AND environment = 'test' AND status = 'active'`, ms[i].m.ID); err != nil {
			return sd, fmt.Errorf("template subscription: %w", err)
		}
		ms[i].sub = row.ID
		if row.Period.After(due) {
			due = row.Period
		}
	}
	fmt.Fprintf(os.Stderr, "bench: writing %d subscriptions in SQL …\n", n)
	for i := range ms {
		// The copies: a customer each, then its subscription, both from the template's rows.
		if per > 1 {
			if _, err := db.ExecContext(ctx, `INSERT INTO customers (id, merchant_id, environment, name, email, email_key,
				processor_ref, default_payment_method, created, updated)
			SELECT c.id || '_b' || g, c.merchant_id, c.environment, c.name, 'b' || g || '.' || c.email, 'b' || g || '.' || c.email_key,
				c.processor_ref, c.default_payment_method, c.created, c.updated
			FROM subscriptions s JOIN customers c ON c.id = s.customer_id CROSS JOIN generate_series(2, $2::int) g
			WHERE s.id = $1`, ms[i].sub, per); err != nil {
				return sd, fmt.Errorf("seed customers: %w", err)
			}
			if _, err := db.ExecContext(ctx, `INSERT INTO subscriptions (id, merchant_id, environment, status, customer_id,
				price_id, quantity, currency, unit_amount, interval, interval_count, anchor, period_start, period_end,
				latest_invoice, default_payment_method, cancel_at_period_end, metadata, created, updated, due_at,
				trial_notified, open_invoice, failures)
			SELECT s.id || '_b' || g, s.merchant_id, s.environment, s.status, s.customer_id || '_b' || g,
				s.price_id, s.quantity, s.currency, s.unit_amount, s.interval, s.interval_count, s.anchor, s.period_start, $3,
				s.latest_invoice, s.default_payment_method, false, s.metadata, s.created, s.updated, $3,
				s.trial_notified, '', 0
			FROM subscriptions s CROSS JOIN generate_series(2, $2::int) g WHERE s.id = $1`, ms[i].sub, per, due); err != nil {
				return sd, fmt.Errorf("seed subscriptions: %w", err)
			}
		}
		// All due at the same instant (the latest template's period end).
		if _, err := db.ExecContext(ctx, `UPDATE subscriptions SET period_end = $2, due_at = $2 WHERE id = $1`, ms[i].sub, due); err != nil {
			return sd, err
		}
	}
	if _, err := db.ExecContext(ctx, `VACUUM ANALYZE customers, subscriptions`); err != nil {
		return sd, err
	}
	return seeded{ms: ms, ids: ids, due: due, db: db}, nil
}

// advanceClock advances the merchant's test clock to the Unix time to and waits until it
// is ready there (a 202 is polled every 100 ms).
func advanceClock(ctx context.Context, base, key, to string) error {
	c := newClient(1)
	c.Timeout = 10 * time.Minute // a 200 may come after its ~15 s of due work, on a busy machine later
	st, _, b, err := do(ctx, c, http.MethodPost, base+"/v1/test_helpers/clock/advance", key,
		map[string]string{"Idempotency-Key": "bench-renewal-" + to}, `{"to":`+to+`}`)
	if err := check(st, b, err); err != nil {
		return fmt.Errorf("advance the clock: %w", err)
	}
	for {
		var clk struct {
			Status string `json:"status"`
		}
		if err := json.Unmarshal(b, &clk); err != nil {
			return fmt.Errorf("clock: unexpected body %.200s", b)
		}
		if clk.Status == "ready" {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		st, _, b, err = do(ctx, c, http.MethodGet, base+"/v1/test_helpers/clock", key, nil, "")
		if err := check(st, b, err); err != nil {
			return fmt.Errorf("read the clock: %w", err)
		}
	}
}

// reportRenewals prints the renewal rows.
func reportRenewals(w io.Writer, rs []renewalResult) {
	fmt.Fprintf(w, "\nRenewal run (subscriptions due at one instant across %d merchants, each merchant's test clock advanced past it):\n", renewalMerchants)
	for _, r := range rs {
		fmt.Fprintf(w, "  %7d subscriptions: renewed in %.1f s, %.0f renewals/s (%d invoices paid, %d payments, %d periods advanced; seeding took %.1f s)\n",
			r.n, r.elapsed.Seconds(), r.rate(), r.invoices, r.payments, r.advanced, r.seed.Seconds())
		fmt.Fprintf(w, "  %7s floor (the run's rows written again by bulk SQL, one transaction): %.2f s, %.0f renewals/s, %d rows inserted; run/floor %.3f\n",
			"", r.floor.Seconds(), r.floorRate(), r.floorRows, r.rate()/r.floorRate())
		var by []string
		for _, st := range r.floorSteps {
			by = append(by, fmt.Sprintf("%s %.2f", st.table, st.took.Seconds()))
		}
		fmt.Fprintf(w, "  %7s floor by statement (s): %s\n", "", strings.Join(by, ", "))
	}
	if len(rs) == 2 && rs[0].n > 0 {
		fmt.Fprintf(w, "  linearity: the %d run took %.1f× the %d run (%.0f× the subscriptions)\n",
			rs[1].n, rs[1].elapsed.Seconds()/rs[0].elapsed.Seconds(), rs[0].n, float64(rs[1].n)/float64(rs[0].n))
	}
}

// The renewal year: yearSubscriptions subscriptions of one merchant, monthly, renewed a year
// long by one keyed test clock advance (a year and an hour past their first renewal). The
// advance runs every renewal in time order, each batch its own unit of work; while it runs
// the longest transaction open on the server's database is sampled (pg_stat_activity, every
// 50 ms). The row reports how many renewal invoices were paid, how long the advance took and
// the longest transaction seen: a bound set by the batch, not by the year.
const yearSubscriptions = 1000

type renewalYear struct {
	n        int
	elapsed  time.Duration
	invoices int
	longest  time.Duration
	// longestQuery is the state and the statement (its last, when idle) of the longest
	// transaction seen, when it was seen longest.
	longestQuery string
}

func benchRenewalYear(ctx context.Context, t *harness.Target) (renewalYear, error) {
	res := renewalYear{n: yearSubscriptions}
	sd, err := seedRenewals(ctx, t, 1, yearSubscriptions)
	if err != nil {
		return res, err
	}
	defer sd.db.Close()
	fmt.Fprintf(os.Stderr, "bench: seeded %d subscriptions of one merchant; advancing its clock a year …\n", yearSubscriptions)
	watch, err := openFloorDB(ctx, t.DatabaseURL, 1)
	if err != nil {
		return res, err
	}
	defer watch.Close()
	sampled := make(chan time.Duration)
	stop := make(chan struct{})
	go func() {
		var longest time.Duration
		defer func() { sampled <- longest }()
		for {
			var tx struct {
				US    int64  `db:"us"`
				State string `db:"state"`
				Query string `db:"query"`
			}
			if err := watch.GetContext(ctx, &tx, `SELECT (extract(epoch FROM clock_timestamp() - xact_start) * 1e6)::bigint AS us,
					coalesce(state, '') AS state, left(query, 300) AS query
				FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND xact_start IS NOT NULL
				ORDER BY xact_start LIMIT 1`); err == nil && time.Duration(tx.US)*time.Microsecond > longest {
				longest = time.Duration(tx.US) * time.Microsecond
				res.longestQuery = tx.State + ": " + tx.Query
			}
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	to := strconv.FormatInt(sd.due.AddDate(0, 0, 365).Add(time.Hour).Unix(), 10)
	start := time.Now()
	err = advanceClock(ctx, t.BaseURL, sd.ms[0].m.TestKey, to)
	res.elapsed = time.Since(start)
	close(stop)
	res.longest = <-sampled
	if err != nil {
		return res, err
	}
	err = sd.db.GetContext(ctx, &res.invoices, `SELECT count(*) FROM invoices WHERE merchant_id = $1
		AND environment = 'test' AND subscription_id IS NOT NULL AND status = 'paid' AND created >= $2`, sd.ids[0], sd.due)
	return res, err
}

// reportRenewalYear prints the renewal year's row.
func reportRenewalYear(w io.Writer, r renewalYear) {
	fmt.Fprintf(w, "\nRenewal year (%d monthly subscriptions of one merchant, one keyed test clock advance of a year):\n", r.n)
	fmt.Fprintf(w, "  %d renewal invoices paid in %.1f s (%.0f renewals/s); longest transaction seen %d ms\n",
		r.invoices, r.elapsed.Seconds(), float64(r.invoices)/r.elapsed.Seconds(), r.longest.Milliseconds())
	if r.longestQuery != "" {
		fmt.Fprintf(w, "  the longest transaction, last seen: %s\n", strings.Join(strings.Fields(r.longestQuery), " "))
	}
}
