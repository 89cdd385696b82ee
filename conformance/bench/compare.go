package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kassa-pay/kassa/conformance/harness"
)

// comparison is one scenario and the floor it is compared with (nil: it has none).
type comparison struct {
	key    string
	sc     scenario
	floor  *scenario
	cold   bool                        // no ANALYZE, a fresh merchant per window
	settle func(context.Context) error // ANALYZE after each warm-up (warm runs only)
}

// pair is one window of the floor and the window of the scenario right after it.
type pair struct {
	floor *result
	run   result
}

// measurement is a scenario's windows and the floor windows interleaved with them.
type measurement struct {
	name, floor string
	cold        bool
	pairs       []pair
}

// runComparison runs floor, scenario, floor, scenario, … cfg.rounds times.
func runComparison(ctx context.Context, cfg loadConfig, c comparison) (measurement, error) {
	m := measurement{name: c.sc.name, cold: c.cold}
	if c.floor != nil {
		m.floor = c.floor.name
	}
	for i := range cfg.rounds {
		var p pair
		if c.floor != nil {
			f := *c.floor
			f.settle, f.conns = c.settle, c.sc.conns
			fmt.Fprintf(os.Stderr, "bench: %s [%d/%d] …\n", f.name, i+1, cfg.rounds)
			fr, err := runScenario(ctx, cfg, f)
			if err != nil {
				return m, err
			}
			p.floor = &fr
		}
		sc := c.sc
		sc.settle = c.settle
		fmt.Fprintf(os.Stderr, "bench: %s [%d/%d] …\n", sc.name, i+1, cfg.rounds)
		r, err := runScenario(ctx, cfg, sc)
		if err != nil {
			return m, err
		}
		p.run = r
		m.pairs = append(m.pairs, p)
		if ctx.Err() != nil {
			return m, ctx.Err()
		}
	}
	return m, nil
}

// ratios returns each pair's scenario ÷ floor req/s and p99 ratios (none without a floor).
func (m measurement) ratios() (rps, p99 []float64) {
	for _, p := range m.pairs {
		if p.floor == nil || p.floor.rps() <= 0 || p.floor.quantile(0.99) <= 0 {
			continue
		}
		rps = append(rps, p.run.rps()/p.floor.rps())
		p99 = append(p99, float64(p.run.quantile(0.99))/float64(p.floor.quantile(0.99)))
	}
	return rps, p99
}

// spread is the median of xs and its range.
type spread struct{ Median, Min, Max float64 }

