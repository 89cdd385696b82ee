package harness

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"testing"
)

// A Rule is one documented rule checked by the suite, named after the rule and citing the
// section of the interface document (§) or the decision (D) it checks.
type result struct {
	section, name string
	passed        bool
}

var (
	mu      sync.Mutex
	results []result
	titles  = map[string]string{}
)

// Section names a section for the summary, e.g. Section("4.3", "products").
func Section(id, title string) { mu.Lock(); titles[id] = title; mu.Unlock() }

// Rule runs fn as a subtest named "<section> <name>" and records its outcome for the summary.
func Rule(t *testing.T, section, name string, fn func(t *testing.T)) {
	t.Helper()
	t.Run(section+" "+name, func(t *testing.T) {
		t.Cleanup(func() {
			mu.Lock()
			results = append(results, result{section, name, !t.Failed() && !t.Skipped()})
			mu.Unlock()
		})
		fn(t)
	})
}

// PrintSummary writes every rule with its outcome, a line per section and the total.
func PrintSummary(w io.Writer) (passed, failed int) {
	mu.Lock()
	defer mu.Unlock()
	sort.SliceStable(results, func(i, j int) bool {
		if results[i].section != results[j].section {
			return sectionLess(results[i].section, results[j].section)
		}
		return results[i].name < results[j].name
	})
	type tally struct{ p, f int }
	per := map[string]*tally{}
	var order []string
	fmt.Fprintln(w, "\nconformance rules:")
	for _, r := range results {
		if per[r.section] == nil {
			per[r.section] = &tally{}
			order = append(order, r.section)
		}
		mark := "PASS"
		if r.passed {
			per[r.section].p++
			passed++
		} else {
			per[r.section].f++
			failed++
			mark = "FAIL"
		}
		fmt.Fprintf(w, "  %s  %-6s %s\n", mark, r.section, r.name)
	}
	fmt.Fprintln(w, "\nconformance summary:")
	for _, s := range order {
		fmt.Fprintf(w, "  %-6s %-32s %3d passed, %d failed\n", s, titles[s], per[s].p, per[s].f)
	}
	fmt.Fprintf(w, "conformance total: %d passed, %d failed\n", passed, failed)
	return passed, failed
}

// sectionLess orders "4.1" before "4.10" and document sections (digits) before decisions (D…).
func sectionLess(a, b string) bool {
	da, db := strings.HasPrefix(a, "D"), strings.HasPrefix(b, "D")
	if da != db {
		return db
	}
	pa, pb := strings.Split(strings.TrimPrefix(a, "D"), "."), strings.Split(strings.TrimPrefix(b, "D"), ".")
	for i := 0; i < len(pa) && i < len(pb); i++ {
		if pa[i] != pb[i] {
			var x, y int
			fmt.Sscan(pa[i], &x)
			fmt.Sscan(pb[i], &y)
			return x < y
		}
	}
	return len(pa) < len(pb)
}
