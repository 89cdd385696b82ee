package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// target is the bar a scenario is held to, relative to its floor.
type target struct {
	minThroughput float64 // ≥ this fraction of the floor's req/s (0 = not judged)
	maxP99        float64 // p99 ≤ this multiple of the floor's p99 (0 = not judged)
	maxP99ms      float64 // median p99 of the windows under this many milliseconds (0 = not judged)
}

func (t target) String() string {
	var parts []string
	if t.minThroughput > 0 {
		parts = append(parts, fmt.Sprintf("≥%.0f%% rps", t.minThroughput*100))
	}
	if t.maxP99 > 0 {
		parts = append(parts, fmt.Sprintf("p99 ≤%.0fx", t.maxP99))
	}
	if t.maxP99ms > 0 {
		parts = append(parts, fmt.Sprintf("p99 <%.0f ms", t.maxP99ms))
	}
	return strings.Join(parts, ", ")
}

// miss reports whether s falls short of t.
func (t target) miss(s summary) bool {
	return s.rpsRatio.Median < t.minThroughput || (t.maxP99 > 0 && s.p99Ratio.Median > t.maxP99) ||
		(t.maxP99ms > 0 && s.p99ms >= t.maxP99ms)
}

// targets of the issue, by scenario name.
var targets = map[string]target{
	"create checkout session":   {minThroughput: 0.5, maxP99: 2},
	"retrieve checkout session": {minThroughput: 0.5},
	"idempotent replay":         {minThroughput: 0.5},
	// Issue 10: a whole payment at least 0.4 of the create rate (its "floor" is create session).
	payName: {minThroughput: 0.4},
	// The App API's analytics summary over a year of a million payments.
	appSummaryName: {maxP99ms: 200},
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond)) }

// summary is one line of the table.
type summary struct {
	stats              string // "analyzed", "never analyzed", "cold" or "as found"
	requests, errors   int
	rps, p50ms, p99ms  float64 // medians over the windows
	hasRatio           bool
	rpsRatio, p99Ratio spread
	target, verdict    string
	notes              []string
}

func summarize(m measurement, cfg loadConfig) summary {
	s := summary{stats: "as found"}
	switch {
	case m.cold && strings.HasSuffix(m.name, coldNever):
		s.stats = "never analyzed"
	case m.cold:
		s.stats = "cold"
	case cfg.analyze:
		s.stats = "analyzed"
	}
	runs := m.runs()
	for _, r := range runs {
		s.requests += r.requests
		s.errors += r.errors
		if r.errors > 0 && len(s.notes) == 0 {
			s.notes = append(s.notes, fmt.Sprintf("%s: %d of %d requests failed in a window; first: %s", m.name, r.errors, r.requests, r.firstErr))
		}
		if r.capped {
			s.notes = append(s.notes, fmt.Sprintf("%s: a window was stopped by the request cap before its deadline", m.name))
		}
	}
	s.rps = medianOf(runs, result.rps)
	s.p50ms = medianOf(runs, func(r result) float64 { return msf(r.quantile(0.5)) })
	s.p99ms = medianOf(runs, func(r result) float64 { return msf(r.quantile(0.99)) })
	rr, pr := m.ratios()
	switch {
	case m.floor == "":
		s.target, s.verdict = "-", "(measured)"
	case len(rr) == 0:
		s.target, s.verdict = "-", "no floor"
	default:
		s.hasRatio, s.rpsRatio, s.p99Ratio = true, spreadOf(rr), spreadOf(pr)
		s.target, s.verdict = "-", "-"
		if t, ok := targets[warmName(m.name)]; ok {
			s.target, s.verdict = t.String(), "PASS"
			if t.miss(s) {
				s.verdict = "MISS"
			}
		}
	}
	if s.errors > 0 {
		s.verdict += " ERRORS"
	}
	return s
}

func fmtSpread(s spread) string {
	return fmt.Sprintf("%.2f (%.2f–%.2f)", s.Median, s.Min, s.Max)
}