func spreadOf(xs []float64) spread {
	if len(xs) == 0 {
		return spread{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return spread{Median: med, Min: s[0], Max: s[len(s)-1]}
}

// runs returns the scenario's windows.
func (m measurement) runs() []result {
	out := make([]result, len(m.pairs))
	for i, p := range m.pairs {
		out[i] = p.run
	}
	return out
}

func medianOf(rs []result, f func(result) float64) float64 {
	xs := make([]float64, len(rs))
	for i, r := range rs {
		xs[i] = f(r)
	}
	return spreadOf(xs).Median
}

// Suffixes of the cold runs' names: never analysed, or statistics that know other merchants.
const (
	coldNever = ", never analysed"
	coldStale = ", cold statistics"
)

// warmName is the name of the analysed run a cold run is compared with.
func warmName(name string) string {
	return strings.TrimSuffix(strings.TrimSuffix(name, coldNever), coldStale)
}

// coldScenario is mk's scenario on a merchant created right before each window; suffix
// (coldNever or coldStale) names the state of the statistics it runs in.
func coldScenario(t *harness.Target, mk func(api) scenario, suffix string) scenario {
	cur := mk(api{base: t.BaseURL})
	sc := cur
	sc.name = cur.name + suffix
	sc.before = func(ctx context.Context) error {
		m, err := createMerchant(ctx, t.BaseURL, t.OperatorToken, "Bench cold merchant")
		if err != nil {
			return err
		}
		cur = mk(api{base: t.BaseURL, key: m.TestKey})
		return nil
	}
	sc.newOp = func(w int) op { return cur.newOp(w) }
	return sc
}

// seedStatistics gives the catalog tables statistics that know another merchant (200
// products with a price, then ANALYZE), so that the stale cold runs meet what a new merchant
// on a running platform meets, whatever ran before, and not a never-analysed database.
func seedStatistics(ctx context.Context, t *harness.Target) error {
	m, err := createMerchant(ctx, t.BaseURL, t.OperatorToken, "Bench statistics merchant")
	if err != nil {
		return err
	}
	c := newClient(1)
	for range 200 {
		st, _, b, err := do(ctx, c, http.MethodPost, t.BaseURL+"/v1/products", m.TestKey, nil, productBody)
		if err := check(st, b, err); err != nil {
			return fmt.Errorf("seed the catalog statistics: %w", err)
		}
	}
	return analyzer(t.DatabaseURL)(ctx)
}

// JSON output: the same figures as the table, per window.
type jsonWindow struct {
	Requests  int     `json:"requests"`
	Errors    int     `json:"errors"`
	RPS       float64 `json:"rps"`
	P50ms     float64 `json:"p50_ms"`
	P99ms     float64 `json:"p99_ms"`
	FloorRPS  float64 `json:"floor_rps,omitempty"`
	FloorP99  float64 `json:"floor_p99_ms,omitempty"`
	RPSRatio  float64 `json:"rps_ratio,omitempty"`
	P99Ratio  float64 `json:"p99_ratio,omitempty"`
	FirstErr  string  `json:"first_error,omitempty"`
	CappedRun bool    `json:"capped,omitempty"`
}

type jsonScenario struct {
	Name       string       `json:"name"`
	Floor      string       `json:"floor,omitempty"`
	Statistics string       `json:"statistics"` // "analyzed", "never analyzed", "cold" or "as found"
	RPS        float64      `json:"rps_median"`
	P99ms      float64      `json:"p99_ms_median"`
	RPSRatio   *spread      `json:"rps_ratio,omitempty"`
	P99Ratio   *spread      `json:"p99_ratio,omitempty"`
	Target     string       `json:"target,omitempty"`
	Verdict    string       `json:"verdict"`
	Windows    []jsonWindow `json:"windows"`
}

type jsonReport struct {
	Time        time.Time      `json:"time"`
	Conns       int            `json:"conns"`
	WindowSecs  float64        `json:"window_seconds"`
	WarmupSecs  float64        `json:"warmup_seconds"`
	Rounds      int            `json:"rounds"`
	Analyze     bool           `json:"analyze"`
	Scenarios   []jsonScenario `json:"scenarios"`
	Webhook     *jsonWebhook   `json:"webhook,omitempty"`
	Description string         `json:"description"`
}

type jsonWebhook struct {
	ProducedRPS     float64 `json:"produced_rps"`
	BaselineRPS     float64 `json:"baseline_rps,omitempty"`
	Produced        int     `json:"produced"`
	Acknowledged    int     `json:"acknowledged"`
	AcknowledgedRPS float64 `json:"acknowledged_rps"`
	DelayP50ms      float64 `json:"delay_p50_ms"`
	DelayP99ms      float64 `json:"delay_p99_ms"`
	Missing         int     `json:"missing"`
	BadSignatures   int     `json:"bad_signatures"`
}

func msf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func writeJSON(path string, cfg loadConfig, ms []measurement, baseline *result, producers result, d *webhookResult) error {
	out := jsonReport{Time: time.Now().UTC(), Conns: cfg.conns, WindowSecs: cfg.duration.Seconds(),
		WarmupSecs: cfg.warmup.Seconds(), Rounds: cfg.rounds, Analyze: cfg.analyze,
		Description: "Each scenario ran in windows interleaved with its floor (floor, scenario, …); ratios are per pair, reported as median with min and max."}
	for _, m := range ms {
		row := summarize(m, cfg)
		js := jsonScenario{Name: m.name, Floor: m.floor, Statistics: row.stats, RPS: row.rps, P99ms: row.p99ms,
			Target: row.target, Verdict: row.verdict}
		if row.hasRatio {
			js.RPSRatio, js.P99Ratio = &row.rpsRatio, &row.p99Ratio
		}
		for _, p := range m.pairs {
			w := jsonWindow{Requests: p.run.requests, Errors: p.run.errors, RPS: p.run.rps(),
				P50ms: msf(p.run.quantile(0.5)), P99ms: msf(p.run.quantile(0.99)), FirstErr: p.run.firstErr, CappedRun: p.run.capped}
			if p.floor != nil && p.floor.rps() > 0 && p.floor.quantile(0.99) > 0 {
				w.FloorRPS, w.FloorP99 = p.floor.rps(), msf(p.floor.quantile(0.99))
				w.RPSRatio = p.run.rps() / p.floor.rps()
				w.P99Ratio = float64(p.run.quantile(0.99)) / float64(p.floor.quantile(0.99))
			}
			js.Windows = append(js.Windows, w)
		}
		out.Scenarios = append(out.Scenarios, js)
	}
	if d != nil {
		w := &jsonWebhook{ProducedRPS: producers.rps(), Produced: d.produced, Acknowledged: d.acked,
			AcknowledgedRPS: d.rate(), DelayP50ms: msf(d.quantile(0.5)), DelayP99ms: msf(d.quantile(0.99)),
			Missing: d.missing, BadSignatures: d.bad}
		if baseline != nil {
			w.BaselineRPS = baseline.rps()
		}
		out.Webhook = w
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
