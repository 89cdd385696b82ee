package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
)

// monthAdvanceStatements advances the test clock of one merchant with subs subscriptions (a
// card each, renewing every interval) by 30 days, and answers the statements the advance sent.
func monthAdvanceStatements(t *testing.T, subs int, interval string) []string {
	t.Helper()
	return advanceStatements(t, subs, interval, 1, 30)
}

// advanceStatements sets up one merchant with subs subscriptions (a card each, renewing every
// interval), advances its test clock warm days (the first snapshots, the first payments'
// releases and payouts), and answers the statements of a further advance of days.
func advanceStatements(t *testing.T, subs int, interval string, warm, days int64) []string {
	t.Helper()
	db, log := pgtest.NewCounted(t)
	scope := pgtest.Merchant(t, db)
	a := wire(db, "https://pay.example.test", nil, clockWiring{Wait: time.Minute})
	ctx := context.Background()
	// A first advance freezes the clock, so the month below starts at a known state.
	day := int64(24 * 3600)
	if _, err := a.testclock.Advance(ctx, scope, &day, nil); err != nil {
		t.Fatal(err)
	}
	if subs > 0 {
		price := newPlan(t, a, scope, interval, nil)
		for i := range subs {
			subscribeWithCard(t, a, scope, price, fmt.Sprintf("ada%d@example.com", i))
		}
	}
	warmup := warm * day
	if _, err := a.testclock.Advance(ctx, scope, &warmup, nil); err != nil {
		t.Fatal(err)
	}
	before := log.Count()
	span := days * day
	if _, err := a.testclock.Advance(ctx, scope, &span, nil); err != nil {
		t.Fatal(err)
	}
	return log.Since(before)
}

// byText counts statements by their text, most frequent first.
func byText(sent []string) string {
	n := map[string]int{}
	for _, q := range sent {
		n[q]++
	}
	qs := make([]string, 0, len(n))
	for q := range n {
		qs = append(qs, q)
	}
	sort.Slice(qs, func(i, j int) bool { return n[qs[i]] > n[qs[j]] || n[qs[i]] == n[qs[j]] && qs[i] < qs[j] })
	var b strings.Builder
	for _, q := range qs {
		fmt.Fprintf(&b, "%5d  %s\n", n[q], q)
	}
	return b.String()
}

// The statements of a month's advance of one merchant, by text (docs/performance.md, "The
// test clock's idle days"): run with -v to see the table.
func TestMonthAdvanceStatementsTable(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		subs     int
		interval string
	}{{0, "month"}, {3, "month"}, {1, "year"}} {
		sent := monthAdvanceStatements(t, c.subs, c.interval)
		t.Logf("%d subscriptions (%sly): %d statements for 30 days\n%s", c.subs, c.interval, len(sent), byText(sent))
	}
}

// Regression: a test clock advance over days with no work but the daily MRR snapshot costs a
// few rounds of the scheduler, however many days it spans: the snapshots of a run of idle days
// are written at once (billing.MRRHistory.ProcessDue). It took about 21 statements a day.
func TestIdleClockAdvanceStatementsAreBounded(t *testing.T) {
	t.Parallel()
	// One yearly subscription, its first payment released and paid out in the first 10 days:
	// nothing but the snapshots falls due in the next 30 or 90.
	month := advanceStatements(t, 1, "year", 10, 30)
	quarter := advanceStatements(t, 1, "year", 10, 90)
	t.Logf("an idle advance of one merchant: %d statements for 30 days, %d for 90\n%s", len(month), len(quarter), byText(quarter))
	if len(quarter) != len(month) {
		t.Errorf("an idle advance took %d statements for 90 days, %d for 30: the count grows with the days", len(quarter), len(month))
	}
	if len(quarter) > 32 {
		t.Errorf("an idle advance of 90 days took %d statements, want at most 32", len(quarter))
	}
}
