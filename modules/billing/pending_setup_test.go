package billing_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/modules/billing"
	"github.com/kassa-pay/kassa/modules/billing/billingtest"
)

// A setup waiting for 3-D Secure is deleted in the unit of work of whatever makes it stale:
// another card recorded for the first payment, the invoice it is for paid, the subscription
// canceled or expired. An old answer then finds nothing to save.
func TestPendingSetupDeletedWhenStale(t *testing.T) {
	waiting := func(t *testing.T, now *time.Time) (*billing.Service, *billingtest.Fake, *billing.Subscription) {
		t.Helper()
		svc, f := newTrialService(t, now)
		sub, err := svc.CreateSubscription(ctx, caller, body("price_trial"))
		if err != nil {
			t.Fatal(err)
		}
		snap := sub.Snapshot()
		fp, err := svc.ConfirmFirstPayment(ctx, snap.PaymentIntent, *snap.ClientSecret, cardInput("4000002760003184", ""))
		if err != nil || fp.Action == nil {
			t.Fatalf("3-D Secure card: %+v %v", fp, err)
		}
		if _, err := f.PendingSetup(ctx, scope, sub.ID()); err != nil {
			t.Fatalf("no pending setup: %v", err)
		}
		return svc, f, sub
	}
	gone := func(t *testing.T, f *billingtest.Fake, id, what string) {
		t.Helper()
		if _, err := f.PendingSetup(ctx, scope, id); !errors.Is(err, billing.ErrNoPendingSetup) {
			t.Fatalf("%s: the pending setup is still there (%v)", what, err)
		}
	}

	t.Run("another card saved for the first payment", func(t *testing.T) {
		now := time.Date(2027, 1, 31, 10, 0, 0, 0, time.UTC)
		svc, f, sub := waiting(t, &now)
		snap := sub.Snapshot()
		fp, err := svc.ConfirmFirstPayment(ctx, snap.PaymentIntent, *snap.ClientSecret, cardInput("4242424242424242", ""))
		if err != nil || fp.Subscription.Status() != billing.StatusTrialing {
			t.Fatalf("another card: %+v %v", fp, err)
		}
		gone(t, f, sub.ID(), "trialing with another card")
		if _, err := svc.ResolveFirstPayment(ctx, snap.PaymentIntent, *snap.ClientSecret, true); !errors.Is(err, billing.ErrPaymentIntentState) {
			t.Fatalf("old answer: %v", err)
		}
	})

	t.Run("canceled", func(t *testing.T) {
		now := time.Date(2027, 1, 31, 10, 0, 0, 0, time.UTC)
		svc, f, sub := waiting(t, &now)
		if _, err := svc.CancelSubscription(ctx, scope, sub.ID(), false); err != nil {
			t.Fatal(err)
		}
		gone(t, f, sub.ID(), "canceled")
	})

	t.Run("incomplete_expired", func(t *testing.T) {
		now := time.Date(2027, 1, 31, 10, 0, 0, 0, time.UTC)
		svc, f, sub := waiting(t, &now)
		now = now.Add(24 * time.Hour)
		if _, err := svc.ProcessDue(ctx, &scope, now); err != nil {
			t.Fatal(err)
		}
		if got, _ := f.Subscription(ctx, scope, sub.ID()); got.Status() != billing.StatusIncompleteExpired {
			t.Fatalf("status %s", got.Status())
		}
		gone(t, f, sub.ID(), "expired")
	})

	t.Run("its invoice paid", func(t *testing.T) {
		now := time.Date(2027, 1, 31, 10, 0, 0, 0, time.UTC)
		svc, f, sub := waiting(t, &now)
		put := func(invoice string) {
			p, _ := f.PendingSetup(ctx, scope, sub.ID())
			p.Invoice = invoice
			if err := f.Do(ctx, func(ctx context.Context, tx billing.Tx) error { return tx.PendingSetups().Put(ctx, p) }); err != nil {
				t.Fatal(err)
			}
		}
		paid := func(invoice string) {
			if err := f.Do(ctx, func(ctx context.Context, tx billing.Tx) error {
				_, err := svc.InvoicePaid(ctx, tx, scope, sub.ID(), invoice, "", now)
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}
		put("in_1")
		paid("in_2") // another invoice: the setup for in_1 still waits
		if p, err := f.PendingSetup(ctx, scope, sub.ID()); err != nil || p.Invoice != "in_1" {
			t.Fatalf("another invoice paid: %+v %v", p, err)
		}
		paid("in_1")
		gone(t, f, sub.ID(), "its invoice paid")
	})
}
