package billing_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/modules/billing"
)

// A subscription that ends with create_prorations lines kept for its next renewal puts their
// net on the customer's balance in the unit of work that ends it, canceled now or at its
// period end by the sweep: a credit, or a charge the customer owes. A second cancellation
// (refused: already canceled) and a second sweep leave the balance as it was.
func TestEndedSubscriptionKeepsItsProrationNet(t *testing.T) {
	for _, c := range []struct {
		name        string
		atPeriodEnd bool
		amounts     []int64
		want        int64
	}{
		{"canceled now, a net credit", false, []int64{-1714, 857}, -857},
		{"canceled at the period end, a net credit", true, []int64{-1714, 857}, -857},
		{"canceled now, a net charge", false, []int64{-857, 1714}, 857},
		{"canceled at the period end, a net charge", true, []int64{-857, 1714}, 857},
		{"lines that cancel out", false, []int64{-857, 857}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			now := time.Date(2027, 1, 31, 10, 0, 0, 0, time.UTC)
			svc, f := newTrialService(t, &now)
			sub, err := svc.CreateSubscription(ctx, caller, body("price_monthly"))
			if err != nil {
				t.Fatal(err)
			}
			// Active, with the kept lines of a plan change (what create_prorations leaves).
			snap := sub.Snapshot()
			snap.Status = billing.StatusActive
			for _, a := range c.amounts {
				snap.PendingLines = append(snap.PendingLines, billing.InvoiceLine{Description: "kept", Quantity: 1, UnitAmount: a})
			}
			if err := f.Do(ctx, func(ctx context.Context, tx billing.Tx) error {
				return tx.Subscriptions().Save(ctx, billing.RehydrateSubscription(snap))
			}); err != nil {
				t.Fatal(err)
			}
			if _, err := svc.CancelSubscription(ctx, scope, sub.ID(), c.atPeriodEnd); err != nil {
				t.Fatal(err)
			}
			if c.atPeriodEnd {
				now = snap.PeriodEnd
				if _, err := svc.ProcessDue(ctx, &scope, now); err != nil {
					t.Fatal(err)
				}
			}
			got, _ := f.Subscription(ctx, scope, sub.ID())
			if got.Status() != billing.StatusCanceled || len(got.PendingLines()) != 0 {
				t.Fatalf("subscription %s, kept %+v", got.Status(), got.PendingLines())
			}
			bal, err := f.CustomerBalances(ctx, scope, sub.Customer())
			if err != nil || bal[snap.Currency] != c.want {
				t.Fatalf("balance %v %v, want %d", bal, err, c.want)
			}
			if _, err := svc.CancelSubscription(ctx, scope, sub.ID(), false); !errors.Is(err, billing.ErrAlreadyCanceled) {
				t.Fatalf("second cancel: %v", err)
			}
			if _, err := svc.ProcessDue(ctx, &scope, now.AddDate(0, 1, 0)); err != nil {
				t.Fatal(err)
			}
			if again, _ := f.CustomerBalances(ctx, scope, sub.Customer()); again[snap.Currency] != c.want {
				t.Fatalf("balance after a second cancel and sweep %v, want %d", again, c.want)
			}
		})
	}
}
