package billingtest

import (
	"context"
	"errors"
	"testing"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/billing"
)

// pendingSetups: a subscription's setup waiting for 3-D Secure round-trips, a second one
// replaces the first, another scope sees none, a delete for another invoice keeps it, a
// rolled back delete keeps it, and a delete (also of none) leaves none.
func pendingSetups(t *testing.T, h Harness) {
	scope, other := h.NewScope(t), h.NewScope(t)
	sub := newSubscription(t, h, scope, "ada@example.com", monthly, t0)
	put := func(p billing.PendingSetup) {
		t.Helper()
		if err := h.UoW.Do(ctx, func(ctx context.Context, tx billing.Tx) error { return tx.PendingSetups().Put(ctx, p) }); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.Store.PendingSetup(ctx, scope, sub.ID()); !errors.Is(err, billing.ErrNoPendingSetup) {
		t.Fatalf("before any setup: %v", err)
	}
	first := billing.PendingSetup{Scope: scope, Subscription: sub.ID(), Invoice: "in_1", ProcessorRef: "ref_1", CustomerRef: "cus_p", Created: t0}
	put(first)
	if got, err := h.Store.PendingSetup(ctx, scope, sub.ID()); err != nil || got != first {
		t.Fatalf("read back %+v %v", got, err)
	}
	// Deleted for its invoice only (and only in its scope).
	for _, c := range []struct {
		scope   core.Scope
		invoice string
	}{{scope, "in_2"}, {scope, ""}, {other, "in_1"}} {
		if err := h.UoW.Do(ctx, func(ctx context.Context, tx billing.Tx) error {
			return tx.PendingSetups().DeleteForInvoices(ctx, []billing.SetupRef{{Scope: c.scope, Subscription: sub.ID(), Invoice: c.invoice}})
		}); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := h.Store.PendingSetup(ctx, scope, sub.ID()); err != nil || got != first {
		t.Fatalf("deleted for another invoice or scope: %+v %v", got, err)
	}
	if err := h.UoW.Do(ctx, func(ctx context.Context, tx billing.Tx) error {
		return tx.PendingSetups().DeleteForInvoices(ctx, []billing.SetupRef{{Scope: scope, Subscription: sub.ID(), Invoice: "in_1"}})
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Store.PendingSetup(ctx, scope, sub.ID()); !errors.Is(err, billing.ErrNoPendingSetup) {
		t.Fatalf("deleted for its invoice: %v", err)
	}
	put(first)
	second := first
	second.Invoice, second.ProcessorRef, second.Created = "", "ref_2", t0.Add(60e9)
	put(second)
	if _, err := h.Store.PendingSetup(ctx, other, sub.ID()); !errors.Is(err, billing.ErrNoPendingSetup) {
		t.Fatalf("another scope sees %v", err)
	}
	err := h.UoW.Do(ctx, func(ctx context.Context, tx billing.Tx) error {
		got, err := tx.PendingSetups().Lock(ctx, scope, sub.ID())
		if err != nil {
			return err
		}
		if got != second {
			t.Errorf("locked %+v, want the replacement %+v", got, second)
		}
		if err := tx.PendingSetups().Delete(ctx, scope, sub.ID()); err != nil {
			return err
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("rolled back delete: %v", err)
	}
	if got, err := h.Store.PendingSetup(ctx, scope, sub.ID()); err != nil || got != second {
		t.Fatalf("after the rollback %+v %v", got, err)
	}
	for range 2 {
		if err := h.UoW.Do(ctx, func(ctx context.Context, tx billing.Tx) error {
			return tx.PendingSetups().Delete(ctx, scope, sub.ID())
		}); err != nil {
			t.Fatal(err)
		}
	}
	err = h.UoW.Do(ctx, func(ctx context.Context, tx billing.Tx) error {
		_, err := tx.PendingSetups().Lock(ctx, scope, sub.ID())
		return err
	})
	if !errors.Is(err, billing.ErrNoPendingSetup) {
		t.Fatalf("after the delete: %v", err)
	}
}
