package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
)

// Regression: the unscoped background sweep renews inside the unit of work that claimed its
// batch and takes no second pool connection there (it read the invoice number prefix on the
// pool): with a pool of one connection it renews, the invoice numbered with the prefix the
// merchant chose, rather than waiting for the connection it holds.
func TestUnscopedSweepRenewsOnOneConnection(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	a := wire(db, "https://pay.example.test", nil, clockWiring{})
	ctx := context.Background()
	trial := 1
	sub := subscribeWithCard(t, a, scope, newPlan(t, a, scope, "month", &trial), "ada@example.com")
	if _, err := db.Exec(`INSERT INTO invoice_settings (merchant_id, invoice_prefix, updated) VALUES ($1, 'ACME', now())`, scope.MerchantID); err != nil {
		t.Fatal(err)
	}

	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	sweep, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if _, err := a.billing.ProcessDue(sweep, nil, time.Now().Add(48*time.Hour)); err != nil {
		t.Fatalf("the unscoped sweep: %v (a second connection inside its unit of work waits for the only one)", err)
	}
	var numbers []string
	if err := db.Select(&numbers, `SELECT number FROM invoices WHERE merchant_id = $1 AND subscription_id = $2`, scope.MerchantID, sub.ID()); err != nil {
		t.Fatal(err)
	}
	if len(numbers) != 1 || numbers[0] != fmt.Sprintf("ACME-INV-%d-0001", sub.Snapshot().TrialEnd.Year()) {
		t.Fatalf("renewal invoices %v, want one numbered with the chosen prefix ACME", numbers)
	}
}
