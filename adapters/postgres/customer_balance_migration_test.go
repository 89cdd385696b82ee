package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
)

// Migration 00069 numbers the balance transactions already there in the order they were made
// (the list's order), and later ones after them; down and up again keeps the rows it can.
func TestCustomerBalanceAdjustmentsMigrationOrdersTheRowsThere(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	scope := pgtest.Merchant(t, db)
	if err := postgres.MigrateTo(ctx, db, 68); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	db.MustExec(`INSERT INTO customers (id, merchant_id, environment, name, email, email_key, created, updated)
		VALUES ('cus_m1', $1, 'test', 'Ada', 'ada@example.com', 'ada@example.com', $2, $2)`, scope.MerchantID, t0)
	// Inserted out of their time order.
	for i, at := range []int{3, 1, 2} {
		db.MustExec(`INSERT INTO customer_balance_transactions (id, merchant_id, environment, customer_id, currency, amount, reason,
			subscription_id, created) VALUES ($1, $2, 'test', 'cus_m1', 'EUR', $3, 'proration_credit', 'sub_1', $4)`,
			fmt.Sprintf("cbtxn_%d", at), scope.MerchantID, -100*(i+1), t0.Add(time.Duration(at)*time.Hour))
	}
	if _, err := postgres.MigrateUp(ctx, db); err != nil {
		t.Fatal(err)
	}
	db.MustExec(`INSERT INTO customer_balance_transactions (id, merchant_id, environment, customer_id, currency, amount, reason,
		subscription_id, description, created) VALUES ('cbtxn_4', $1, 'test', 'cus_m1', 'EUR', -50, 'adjustment', '', 'Goodwill', $2)`,
		scope.MerchantID, t0)
	var order []string
	if err := db.Select(&order, `SELECT id FROM customer_balance_transactions WHERE customer_id = 'cus_m1' ORDER BY seq`); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(order) != "[cbtxn_1 cbtxn_2 cbtxn_3 cbtxn_4]" {
		t.Fatalf("order %v", order)
	}
	if err := postgres.MigrateTo(ctx, db, 68); err != nil {
		t.Fatal(err)
	}
	if _, err := postgres.MigrateUp(ctx, db); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.Get(&n, `SELECT count(*) FROM customer_balance_transactions WHERE customer_id = 'cus_m1'`); err != nil || n != 3 {
		t.Fatalf("after down and up: %d rows (%v), want the 3 that are not adjustments", n, err)
	}
}

// Migration 00072 lets the balance hold the charge of the lines a canceled subscription kept
// (proration_charge_at_cancel); before it the reason is refused, and down removes those rows.
func TestCustomerBalanceProrationChargeAtCancelMigration(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	scope := pgtest.Merchant(t, db)
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	db.MustExec(`INSERT INTO customers (id, merchant_id, environment, name, email, email_key, created, updated)
		VALUES ('cus_m1', $1, 'test', 'Ada', 'ada@example.com', 'ada@example.com', $2, $2)`, scope.MerchantID, t0)
	const insert = `INSERT INTO customer_balance_transactions (id, merchant_id, environment, customer_id, currency, amount, reason,
		subscription_id, created) VALUES ($1, $2, 'test', 'cus_m1', 'EUR', $3, $4, 'sub_1', $5)`
	db.MustExec(insert, "cbtxn_1", scope.MerchantID, 857, "proration_charge_at_cancel", t0)
	db.MustExec(insert, "cbtxn_2", scope.MerchantID, -857, "proration_credit", t0)
	if err := postgres.MigrateTo(ctx, db, 71); err != nil {
		t.Fatal(err)
	}
	var reasons []string
	if err := db.Select(&reasons, `SELECT reason FROM customer_balance_transactions WHERE customer_id = 'cus_m1'`); err != nil ||
		fmt.Sprint(reasons) != "[proration_credit]" {
		t.Fatalf("after down: %v %v", reasons, err)
	}
	if _, err := db.Exec(insert, "cbtxn_3", scope.MerchantID, 857, "proration_charge_at_cancel", t0); err == nil {
		t.Fatal("the reason was taken before the migration")
	}
	if _, err := postgres.MigrateUp(ctx, db); err != nil {
		t.Fatal(err)
	}
	db.MustExec(insert, "cbtxn_3", scope.MerchantID, 857, "proration_charge_at_cancel", t0)
}
