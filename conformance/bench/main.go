// Command bench is `make bench`: it starts kassa on a fresh database (or targets a running
// server), drives it with a bounded load generator over loopback and compares each scenario
// with a floor measured the same way straight against Postgres.
//
//	go run ./conformance/bench [-duration 10s] [-conns 32] [-only create,product,retrieve,replay,pay,webhook]
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
		duration  = flag.Duration("duration", 10*time.Second, "measured time per scenario")
		warmup    = flag.Duration("warmup", time.Second, "warm-up before each measured scenario")
		conns     = flag.Int("conns", 32, "concurrent connections (one worker each)")
		maxReqs   = flag.Int64("max-requests", 2_000_000, "hard cap on requests of one measured scenario")
		baseURL   = flag.String("base-url", "", "bench a running server instead of starting one")
		opToken   = flag.String("operator-token", "", "operator token of -base-url")
		dbURL     = flag.String("database-url", "", "database of -base-url (for the floors)")
		only      = flag.String("only", "", "comma-separated subset of create,product,retrieve,replay,pay,webhook")
		dashURL   = flag.String("dashboard-url", "", "dashboard of -base-url (the webhook scenario creates its endpoint there)")
		pprofAddr = flag.String("pprof-addr", "", "KASSA_PPROF_ADDR of the server the bench starts")
		analyze   = flag.Bool("analyze", true, "run ANALYZE after each warm-up: the steady state autovacuum keeps; -analyze=false measures a never-analysed database")
	)
	flag.Parse()
	if *conns < 1 || *duration <= 0 {
		return fmt.Errorf("-conns must be ≥ 1 and -duration > 0")
	}
	want := map[string]bool{}
	for _, s := range strings.Split(*only, ",") {
		if s = strings.TrimSpace(s); s != "" {
			want[s] = true
		}
	}
	sel := func(name string) bool { return len(want) == 0 || want[name] }

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
			"KASSA_RATE_TEST":  "1000000000",
			"KASSA_RATE_LIVE":  "1000000000",
			"KASSA_LOG_FORMAT": "json",
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

	cfg := loadConfig{conns: *conns, duration: *duration, warmup: *warmup, maxReqs: *maxReqs, analyze: *analyze && t.DatabaseURL != ""}
	// Each floor runs right before the scenarios compared with it.
	var plan []scenario
	var db *floorDB
	if t.DatabaseURL != "" {
		db = &floorDB{url: t.DatabaseURL, conns: *conns}
	} else {
		fmt.Fprintln(os.Stderr, "bench: no -database-url: floors are skipped")
	}
	if db != nil && (sel("create") || sel("product")) {
		plan = append(plan, insertFloor(db, fm.ID, t.CheckoutURL))
	}
	if sel("create") {
		plan = append(plan, a.createSession())
	}
	if sel("product") {
		plan = append(plan, a.createProduct())
	}
	if db != nil && (sel("retrieve") || sel("replay")) {
		plan = append(plan, selectFloor(db, m.ID, ids))
	}
	if sel("retrieve") {
		plan = append(plan, a.retrieveSession(ids))
	}
	if sel("replay") {
		plan = append(plan, a.replay(replayKey))
	}
	if sel("pay") && t.CheckoutURL != "" {
		plan = append(plan, a.pay(t.CheckoutURL))
	}
	var hooks *hookReceiver
	if sel("webhook") {
		var err error
		if hooks, err = setupWebhookBench(ctx, t); err != nil {
			fmt.Fprintf(os.Stderr, "bench: webhook scenario skipped: %v\n", err)
		} else {
			defer hooks.srv.Close()
			// Its own merchants: the baseline's has no endpoint, the scenario's has one.
			bm, err := createMerchant(ctx, t.BaseURL, t.OperatorToken, "Bench webhook baseline merchant")
			if err != nil {
				return err
			}
			plan = append(plan, api{base: t.BaseURL, key: bm.TestKey}.expireOp(baselineExpire, "", nil),
				api{base: t.BaseURL, key: hooks.key}.expireOp(webhookExpire, baselineExpire, hooks.commit))
		}
	}

	if *analyze && t.DatabaseURL != "" {
		for i := range plan {
			plan[i].settle = analyzer(t.DatabaseURL)
		}
	}

	var rows []row
	var baseline *result
	var delivered *webhookResult
	var producers result
	for _, sc := range plan {
		fmt.Fprintf(os.Stderr, "bench: %s …\n", sc.name)
		var res result
		var err error
		if sc.name == webhookExpire {
			var d webhookResult
			res, d = runWebhookScenario(ctx, cfg, sc, hooks)
			delivered, producers = &d, res
		} else if res, err = runScenario(ctx, cfg, sc); err != nil {
			return err
		}
		if sc.name == baselineExpire {
			baseline = &res
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		rows = append(rows, row{res: res, floor: sc.floor, noFloor: sc.noFloor})
	}
	report(os.Stdout, rows, cfg)
	if delivered != nil {
		reportWebhooks(os.Stdout, producers, baseline, *delivered)
	}
	return nil
}
