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
	minThroughput float64 // ≥ this fraction of the floor's req/s
	maxP99        float64 // p99 ≤ this multiple of the floor's p99 (0 = not judged)
}

func (t target) String() string {
	s := fmt.Sprintf("≥%.0f%% rps", t.minThroughput*100)
	if t.maxP99 > 0 {
		s += fmt.Sprintf(", p99 ≤%.0fx", t.maxP99)
	}
	return s
}

// targets of the issue, by scenario name.
var targets = map[string]target{
	"create checkout session":   {minThroughput: 0.5, maxP99: 2},
	"retrieve checkout session": {minThroughput: 0.5},
	"idempotent replay":         {minThroughput: 0.5},
}

type row struct {
	res   result
	floor string
	// noFloor marks a scenario that has no floor to be compared with (it is not a floor).
	noFloor bool
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond)) }

// report prints the table and returns whether every judged scenario passed and no run had errors.
func report(w io.Writer, rows []row, cfg loadConfig) (allPass bool) {
	floors := map[string]result{}
	for _, r := range rows {
		if r.floor == "" && !r.noFloor {
			floors[r.res.name] = r.res
		}
	}
	stats := "planner statistics fresh (ANALYZE after each warm-up)"
	if !cfg.analyze {
		stats = "no ANALYZE (a database autovacuum has not reached yet)"
	}
	fmt.Fprintf(w, "\nKassa bench: %d connections, %s per scenario (after %s warm-up), loopback, %s\n\n",
		cfg.conns, cfg.duration, cfg.warmup, stats)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\trequests\terrors\treq/s\tp50 ms\tp99 ms\trps/floor\tp99/floor\ttarget\tverdict\t")
	allPass = true
	var notes []string
	for _, r := range rows {
		res := r.res
		rpsRatio, p99Ratio, tgt, verdict := "", "", "", ""
		if r.noFloor {
			rpsRatio, p99Ratio, tgt, verdict = "-", "-", "-", "(measured)"
		} else if r.floor == "" {
			verdict = "(floor)"
		} else if f, ok := floors[r.floor]; ok && f.rps() > 0 && f.quantile(0.99) > 0 {
			rr := res.rps() / f.rps()
			pr := float64(res.quantile(0.99)) / float64(f.quantile(0.99))
			rpsRatio, p99Ratio = fmt.Sprintf("%.2f", rr), fmt.Sprintf("%.2f", pr)
			if t, ok := targets[res.name]; ok {
				tgt = t.String()
				verdict = "PASS"
				if rr < t.minThroughput || (t.maxP99 > 0 && pr > t.maxP99) {
					verdict, allPass = "MISS", false
				}
			} else {
				tgt, verdict = "-", "-"
			}
		} else {
			rpsRatio, p99Ratio, tgt, verdict = "n/a", "n/a", "-", "no floor"
		}
		if res.errors > 0 {
			verdict += " ERRORS"
			allPass = false
			notes = append(notes, fmt.Sprintf("%s: %d of %d requests failed; first: %s", res.name, res.errors, res.requests, res.firstErr))
		}
		if res.capped {
			notes = append(notes, fmt.Sprintf("%s: stopped by the request cap before the deadline", res.name))
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.0f\t%s\t%s\t%s\t%s\t%s\t%s\t\n", res.name, res.requests, res.errors,
			res.rps(), ms(res.quantile(0.5)), ms(res.quantile(0.99)), rpsRatio, p99Ratio, tgt, verdict)
	}
	tw.Flush()
	fmt.Fprintln(w)
	fmt.Fprintln(w, "rps/floor and p99/floor: create session and create product are compared with the INSERT+event floor;")
	fmt.Fprintln(w, "retrieve and replay with the primary-key SELECT floor; the webhook scenario's producers with the same")
	fmt.Fprintln(w, "create + expire load for a merchant without endpoints (its delivery figures follow the table).")
	fmt.Fprintln(w, "\"confirm a payment\" is a whole payment (create a session on the merchant API, confirm it with the")
	fmt.Fprintln(w, "client secret on the browser API) and has no floor.")
	if len(notes) > 0 {
		fmt.Fprintln(w, "\nFLAGGED:\n  "+strings.Join(notes, "\n  "))
	}
	return allPass
}
