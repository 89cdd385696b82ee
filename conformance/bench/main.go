// Command bench is `make bench`: it starts kassa on a fresh database (or targets a running
// server), drives it with a bounded load generator over loopback and compares each scenario
// with a floor measured the same way straight against Postgres, in interleaved windows
// (floor, scenario, floor, scenario, …), reporting the median ratio and its spread. The
// table goes to stdout, the same figures as JSON to out/bench.json.
//
//	go run ./conformance/bench [-duration 3s] [-rounds 3] [-conns 32] [-only create,product,price,retrieve,replay,pay,refund,app,webhook,cold,subscription,renewal] [-json out/bench.json]
//	go run ./conformance/bench -base-url http://127.0.0.1:8080 -operator-token op_… [-database-url postgres://…] [-dashboard-url http://127.0.0.1:8082]
//
// The exit status is 0 whatever the verdicts (it is a measurement); it is non-zero only when
// the setup fails.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"

	"github.com/kassa-pay/kassa/conformance/harness"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		duration  = flag.Duration("duration", 3*time.Second, "measured time of one window (a scenario runs -rounds windows, each after one of its floor)")
		rounds    = flag.Int("rounds", 3, "floor/scenario pairs per scenario (at least 3: the ratio reported is their median)")
		cold      = flag.Bool("cold", true, "also run the write scenarios with cold planner statistics (a merchant per window, no ANALYZE): on the never-analysed database first, and after the warm runs with statistics that know another merchant")
		jsonOut   = flag.String("json", "out/bench.json", "write the results as JSON to this file (\"\" for none)")
		warmup    = flag.Duration("warmup", time.Second, "warm-up before each measured scenario")
		conns     = flag.Int("conns", 32, "concurrent connections (one worker each)")
		maxReqs   = flag.Int64("max-requests", 2_000_000, "hard cap on requests of one measured scenario")
		baseURL   = flag.String("base-url", "", "bench a running server instead of starting one")
		opToken   = flag.String("operator-token", "", "operator token of -base-url")
		dbURL     = flag.String("database-url", "", "database of -base-url (for the floors)")
		only      = flag.String("only", "", "comma-separated subset: create, product, price, retrieve, replay, pay, refund, app, webhook, balance, payout, cold, appevents, subscription, renewal, or any part of a scenario's name (make bench BENCH=…)")
		dashURL   = flag.String("dashboard-url", "", "dashboard of -base-url (the webhook scenario creates its endpoint there)")
		pprofAddr = flag.String("pprof-addr", "", "KASSA_PPROF_ADDR of the server the bench starts")
		appN      = flag.Int("app-payments", appPayments, "payments of the App API scenarios' merchant (written in SQL before they run)")
		renewals  = flag.Int("renewals", 10_000, "subscriptions of the renewal run (a multiple of 100; BENCH=renewal)")
		renewBig  = flag.Bool("renewals-large", false, "also run the renewal run with 100,000 subscriptions")
		renewYear = flag.Bool("renewals-year", false, "also renew 1,000 subscriptions of one merchant a year long in one keyed test clock advance")
		analyze   = flag.Bool("analyze", true, "run ANALYZE after each warm-up: the steady state autovacuum keeps; -analyze=false measures a never-analysed database")
	)
	flag.Parse()
	if *conns < 1 || *duration <= 0 || *rounds < 1 {
		return fmt.Errorf("-conns and -rounds must be ≥ 1 and -duration > 0")
	}
	var want []string
	for _, s := range strings.Split(*only, ",") {
		if s = strings.ToLower(strings.TrimSpace(s)); s != "" {
			want = append(want, s)
		}
	}
	// sel: no filter, or a filter word that is the scenario's key, or part of its name when
	// it is no key ("create" is the create-session scenario, not every name with "create").
	keys := []string{"create", "product", "price", "retrieve", "replay", "pay", "refund", "app", "webhook", "balance", "payout", "cold", "appevents", "subscription", "renewal"}
	sel := func(key, name string) bool {
		if len(want) == 0 {
			return true
		}
		for _, w := range want {
			if w == key || !slices.Contains(keys, w) && strings.Contains(strings.ToLower(name), w) {
				return true
			}
		}
		return false
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	var t *harness.Target
	if *baseURL != "" {
		if *opToken == "" {
			return fmt.Errorf("-base-url needs -operator-token")
		}
		t = &harness.Target{BaseURL: strings.TrimRight(*baseURL, "/"), OperatorToken: *opToken, DatabaseURL: *dbURL,
			CheckoutURL: "http://127.0.0.1:8081", DashboardURL: strings.TrimRight(*dashURL, "/")}
	} else {
		fmt.Fprintln(os.Stderr, "bench: building kassa and starting it on a fresh database…")
		env := map[string]string{
			// Rate limits are not what is measured.
			"KASSA_RATE_TEST": "1000000000",
			"KASSA_RATE_LIVE": "1000000000",
			// The browser API's throttles (per client address: the bench is one address).
			"KASSA_CHECKOUT_RATE":        "0",
			"KASSA_CHECKOUT_RATE_PER_IP": "0",
			"KASSA_DASHBOARD_RATE":       "0",
			"KASSA_LOG_FORMAT":           "json",
		}
		if *pprofAddr != "" {
			env["KASSA_PPROF_ADDR"] = *pprofAddr
		}
		var err error
		if t, err = harness.StartLocal(ctx, harness.Options{Env: env}); err != nil {
			return err
		}
		defer t.Stop()
		fmt.Fprintf(os.Stderr, "bench: kassa at %s (log %s)\n", t.BaseURL, t.LogPath)
	}

	m, err := createMerchant(ctx, t.BaseURL, t.OperatorToken, "Bench merchant")
	if err != nil {
		return err
	}
	fm, err := createMerchant(ctx, t.BaseURL, t.OperatorToken, "Bench floor merchant")
	if err != nil {
		return err
	}
	a := api{base: t.BaseURL, key: m.TestKey}
	ids, err := a.setupSessions(ctx, 256)
	if err != nil {
		return err
	}
	replayKey, err := a.primeReplay(ctx)
	if err != nil {
		return err
	}

	cfg := loadConfig{conns: *conns, duration: *duration, warmup: *warmup, maxReqs: *maxReqs, rounds: *rounds,
		analyze: *analyze && t.DatabaseURL != "", cold: *cold && t.DatabaseURL != ""}
	var db *floorDB
	if t.DatabaseURL != "" {
		db = &floorDB{url: t.DatabaseURL, conns: *conns}
	} else {
		fmt.Fprintln(os.Stderr, "bench: no -database-url: floors, ANALYZE and the cold runs are skipped")
	}
	var floorIns, floorSel *scenario
	if db != nil {
		fi, fs := insertFloor(db, fm.ID, t.CheckoutURL), selectFloor(db, m.ID, ids)
		floorIns, floorSel = &fi, &fs
	}
	// Each scenario runs interleaved with its floor (floor, scenario, floor, scenario, …), so
	// that both see the same moments of a noisy machine; its ratio is the median of the pairs'.
	var plan []comparison
	add := func(key string, sc scenario, floor *scenario) {
		if sel(key, sc.name) {
			plan = append(plan, comparison{key: key, sc: sc, floor: floor})
		}
	}
	create := a.createSession()
	add("create", create, floorIns)
	add("product", a.createProduct(), floorIns)
	add("price", a.createPrice(), floorIns)
	add("retrieve", a.retrieveSession(ids), floorSel)
	add("replay", a.replay(replayKey), floorSel)
	if t.CheckoutURL != "" {
		// A whole payment is compared with creating a session, interleaved like a floor: its
		// ratio is payments/s ÷ sessions created/s in adjacent windows.
		add("pay", a.pay(t.CheckoutURL), &create)
		if db != nil {
			// The floor of a confirmation, against the same create windows: it bounds what the
			// whole payment can reach with the rows a confirmation writes (report: bound).
			add("pay", newConfirmFloor(t.DatabaseURL, fm.ID, *conns, *duration+*warmup).scenario(), &create)
		}
		if sel("subscription", subscriptionName) {
			// Subscribing with a first payment, against the same create windows.
			price, err := a.setupSubscriptionPrice(ctx)
			if err != nil {
				fmt.Fprintf(os.Stderr, "bench: subscription scenario skipped: %v\n", err)
			} else {
				add("subscription", a.subscribe(t.CheckoutURL, price), &create)
			}
		}
	}
	if sel("balance", balanceLarge) {
		cs, err := ledgerComparisons(ctx, t)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: balance scenario skipped: %v\n", err)
		}
		plan = append(plan, cs...)
	}
	if sel("refund", refundName) {
		// Partial refunds from the dashboard API, against the floor create session is held to.
		fmt.Fprintln(os.Stderr, "bench: paying the payments to refund …")
		rb, err := setupRefundBench(ctx, t)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: refund scenario skipped: %v\n", err)
		} else {
			add("refund", rb.scenario(*conns), floorIns)
		}
	}
	var appSeed *appBench
	{
		// The App API on a merchant with a million payments (written in SQL before anything
		// is timed): the payments list at three offsets and a payment by id against the
		// primary-key floor, the analytics summary over 365 days with an absolute p99.
		var names []string
		for _, o := range appListOffsets {
			names = append(names, appListName+fmtThousands(o))
		}
		names = append(names, appGetName, appSummaryName)
		want := false
		for _, n := range names {
			want = want || sel("app", n)
		}
		if want && db != nil {
			ab, err := setupAppBench(ctx, t, *appN)
			if err != nil {
				return err
			}
			appSeed = ab
			for _, o := range appListOffsets {
				add("app", ab.list(o), floorSel)
			}
			add("app", ab.retrieve(), floorSel)
			add("app", ab.summary(), floorSel)
		}
	}
	if cfg.analyze {
		for i := range plan {
			plan[i].settle = analyzer(t.DatabaseURL)
		}
	}
	// The write scenarios again with cold planner statistics, each window on a merchant
	// created for it and no ANALYZE: first on the database as installed, never analysed (a
	// fresh install before autovacuum's first ANALYZE), before anything else runs; then, after
	// the warm runs and once the statistics know another merchant, as a new merchant importing
	// its catalog on a running platform meets them.
	var never, stale []comparison
	if cfg.cold {
		for _, w := range []struct {
			key string
			mk  func(api) scenario
		}{{"create", api.createSession}, {"product", api.createProduct}, {"price", api.createPrice}} {
			if sc := coldScenario(t, w.mk, coldNever); sel(w.key, sc.name) || sel("cold", sc.name) {
				never = append(never, comparison{key: w.key, sc: sc, floor: floorIns, cold: true})
			}
			if sc := coldScenario(t, w.mk, coldStale); sel(w.key, sc.name) || sel("cold", sc.name) {
				stale = append(stale, comparison{key: w.key, sc: sc, floor: floorIns, cold: true})
			}
		}
	}

	var measured []measurement
	runAll := func(cs []comparison) error {
		for _, c := range cs {
			mm, err := runComparison(ctx, cfg, c)
			if err != nil {
				return err
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			measured = append(measured, mm)
		}
		return nil
	}
	if err := runAll(never); err != nil {
		return err
	}
	if err := runAll(plan); err != nil {
		return err
	}
	if len(stale) > 0 {
		if err := seedStatistics(ctx, t); err != nil {
			return err
		}
		if err := runAll(stale); err != nil {
			return err
		}
	}

	var baseline *result
	var delivered *webhookResult
	var producers result
	if sel("webhook", webhookExpire) {
		hooks, err := setupWebhookBench(ctx, t)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: webhook scenario skipped: %v\n", err)
		} else {
			defer hooks.srv.Close()
			// Its own merchants: the baseline's has no endpoint, the scenario's has one.
			bm, err := createMerchant(ctx, t.BaseURL, t.OperatorToken, "Bench webhook baseline merchant")
			if err != nil {
				return err
			}
			base := api{base: t.BaseURL, key: bm.TestKey}.expireOp(baselineExpire, "", nil)
			if cfg.analyze {
				base.settle = analyzer(t.DatabaseURL)
			}
			fmt.Fprintf(os.Stderr, "bench: %s …\n", base.name)
			b, err := runScenario(ctx, cfg, base)
			if err != nil {
				return err
			}
			baseline = &b
			sc := api{base: t.BaseURL, key: hooks.key}.expireOp(webhookExpire, baselineExpire, hooks.commit)
			if cfg.analyze {
				sc.settle = analyzer(t.DatabaseURL)
			}
			fmt.Fprintf(os.Stderr, "bench: %s …\n", sc.name)
			var d webhookResult
			producers, d = runWebhookScenario(ctx, cfg, sc, hooks)
			delivered = &d
		}
	}
	var fanout *appFanResult
	if sel("appevents", appFanoutName) {
		fmt.Fprintf(os.Stderr, "bench: %s …\n", appFanoutName)
		a, err := runAppFanout(ctx, t.BaseURL, t.OperatorToken)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: app fan-out skipped: %v\n", err)
		} else {
			fanout = &a
		}
	}
	report(os.Stdout, measured, cfg)
	if sel("payout", "payout run") {
		var rs []payoutRunResult
		for _, n := range []int{1_000, 10_000} {
			fmt.Fprintf(os.Stderr, "bench: payout run for %d merchants …\n", n)
			r, err := benchPayoutRun(ctx, n)
			if err != nil {
				fmt.Fprintf(os.Stderr, "bench: payout run skipped: %v\n", err)
				break
			}
			rs = append(rs, r)
		}
		reportPayouts(os.Stdout, rs)
	}
	// The renewal run takes minutes (seeding included): only when asked for by name.
	if slices.Contains(want, "renewal") {
		var rs []renewalResult
		sizes := []int{*renewals}
		if *renewBig {
			sizes = append(sizes, 100_000)
		}
		for _, n := range sizes {
			fmt.Fprintf(os.Stderr, "bench: renewal run of %d subscriptions …\n", n)
			r, err := benchRenewals(ctx, t, n)
			if err != nil {
				fmt.Fprintf(os.Stderr, "bench: renewal run skipped: %v\n", err)
				break
			}
			rs = append(rs, r)
		}
		reportRenewals(os.Stdout, rs)
		if *renewYear {
			fmt.Fprintf(os.Stderr, "bench: renewal year of %d subscriptions …\n", yearSubscriptions)
			if y, err := benchRenewalYear(ctx, t); err != nil {
				fmt.Fprintf(os.Stderr, "bench: renewal year skipped: %v\n", err)
			} else {
				reportRenewalYear(os.Stdout, y)
			}
		}
	}
	if appSeed != nil {
		fmt.Fprintf(os.Stdout, "App API scenarios: %d payments of the installing merchant, written (INSERT … SELECT, VACUUM ANALYZE) in %.1f s before the timed part.\n",
			appSeed.n, appSeed.seed.Seconds())
	}
	if delivered != nil {
		reportWebhooks(os.Stdout, producers, baseline, *delivered)
	}
	if fanout != nil {
		reportAppFanout(os.Stdout, *fanout)
	}
	if *jsonOut != "" {
		if err := writeJSON(*jsonOut, cfg, measured, baseline, producers, delivered); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "bench: wrote %s\n", *jsonOut)
	}
	return nil
}