// report prints the table and returns whether every judged scenario passed and no run had errors.
func report(w io.Writer, ms []measurement, cfg loadConfig) (allPass bool) {
	stats := "planner statistics fresh (ANALYZE after each warm-up)"
	if !cfg.analyze {
		stats = "no ANALYZE (a database autovacuum has not reached yet)"
	}
	fmt.Fprintf(w, "\nKassa bench: %d connections, %d windows of %s per scenario, each after a window of its floor (%s warm-up each), loopback, %s\n\n",
		cfg.conns, cfg.rounds, cfg.duration, cfg.warmup, stats)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\tstatistics\trequests\terrors\treq/s\tp50 ms\tp99 ms\trps/floor median (min–max)\tp99/floor median (min–max)\ttarget\tverdict\t")
	allPass = true
	var notes []string
	sums := map[string]summary{}
	for _, m := range ms {
		s := summarize(m, cfg)
		sums[m.name] = s
		rr, pr := "-", "-"
		if s.hasRatio {
			rr, pr = fmtSpread(s.rpsRatio), fmtSpread(s.p99Ratio)
		}
		if strings.HasPrefix(s.verdict, "MISS") || s.errors > 0 {
			allPass = false
		}
		notes = append(notes, s.notes...)
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.0f\t%.2f\t%.2f\t%s\t%s\t%s\t%s\t\n", m.name, s.stats, s.requests, s.errors,
			s.rps, s.p50ms, s.p99ms, rr, pr, s.target, s.verdict)
	}
	tw.Flush()
	fmt.Fprintln(w)
	for _, m := range ms {
		if !m.cold {
			continue
		}
		warm := warmName(m.name)
		c, wm := sums[m.name], sums[warm]
		if !c.hasRatio || !wm.hasRatio {
			continue
		}
		verdict := "within the analysed run's spread"
		switch {
		case c.rpsRatio.Median < wm.rpsRatio.Min:
			verdict = "BELOW the analysed run's spread"
		case c.rpsRatio.Median > wm.rpsRatio.Max:
			verdict = "above the analysed run's spread"
		}
		fmt.Fprintf(w, "cold vs analysed, %s: rps/floor %.2f vs %s: %s\n",
			m.name, c.rpsRatio.Median, fmtSpread(wm.rpsRatio), verdict)
	}
	if c, ok := sums[floorConfirm]; ok && c.hasRatio {
		b := func(r float64) float64 { return r / (1 + r) }
		fmt.Fprintf(w, "bound on a whole payment ÷ create with a confirmation's rows: %.2f (%.2f–%.2f): %s ÷ create is r, a\n",
			b(c.rpsRatio.Median), b(c.rpsRatio.Min), b(c.rpsRatio.Max), floorConfirm)
		fmt.Fprintln(w, "payment could reach r ÷ (1 + r) of create if its confirmation cost nothing but those rows.")
	}
	fmt.Fprintln(w, "rps/floor and p99/floor: create session, create product and create price are compared with the")
	fmt.Fprintln(w, "INSERT+event floor; retrieve and replay with the primary-key SELECT floor. Each ratio is the median")
	fmt.Fprintln(w, "of the windows' ratios, each window measured right after a window of its floor; the range in")
	fmt.Fprintln(w, "brackets is the spread of those ratios. The cold runs use a merchant created for each window and no")
	fmt.Fprintln(w, "ANALYZE: \"never analysed\" on the database as installed, before anything else ran; \"cold")
	fmt.Fprintln(w, "statistics\" later, with statistics that know other merchants, not this one.")
	fmt.Fprintln(w, "\"confirm a payment\" is a whole payment (create a session on the merchant API, confirm it with the")
	fmt.Fprintln(w, "client secret on the browser API), compared with creating a session in the windows around it:")
	fmt.Fprintln(w, "its ratio is payments/s ÷ sessions created/s.")
	fmt.Fprintln(w, "\"subscribe and confirm the first payment\" (create a subscription, confirm its first payment on the")
	fmt.Fprintln(w, "browser API) is compared the same way: subscriptions/s ÷ sessions created/s.")
	fmt.Fprintln(w, "The refund scenario (partial refunds from the dashboard API, a new Idempotency-Key each) is compared")
	fmt.Fprintln(w, "with the INSERT+event floor; the App API scenarios (a merchant with a million payments) with the")
	fmt.Fprintln(w, "primary-key SELECT floor, and the analytics summary is also held to an absolute p99.")
	if len(notes) > 0 {
		fmt.Fprintln(w, "\nFLAGGED:\n  "+strings.Join(notes, "\n  "))
	}
	return allPass
}
