package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
)

// The App API's reader: offset pages newest first with has_more, the status filter, one
// payment within its scope, and the per-currency sums of a window.
func TestAppReader(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	other := pgtest.Merchant(t, db)
	day := time.Date(2026, 11, 18, 10, 0, 0, 0, time.UTC)
	svc := paymentsOn(db, fixedClocks{day})
	ctx := context.Background()
	payIn := func(sc core.Scope, currency string, amount int64) *payments.Payment {
		t.Helper()
		in := sessionInput()
		in.Currency, in.Amount = currency, &amount
		s, err := svc.Create(ctx, core.Caller{Scope: sc, Onboarded: true}, in)
		if err != nil {
			t.Fatal(err)
		}
		return mustPay(t, svc, s, visaUS).Payment()
	}
	eur1 := payIn(scope, "eur", 2500)
	usd := payIn(scope, "usd", 10000)
	eur2 := payIn(scope, "eur", 1000)
	foreign := payIn(other, "eur", 9999)
	r := postgres.NewAppReader(db)

	page, more, err := r.Payments(ctx, scope, 2, 0, "")
	if err != nil || len(page) != 2 || !more || page[0].ID() != eur2.ID() || page[1].ID() != usd.ID() {
		t.Fatalf("first page: %v %d %v", err, len(page), more)
	}
	page, more, err = r.Payments(ctx, scope, 2, 2, "")
	if err != nil || len(page) != 1 || more || page[0].ID() != eur1.ID() {
		t.Fatalf("last page: %v %d %v", err, len(page), more)
	}
	page, more, err = r.Payments(ctx, scope, 1, 1, "")
	if err != nil || len(page) != 1 || !more {
		t.Fatalf("middle row: %v %d %v", err, len(page), more)
	}
	if page, more, err = r.Payments(ctx, scope, 25, 3, ""); err != nil || len(page) != 0 || more {
		t.Fatalf("past the end: %v %d %v", err, len(page), more)
	}
	if page, _, err = r.Payments(ctx, scope, 25, 0, payments.StatusFailed); err != nil || len(page) != 0 {
		t.Fatalf("failed: %v %d", err, len(page))
	}
	if page, _, err = r.Payments(ctx, scope, 25, 0, payments.StatusSucceeded); err != nil || len(page) != 3 {
		t.Fatalf("succeeded: %v %d", err, len(page))
	}
	if _, err := r.Payment(ctx, scope, foreign.ID()); !errors.Is(err, payments.ErrNotFound) {
		t.Fatalf("another merchant's payment: %v", err)
	}
	live := core.Scope{MerchantID: scope.MerchantID, Env: core.EnvLive}
	if _, err := r.Payment(ctx, live, eur1.ID()); !errors.Is(err, payments.ErrNotFound) {
		t.Fatalf("the other environment's payment: %v", err)
	}

	vols, err := r.Volumes(ctx, scope, day.Add(-time.Hour), day.Add(time.Hour))
	if err != nil || len(vols) != 2 {
		t.Fatalf("volumes: %v %+v", err, vols)
	}
	eur, us := vols[0], vols[1]
	fees := eur1.Fee().ServiceFeeChargeCurrency + eur2.Fee().ServiceFeeChargeCurrency
	if eur.Currency != "EUR" || eur.Gross != 3500 || eur.Count != 2 || eur.Fees != fees || eur.Net() != 3500-fees ||
		us.Currency != "USD" || us.Gross != 10000 || us.Count != 1 {
		t.Fatalf("volumes: %+v", vols)
	}
	if vols, err = r.Volumes(ctx, scope, day.Add(time.Hour), day.Add(2*time.Hour)); err != nil || len(vols) != 0 {
		t.Fatalf("an empty window: %v %+v", err, vols)
	}
}
