package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/billing"
	"github.com/kassa-pay/kassa/modules/catalog"
	"github.com/kassa-pay/kassa/ports"
)

// renewalBatchStatements renews n trialing subscriptions of one merchant, due at one instant,
// through the sweep, and answers the statements of the unit of work that claims and renews
// them (from its BEGIN to its COMMIT; the charges come after it), and the number of
// statements of the whole sweep (the renewals, their charges and outcomes), checking that it
// renewed all n with numbers 1…n and paid them.
func renewalBatchStatements(t *testing.T, n int) ([]string, int) {
	t.Helper()
	db, log := pgtest.NewCounted(t)
	scope := pgtest.Merchant(t, db)
	a := wire(db, "https://pay.example.test", nil, clockWiring{})
	ctx := context.Background()
	trial := 1
	prod, err := a.catalog.CreateProduct(ctx, scope, catalog.ProductInput{Name: "Plan"}, &catalog.PriceInput{Currency: "eur", UnitAmount: 900,
		Recurring: &catalog.Recurring{Interval: "month", IntervalCount: 1, TrialPeriodDays: &trial, UsageType: "licensed"}})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := a.billing.CreateSubscription(ctx, core.Caller{Scope: scope, Onboarded: true}, billing.CreateInput{
		PriceID: prod.DefaultPrice(), CustomerName: "Ada Lovelace", CustomerEmail: "ada@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.billing.ConfirmFirstPayment(ctx, sub.PaymentIntent(), *sub.Snapshot().ClientSecret, billing.MethodInput{
		Method: ports.MethodCard, Card: &ports.CardDetails{Number: "4242424242424242", ExpMonth: 12, ExpYear: 2031, CVC: "123"}}); err != nil {
		t.Fatal(err)
	}
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
	sent := log.Since(before)
	end := -1
	for i, q := range sent {
		if q == "COMMIT" {
			end = i
			break
		}
	}
	if len(sent) == 0 || sent[0] != "BEGIN" || end < 0 {
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
	return sent[:end+1], len(sent)
}

// Regression: one renewal batch of the sweep (a hundred subscriptions of one merchant, due at
// one instant) takes a number of statements that does not grow with the batch: the customers
// locked in one, their balances in one, the prefix read once, the numbers reserved in one, the
// invoices inserted in one, the subscriptions updated in one, the events in one
// (billing.renewMany). It took about seven per renewal.
func TestRenewalBatchStatementsAreBounded(t *testing.T) {
	t.Parallel()
	small, all10 := renewalBatchStatements(t, 10)
	large, all100 := renewalBatchStatements(t, 100)
	for i, q := range large {
		t.Logf("%2d %s", i+1, q)
	}
	t.Logf("a renewal batch: %d statements for 10 renewals, %d for 100", len(small), len(large))
	t.Logf("the whole sweep (renewals, charges, outcomes): %d statements for 10 renewals, %d for 100: %.2f per renewal more",
		all10, all100, float64(all100-all10)/90)
	if len(large) != len(small) {
		t.Errorf("a batch of 100 renewals took %d statements, a batch of 10 %d: the count grows with the batch", len(large), len(small))
	}
	if len(large) > 14 {
		t.Errorf("a batch of 100 renewals took %d statements, want at most 14", len(large))
	}
	// The charges of a batch begin in one unit of work, and payments' writes of their
	// outcomes are made for the whole unit of work at once, the invoices locked with one
	// statement in each (payments.Charger.ChargeMany): 6.7 statements per renewal for the
	// whole sweep, from 18.4.
	if per := float64(all100-all10) / 90; per > 7 {
		t.Errorf("the whole sweep took %.2f statements per renewal, want at most 7", per)
	}
}
