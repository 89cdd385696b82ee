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
	section, name   string
	passed, skipped bool
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
			results = append(results, result{section, name, !t.Failed(), !t.Failed() && t.Skipped()})
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
	type tally struct{ p, f, s int }
	per := map[string]*tally{}
	var order []string
	fmt.Fprintln(w, "\nconformance rules:")
	for _, r := range results {
		if per[r.section] == nil {
			per[r.section] = &tally{}
			order = append(order, r.section)
		}
		mark := "PASS"
		switch {
		case r.skipped: // needs the server's database or log: not available against this target
			per[r.section].s++
			mark = "SKIP"
		case r.passed:
			per[r.section].p++
			passed++
		default:
			per[r.section].f++
			failed++
			mark = "FAIL"
		}
		fmt.Fprintf(w, "  %s  %-6s %s\n", mark, r.section, r.name)
	}
	fmt.Fprintln(w, "\nconformance summary:")
	for _, s := range order {
		fmt.Fprintf(w, "  %-6s %-34s %3d passed, %d failed", s, titles[s], per[s].p, per[s].f)
		if per[s].s > 0 {
			fmt.Fprintf(w, ", %d skipped", per[s].s)
		}
		fmt.Fprintln(w)
	}
	skipped := len(results) - passed - failed
	fmt.Fprintf(w, "conformance total: %d passed, %d failed, %d skipped\n", passed, failed, skipped)
	return passed, failed
}

// sectionLess orders "4.1" before "4.10", document sections (digits) before decisions (D…),
// and both before cross-cutting groups such as ISO.
func sectionLess(a, b string) bool {
	if ra, rb := sectionRank(a), sectionRank(b); ra != rb {
		return ra < rb
	}
	if sectionRank(a) == 2 {
		return a < b
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

func sectionRank(s string) int {
	switch {
	case s != "" && s[0] >= '0' && s[0] <= '9':
		return 0
	case len(s) > 1 && s[0] == 'D' && s[1] >= '0' && s[1] <= '9':
		return 1
	}
	return 2
}
