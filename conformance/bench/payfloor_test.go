package main

import (
	"context"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
)

// The confirmation floor writes the rows a confirmation writes, by hand: it must follow the
// schema, or the bench reports a floor of errors (it did once a migration made started_at,
// payable_kind and payable_key required).
func TestConfirmFloorWritesOnTheCurrentSchema(t *testing.T) {
	ctx := context.Background()
	db, url := pgtest.NewWithURL(t)
	scope := pgtest.Merchant(t, db)
	f := newConfirmFloor(url, scope.MerchantID, 2, time.Second)
	if err := f.open(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.close)
	for _, sid := range f.ids[:3] {
		if err := f.confirm(ctx, sid); err != nil {
			t.Fatal(err)
		}
	}
	var n int
	if err := db.GetContext(ctx, &n, `SELECT count(*) FROM payments WHERE merchant_id = $1`, scope.MerchantID); err != nil || n != 3 {
		t.Fatalf("%d payments, %v", n, err)
	}
}
