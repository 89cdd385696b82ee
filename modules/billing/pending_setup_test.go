package billing_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
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

// InvoicesPaid, a charge batch's invoices paid in one unit of work, does for each what
// InvoicePaid does: the subscription collecting the invoice active again with its event, a
// subscription the invoice does not concern unchanged and without one, an invoice whose
// subscription is gone paying alone, a setup waiting for 3-D Secure deleted for its invoice
// only; the events answered in the order asked.
func TestInvoicesPaidAsOneByOne(t *testing.T) {
	now := time.Date(2027, 1, 31, 10, 0, 0, 0, time.UTC)
	svc, f := newTrialService(t, &now)
	var subs []*billing.Subscription
	for i := range 3 {
		sub, err := svc.CreateSubscription(ctx, caller, body("price_trial"))
		if err != nil {
			t.Fatal(err)
		}
		s := sub.Snapshot()
		if i < 2 { // collecting in_0, in_1 after a failed renewal
			s.Status, s.Collection = billing.StatusPastDue, billing.Collection{Invoice: fmt.Sprintf("in_%d", i), RenewedAt: &now, Failures: 1}
		}
		sub = billing.RehydrateSubscription(s)
		if err := f.Do(ctx, func(ctx context.Context, tx billing.Tx) error {
			if err := tx.Subscriptions().Save(ctx, sub); err != nil {
				return err
			}
			return tx.PendingSetups().Put(ctx, billing.PendingSetup{Scope: scope, Subscription: sub.ID(),
				Invoice: []string{"in_0", "in_other", "in_2"}[i], ProcessorRef: "seti_" + sub.ID(), Created: now})
		}); err != nil {
			t.Fatal(err)
		}
		subs = append(subs, sub)
	}
	at := now.Add(time.Hour)
	var evs [][]core.Event
	if err := f.Do(ctx, func(ctx context.Context, tx billing.Tx) error {
		var err error
		evs, err = svc.InvoicesPaid(ctx, tx, []billing.PaidInvoice{
			{Scope: scope, Subscription: subs[1].ID(), Invoice: "in_1", At: at},
			{Scope: scope, Subscription: "sub_gone", Invoice: "in_9", At: at},
			{Scope: scope, Subscription: subs[2].ID(), Invoice: "in_3", At: at},
			{Scope: scope, Subscription: subs[0].ID(), Invoice: "in_0", At: at},
		})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(evs) != 4 || len(evs[1]) != 0 || len(evs[2]) != 0 {
		t.Fatalf("events %v, want four, of the first and the last only", evs)
	}
	for _, x := range []struct {
		evs []core.Event
		sub *billing.Subscription
	}{{evs[0], subs[1]}, {evs[3], subs[0]}} {
		if len(x.evs) != 1 || x.evs[0].Type != core.EventSubscriptionUpdated || x.evs[0].ObjectID != x.sub.ID() || !x.evs[0].Created.Equal(at) {
			t.Fatalf("events of %s: %+v", x.sub.ID(), x.evs)
		}
		got, _ := f.Subscription(ctx, scope, x.sub.ID())
		if got.Status() != billing.StatusActive || got.Collecting() != "" {
			t.Fatalf("%s after its invoice was paid: %s, collecting %q", x.sub.ID(), got.Status(), got.Collecting())
		}
	}
	if got, _ := f.Subscription(ctx, scope, subs[2].ID()); got.Status() != subs[2].Status() {
		t.Fatalf("a subscription another invoice's payment does not concern is %s", got.Status())
	}
	if _, err := f.PendingSetup(ctx, scope, subs[0].ID()); !errors.Is(err, billing.ErrNoPendingSetup) {
		t.Fatalf("the setup for the paid invoice: %v", err)
	}
	for _, sub := range subs[1:] {
		if _, err := f.PendingSetup(ctx, scope, sub.ID()); err != nil {
			t.Fatalf("a setup for another invoice was deleted: %v", err)
		}
	}
}
