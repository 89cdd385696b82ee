// Package conformance is Kassa's black-box suite: one case per documented rule of the interface
// document (§) and of decisions.md (D), driven through the generated clients (and raw HTTP where
// a case needs bytes a client cannot send) against a real server process on a real Postgres,
// with every response validated against the OpenAPI contract. It runs in `make test` against a
// server it starts on a fresh database, and against any server with
// `make conformance KASSA_BASE_URL=… KASSA_OPERATOR_TOKEN=…`.
package conformance

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/conformance/harness"
	"github.com/kassa-pay/kassa/openapi"
)

var (
	target    *harness.Target
	transport *harness.ValidatingTransport
)

// TestMain runs the suite through pgtest.Main, which drops the migrated template database
// that the servers started on databases of their own (Target.Lone) are copied from.
//
// The cases run suiteParallel at a time unless -parallel is given: most of a case's time is
// spent waiting (on the server, on a restarted server, on a test clock's due work), so the
// default of one case per CPU leaves the machine idle while the slowest cases wait.
func TestMain(m *testing.M) {
	flag.Parse()
	parallelGiven := false
	flag.Visit(func(f *flag.Flag) { parallelGiven = parallelGiven || f.Name == "test.parallel" })
	if !parallelGiven {
		if err := flag.Set("test.parallel", strconv.Itoa(suiteParallel)); err != nil {
			fmt.Fprintln(os.Stderr, "conformance:", err)
			os.Exit(1)
		}
	}
	os.Exit(pgtest.Main(func() int { return run(m) }))
}

// suiteParallel is how many cases run at once by default.
const suiteParallel = 4

// suiteLimits are the suite's rate limits and abuse throttles, raised for the target and for
// every extra server a case starts (hookServerEnv), so that ordinary cases never meet them.
var suiteLimits = map[string]string{
	"KASSA_RATE_TEST": "300", "KASSA_RATE_LIVE": "600",
	"KASSA_AUTH_FAILURES_PER_MINUTE": "1000000", "KASSA_DASHBOARD_RATE": "10000",
	"KASSA_DASHBOARD_RATE_ANONYMOUS": "10000", "KASSA_CHECKOUT_RATE": "10000", "KASSA_CHECKOUT_RATE_PER_IP": "10000",
}

func run(m *testing.M) int {
	ctx := context.Background()
	var err error
	// Per-merchant rate limits are raised for the suite so that ordinary cases never meet them;
	// the rate-limit case bursts until it does (D5), which works against any configuration.
	// So are the abuse throttles: every case comes from 127.0.0.1, and many send wrong keys
	// on purpose; the throttle cases run servers of their own with the defaults.
	env := maps.Clone(suiteLimits)
	env["KASSA_SWEEP_INTERVAL"] = "1s"
	target, err = harness.Start(ctx, harness.Options{Env: env})
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance: cannot start the target:", err)
		return 1
	}
	defer target.Stop()
	merchantDoc, err := openapi.LoadMerchant()
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		return 1
	}
	operatorDoc, err := openapi.LoadOperator()
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		return 1
	}
	checkoutDoc, err := openapi.LoadCheckout()
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		return 1
	}
	dashboardDoc, err := openapi.LoadDashboard()
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		return 1
	}
	if transport, err = harness.NewValidatingTransport(merchantDoc, operatorDoc, checkoutDoc, dashboardDoc); err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		return 1
	}
	for id, title := range sectionTitles {
		harness.Section(id, title)
	}
	code := m.Run()
	harness.CloseBrowser()
	var summary bytes.Buffer
	if _, failed := harness.PrintSummary(&summary); failed > 0 && code == 0 {
		code = 1
	}
	os.Stdout.Write(summary.Bytes())
	// go test shows a passing package's output only with -v; `make test` prints this file.
	out := filepath.Join(harness.ModuleRoot(), "out")
	if err := os.MkdirAll(out, 0o755); err == nil {
		_ = os.WriteFile(filepath.Join(out, "conformance-summary.txt"), summary.Bytes(), 0o644)
	}
	if code != 0 && target.LogPath != "" {
		fmt.Fprintln(os.Stderr, "server log:", target.LogPath)
	}
	return code
}

// sectionTitles names the sections cases cite.
var sectionTitles = map[string]string{
	"2.1": "checkout session object",
	"2.2": "payment object",
	"2.4": "product object",
	"2.5": "price object",
	"3.1": "checkout session states",
	"3.5": "product and price states",
	"4.1": "checkout session endpoints",
	"4.3": "product endpoints",
	"5.1": "merchant API authentication",
	"5.2": "checkout client_secret",
	"7":   "errors",
	"8":   "limits and idempotency",
	"D1":  "operator API and health",
	"D2":  "identifiers, money, currencies",
	"D3":  "error envelope",
	"D4":  "idempotency",
	"D5":  "rate limits",
	"D6":  "checkout sessions",
	"D7":  "fees and FX",
	"D8":  "list envelope and paging",
	"D10": "events outbox",
	"D12": "sandbox test clock",
	"D13": "implied catalog endpoints",
	"ISO": "tenant and environment isolation",
}
