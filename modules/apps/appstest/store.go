// Package appstest is the contract suite of apps.Store, run on the in-memory fake
// (modules/apps) and on PostgreSQL (adapters/postgres).
package appstest

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/modules/apps"
)

// Harness is one store under test and a way to make a merchant it knows.
type Harness struct {
	Store       apps.Store
	NewMerchant func(t *testing.T) string
}

var now = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

func newApp(t *testing.T, h Harness, reviewed bool, scopes ...string) *apps.App {
	t.Helper()
	a, _, err := apps.NewApp(apps.AppInput{Name: "Contract app", RedirectURIs: []string{"https://app.example/cb"}, Scopes: scopes, Reviewed: reviewed}, now)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Store.CreateApp(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	return a
}

// RunStore runs the contract on the stores newHarness gives (one per case).
func RunStore(t *testing.T, newHarness func(t *testing.T) Harness) {
	ctx := context.Background()

	t.Run("app round trip", func(t *testing.T) {
		h := newHarness(t)
		a := newApp(t, h, true, apps.ScopePaymentsRead, apps.ScopePayoutsRead)
		got, err := h.Store.GetApp(ctx, a.ID())
		if err != nil {
			t.Fatal(err)
		}
		want, have := a.Snapshot(), got.Snapshot()
		if have.ID != want.ID || have.Name != want.Name || have.ClientID != want.ClientID || !slices.Equal(have.ClientSecretHash, want.ClientSecretHash) ||
			!slices.Equal(have.RedirectURIs, want.RedirectURIs) || !slices.Equal(have.Scopes, want.Scopes) || have.Reviewed != want.Reviewed || !have.Created.Equal(want.Created) {
			t.Fatalf("got %+v, want %+v", have, want)
		}
	})

	t.Run("unknown app is ErrNotFound", func(t *testing.T) {
		h := newHarness(t)
		if _, err := h.Store.GetApp(ctx, "app_unknown"); !errors.Is(err, apps.ErrNotFound) {
			t.Fatalf("got %v", err)
		}
	})

	t.Run("installation round trip and lookup by either token", func(t *testing.T) {
		h := newHarness(t)
		a := newApp(t, h, false, apps.ScopePaymentsRead, apps.ScopeMerchantRead)
		i, tokens, err := apps.NewInstallation(a, h.NewMerchant(t), nil, now)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Store.CreateInstallation(ctx, i); err != nil {
			t.Fatal(err)
		}
		got, err := h.Store.GetInstallation(ctx, i.ID())
		if err != nil {
			t.Fatal(err)
		}
		if got.ID() != i.ID() || got.AppID() != a.ID() || got.MerchantID() != i.MerchantID() || !slices.Equal(got.Scopes(), i.Scopes()) || got.Revoked() || !got.Created().Equal(now) {
			t.Fatalf("got %+v", got.Snapshot())
		}
		for _, tok := range []string{tokens.Live, tokens.Test} {
			byHash, err := h.Store.InstallationByTokenHash(ctx, apps.HashToken(tok))
			if err != nil || byHash.ID() != i.ID() {
				t.Fatalf("by token hash: %v %v", byHash, err)
			}
		}
		if _, err := h.Store.InstallationByTokenHash(ctx, apps.HashToken("at_test_other")); !errors.Is(err, apps.ErrNotFound) {
			t.Fatalf("unknown hash: %v", err)
		}
		if _, err := h.Store.GetInstallation(ctx, "00000000-0000-4000-8000-000000000000"); !errors.Is(err, apps.ErrNotFound) {
			t.Fatalf("unknown installation: %v", err)
		}
	})

	t.Run("revoke once; the revoked installation is still found by its token, marked revoked", func(t *testing.T) {
		h := newHarness(t)
		a := newApp(t, h, false, apps.ScopePaymentsRead)
		i, tokens, err := apps.NewInstallation(a, h.NewMerchant(t), nil, now)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Store.CreateInstallation(ctx, i); err != nil {
			t.Fatal(err)
		}
		at := now.Add(time.Hour)
		if err := h.Store.RevokeInstallation(ctx, i.ID(), at); err != nil {
			t.Fatal(err)
		}
		if err := h.Store.RevokeInstallation(ctx, i.ID(), at); !errors.Is(err, apps.ErrNotFound) {
			t.Fatalf("second revoke: %v", err)
		}
		got, err := h.Store.InstallationByTokenHash(ctx, apps.HashToken(tokens.Live))
		if err != nil || got.RevokedAt() == nil || !got.RevokedAt().Equal(at) {
			t.Fatalf("revoked: %v %v", got, err)
		}
		if err := h.Store.RevokeInstallation(ctx, "00000000-0000-4000-8000-000000000000", at); !errors.Is(err, apps.ErrNotFound) {
			t.Fatalf("unknown: %v", err)
		}
	})

	t.Run("one active installation per app and merchant; a new one after uninstalling", func(t *testing.T) {
		h := newHarness(t)
		a := newApp(t, h, false, apps.ScopePaymentsRead)
		m := h.NewMerchant(t)
		first, _, _ := apps.NewInstallation(a, m, nil, now)
		if err := h.Store.CreateInstallation(ctx, first); err != nil {
			t.Fatal(err)
		}
		second, _, _ := apps.NewInstallation(a, m, nil, now)
		if err := h.Store.CreateInstallation(ctx, second); !errors.Is(err, apps.ErrInstalled) {
			t.Fatalf("second active: %v", err)
		}
		other, _, _ := apps.NewInstallation(a, h.NewMerchant(t), nil, now)
		if err := h.Store.CreateInstallation(ctx, other); err != nil {
			t.Fatalf("another merchant: %v", err)
		}
		if err := h.Store.RevokeInstallation(ctx, first.ID(), now); err != nil {
			t.Fatal(err)
		}
		if err := h.Store.CreateInstallation(ctx, second); err != nil {
			t.Fatalf("after uninstall: %v", err)
		}
	})

	t.Run("installing on an unknown merchant is ErrUnknownMerchant", func(t *testing.T) {
		h := newHarness(t)
		a := newApp(t, h, false, apps.ScopePaymentsRead)
		i, _, _ := apps.NewInstallation(a, "mer_doesnotexist000000000000", nil, now)
		if err := h.Store.CreateInstallation(ctx, i); !errors.Is(err, apps.ErrUnknownMerchant) {
			t.Fatalf("got %v", err)
		}
	})

	t.Run("concurrent installs of one app on one merchant: exactly one wins", func(t *testing.T) {
		h := newHarness(t)
		a := newApp(t, h, false, apps.ScopePaymentsRead)
		m := h.NewMerchant(t)
		const n = 8
		var wg sync.WaitGroup
		errs := make([]error, n)
		for k := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				i, _, _ := apps.NewInstallation(a, m, nil, now)
				errs[k] = h.Store.CreateInstallation(ctx, i)
			}()
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, apps.ErrInstalled):
				t.Fatalf("unexpected: %v", err)
			}
		}
		if won != 1 {
			t.Fatalf("%d winners", won)
		}
	})
}
