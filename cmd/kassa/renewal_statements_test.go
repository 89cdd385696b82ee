package main

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
)

// renewalSweep renews n trialing subscriptions of one merchant, due at one instant, through
// the sweep, and answers the statements of the whole sweep (the renewals, their charges and
// outcomes) and the index of the COMMIT of its first unit of work (the one that claims and
// renews them: the charges come after it), checking that it renewed all n with numbers 1…n
// and paid them.
func renewalSweep(t *testing.T, n int) (sent []string, batchEnd int) {
	t.Helper()
	db, log := pgtest.NewCounted(t)
	scope := pgtest.Merchant(t, db)
	a := wire(db, "https://pay.example.test", nil, clockWiring{})
	ctx := context.Background()
	trial := 1
	sub := subscribeWithCard(t, a, scope, newPlan(t, a, scope, "month", &trial), "ada@example.com")
	// n − 1 copies, a customer each, due at the same instant (as the bench seeds its run).
	if _, err := db.Exec(`INSERT INTO customers (id, merchant_id, environment, name, email, email_key, processor_ref,
			default_payment_method, created, updated)
		SELECT c.id || '_b' || g, c.merchant_id, c.environment, c.name, 'b' || g || '.' || c.email, 'b' || g || '.' || c.email_key,
			c.processor_ref, c.default_payment_method, c.created, c.updated
		FROM subscriptions s JOIN customers c ON c.id = s.customer_id CROSS JOIN generate_series(2, $2::int) g WHERE s.id = $1`,
		sub.ID(), n); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO subscriptions (id, merchant_id, environment, status, customer_id, price_id, quantity,
			currency, unit_amount, interval, interval_count, anchor, period_start, period_end, trial_start, trial_end,
			latest_invoice, default_payment_method, cancel_at_period_end, metadata, created, updated, due_at, trial_notified,
			open_invoice, failures)
		SELECT s.id || '_b' || g, s.merchant_id, s.environment, s.status, s.customer_id || '_b' || g, s.price_id, s.quantity,
			s.currency, s.unit_amount, s.interval, s.interval_count, s.anchor, s.period_start, s.period_end, s.trial_start,
			s.trial_end, s.latest_invoice, s.default_payment_method, false, s.metadata, s.created, s.updated, s.due_at,
			s.trial_notified, '', 0
		FROM subscriptions s CROSS JOIN generate_series(2, $2::int) g WHERE s.id = $1`, sub.ID(), n); err != nil {
		t.Fatal(err)
	}
	// The trials' ending notices (due at once: the trial is shorter than the notice) go first,
	// so that the renewal is the first due work of the sweep that is counted.
	if _, err := a.billing.ProcessDue(ctx, &scope, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	before := log.Count()
	if _, err := a.billing.ProcessDue(ctx, &scope, time.Now().Add(48*time.Hour)); err != nil {
		t.Fatal(err)
	}
	sent = log.Since(before)
	batchEnd = slices.Index(sent, "COMMIT")
	if len(sent) == 0 || sent[0] != "BEGIN" || batchEnd < 0 {
		t.Fatalf("the sweep's first unit of work not found in %v", sent)
	}
	var numbers []string
	if err := db.Select(&numbers, `SELECT number FROM invoices WHERE merchant_id = $1 AND subscription_id IS NOT NULL
		AND number IS NOT NULL AND finalized_at >= $2 ORDER BY number`, scope.MerchantID, *sub.Snapshot().TrialEnd); err != nil {
		t.Fatal(err)
	}
	year := sub.Snapshot().TrialEnd.Year()
	if len(numbers) != n || !strings.HasSuffix(numbers[0], fmt.Sprintf("-%d-%04d", year, 1)) ||
		!strings.HasSuffix(numbers[n-1], fmt.Sprintf("-%d-%04d", year, n)) {
		t.Fatalf("renewal invoice numbers %v, want %d numbered 1…%d", numbers, n, n)
	}
	var paid int
	if err := db.Get(&paid, `SELECT count(*) FROM invoices WHERE merchant_id = $1 AND status = 'paid' AND finalized_at >= $2`,
		scope.MerchantID, *sub.Snapshot().TrialEnd); err != nil {
		t.Fatal(err)
	}
	if paid != n {
		t.Fatalf("%d renewal invoices paid, want %d", paid, n)
	}
	return sent, batchEnd
}

// perRenewal is what the sweep of 100 renewals (large) sends more than the sweep of 10
// (small), per renewal, by statement text (its first 100 characters, spaces folded), most
// first.
func perRenewal(small, large []string) string {
	key := func(q string) string {
		q = strings.Join(strings.Fields(q), " ")
		if len(q) > 100 {
			q = q[:100] + "…"
		}
		return q
	}
	n := map[string]int{}
	for _, q := range large {
		n[key(q)]++
	}
	for _, q := range small {
		n[key(q)]--
	}
	qs := make([]string, 0, len(n))
	for q, c := range n {
		if c != 0 {
			qs = append(qs, q)
		}
	}
	sort.Slice(qs, func(i, j int) bool { return n[qs[i]] > n[qs[j]] || n[qs[i]] == n[qs[j]] && qs[i] < qs[j] })
	var b strings.Builder
	for _, q := range qs {
		fmt.Fprintf(&b, "%6.2f  %s\n", float64(n[q])/90, q)
	}
	return b.String()
}

// Regression: one renewal batch of the sweep (a hundred subscriptions of one merchant, due at
// one instant) takes a number of statements that does not grow with the batch: the customers
// locked in one, their balances in one, the prefix read once, the numbers reserved in one, the
// invoices inserted in one, the subscriptions updated in one, the events in one
// (billing.renewMany). It took about seven per renewal. Run with -v to see the batch's
// statements and what the whole sweep sends per renewal, by text.
func TestRenewalBatchStatementsAreBounded(t *testing.T) {
	t.Parallel()
	sent10, end10 := renewalSweep(t, 10)
	sent100, end100 := renewalSweep(t, 100)
	small, large := sent10[:end10+1], sent100[:end100+1]
	all10, all100 := len(sent10), len(sent100)
	for i, q := range large {
		t.Logf("%2d %s", i+1, q)
	}
	t.Logf("a renewal batch: %d statements for 10 renewals, %d for 100", len(small), len(large))
	t.Logf("the whole sweep (renewals, charges, outcomes): %d statements for 10 renewals, %d for 100: %.2f per renewal more, by text:\n%s",
		all10, all100, float64(all100-all10)/90, perRenewal(sent10, sent100))
	if len(large) != len(small) {
		t.Errorf("a batch of 100 renewals took %d statements, a batch of 10 %d: the count grows with the batch", len(large), len(small))
	}
	if len(large) > 14 {
		t.Errorf("a batch of 100 renewals took %d statements, want at most 14", len(large))
	}
	// The charges of a batch begin in one unit of work, and their outcomes are applied
	// ManyApplied to a unit of work with one statement per table for the whole unit of work:
	// payments' writes, and the owner's (the invoices locked and saved, the subscriptions
	// locked and saved, their pending setups deleted: payments.PayableBatchOwner). What is
	// left per renewal is the sandbox processor's own record of the charge (one statement)
	// and a share of the units of work of up to 100 outcomes: 18.4 statements per renewal
	// for the whole sweep, then 6.7, then 1.84 (units of work of 20 outcomes), now about 1.
	if per := float64(all100-all10) / 90; per > 1.2 {
		t.Errorf("the whole sweep took %.2f statements per renewal, want at most 1.2", per)
	}
}
