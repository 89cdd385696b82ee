package postgres_test

import (
	"context"
	"testing"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/adapters/sandbox"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
)

// Migration 00031 backfills the ledger of the payments and refunds made before it: each
// succeeded payment gets its payment transaction (net of its fee, pending until its funds are
// available), each succeeded refund its refund and fee reversal, and the balances add up with
// every invariant of the ledger holding.
func TestLedgerMigrationBackfillsPaymentsAndRefunds(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	scope := pgtest.Merchant(t, db)
	svc := paymentsOn(db, fixedClocks{payNow})
	a := mustPay(t, svc, createSession(t, svc, scope), visaUS).Payment()
	b := mustPay(t, svc, createSession(t, svc, scope), visaUS).Payment()
	rf := refunderOn(t, db, sandbox.NewWithJournal(postgres.NewSandboxJournal(db)), core.SystemClock{})
	half := int64(1000)
	r, err := rf.Refund(ctx, payments.RefundRequest{Scope: scope, PaymentID: b.ID(), Amount: &half, Reason: payments.ReasonDuplicate})
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Type   string `db:"type"`
		Source string `db:"source_id"`
		Net    int64  `db:"net"`
	}
	read := func() map[string]int64 {
		var rows []row
		if err := db.Select(&rows, `SELECT type, source_id, net FROM balance_transactions WHERE merchant_id = $1`, scope.MerchantID); err != nil {
			t.Fatal(err)
		}
		out := map[string]int64{}
		for _, x := range rows {
			out[x.Type+" "+x.Source] = x.Net
		}
		return out
	}
	posted := read()
	if err := postgres.MigrateTo(ctx, db, 30); err != nil {
		t.Fatal(err)
	}
	if _, err := postgres.MigrateUp(ctx, db); err != nil {
		t.Fatal(err)
	}
	backfilled := read()
	want := map[string]int64{
		"payment " + a.ID():      a.Amount() - a.Fee().ServiceFeeChargeCurrency,
		"payment " + b.ID():      b.Amount() - b.Fee().ServiceFeeChargeCurrency,
		"refund " + r.ID():       -1000,
		"fee_reversal " + r.ID(): r.FeeReversed().ServiceFeeChargeCurrency,
	}
	if len(backfilled) != len(want) || len(posted) != len(want) {
		t.Fatalf("posted %v, backfilled %v, want %v", posted, backfilled, want)
	}
	for k, v := range want {
		if backfilled[k] != v || posted[k] != v {
			t.Fatalf("%s: posted %d, backfilled %d, want %d", k, posted[k], backfilled[k], v)
		}
	}
	checkLedger(t, db, scope, "the backfill")
	var pending int
	if err := db.Get(&pending, `SELECT count(*) FROM ledger_releases WHERE merchant_id = $1`, scope.MerchantID); err != nil || pending != 2 {
		t.Fatalf("pending after the backfill: %d %v", pending, err)
	}
}
