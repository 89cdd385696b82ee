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

	t.Run("active installations: the merchant's, not revoked, newest first", func(t *testing.T) {
		h := newHarness(t)
		merchant, other := h.NewMerchant(t), h.NewMerchant(t)
		var ids []string
		for k := range 3 {
			a := newApp(t, h, false, apps.ScopePaymentsRead)
			i, _, err := apps.NewInstallation(a, merchant, nil, now.Add(time.Duration(k)*time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			if err := h.Store.CreateInstallation(ctx, i); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, i.ID())
		}
		o, _, err := apps.NewInstallation(newApp(t, h, false, apps.ScopePaymentsRead), other, nil, now)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Store.CreateInstallation(ctx, o); err != nil {
			t.Fatal(err)
		}
		if err := h.Store.RevokeInstallation(ctx, ids[1], now.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		got, err := h.Store.ActiveInstallations(ctx, merchant)
		if err != nil {
			t.Fatal(err)
		}
		var have []string
		for _, i := range got {
			have = append(have, i.ID())
		}
		if want := []string{ids[2], ids[0]}; !slices.Equal(have, want) {
			t.Fatalf("got %v, want %v", have, want)
		}
	})

	t.Run("touch records the last use at most once a minute, not after revoking", func(t *testing.T) {
		h := newHarness(t)
		i, _, err := apps.NewInstallation(newApp(t, h, false, apps.ScopePaymentsRead), h.NewMerchant(t), nil, now)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Store.CreateInstallation(ctx, i); err != nil {
			t.Fatal(err)
		}
		lastUsed := func() *time.Time {
			got, err := h.Store.GetInstallation(ctx, i.ID())
			if err != nil {
				t.Fatal(err)
			}
			return got.LastUsed()
		}
		if lastUsed() != nil {
			t.Fatal("a new installation has a last use")
		}
		for _, c := range []struct {
			at, want time.Time
		}{
			{now, now},
			{now.Add(30 * time.Second), now},
			{now.Add(61 * time.Second), now.Add(61 * time.Second)},
		} {
			if err := h.Store.TouchInstallation(ctx, i.ID(), c.at); err != nil {
				t.Fatal(err)
			}
			if got := lastUsed(); got == nil || !got.Equal(c.want) {
				t.Fatalf("touch at %v: last used %v, want %v", c.at, got, c.want)
			}
		}
		if err := h.Store.RevokeInstallation(ctx, i.ID(), now.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := h.Store.TouchInstallation(ctx, i.ID(), now.Add(2*time.Hour)); err != nil {
			t.Fatal(err)
		}
		if got := lastUsed(); got == nil || !got.Equal(now.Add(61*time.Second)) {
			t.Fatalf("touched after revoking: %v", got)
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

	t.Run("an authorization code is redeemed once; presenting it again revokes what it issued", func(t *testing.T) {
		h := newHarness(t)
		a := newApp(t, h, false, apps.ScopePaymentsRead, apps.ScopeMerchantRead)
		m := h.NewMerchant(t)
		code := func(name string) []byte {
			hash := apps.HashToken(name)
			if err := h.Store.CreateCode(ctx, apps.CodeSnapshot{Hash: hash, AppID: a.ID(), MerchantID: m, RedirectURI: "https://app.example/cb",
				Scopes: []string{apps.ScopePaymentsRead}, Challenge: "challenge", Created: now, Expires: now.Add(apps.CodeLifetime)}); err != nil {
				t.Fatal(err)
			}
			return hash
		}
		if _, err := h.Store.RedeemCode(ctx, apps.HashToken("unknown"), now, nil); !errors.Is(err, apps.ErrNotFound) {
			t.Fatalf("unknown code: %v", err)
		}
		first := code("first")
		var issued *apps.Installation
		got, err := h.Store.RedeemCode(ctx, first, now, func(c apps.CodeSnapshot, current *apps.Installation) (*apps.Installation, error) {
			if current != nil || c.AppID != a.ID() || c.MerchantID != m || c.RedirectURI != "https://app.example/cb" || c.Challenge != "challenge" ||
				!slices.Equal(c.Scopes, []string{apps.ScopePaymentsRead}) || !c.Expires.Equal(now.Add(apps.CodeLifetime)) {
				t.Fatalf("code %+v current %v", c, current)
			}
			i, _, err := apps.NewInstallation(a, c.MerchantID, c.Scopes, now)
			issued = i
			return i, err
		})
		if err != nil || got.ID() != issued.ID() {
			t.Fatalf("redeem: %v", err)
		}
		if stored, err := h.Store.GetInstallation(ctx, issued.ID()); err != nil || stored.Revoked() {
			t.Fatalf("issued installation: %v", err)
		}
		// A second authorization of the same app and merchant sees the installation.
		second := code("second")
		if _, err := h.Store.RedeemCode(ctx, second, now, func(_ apps.CodeSnapshot, current *apps.Installation) (*apps.Installation, error) {
			if current == nil || current.ID() != issued.ID() {
				t.Fatalf("current: %v", current)
			}
			return current, nil
		}); err != nil {
			t.Fatal(err)
		}
		// The first code again: refused, and the installation it issued is revoked.
		if _, err := h.Store.RedeemCode(ctx, first, now.Add(time.Minute), nil); !errors.Is(err, apps.ErrCodeUsed) {
			t.Fatalf("reused: %v", err)
		}
		if stored, _ := h.Store.GetInstallation(ctx, issued.ID()); !stored.Revoked() {
			t.Fatal("the reused code's installation is not revoked")
		}
		// A failed redemption uses the code up all the same.
		third := code("third")
		failed := errors.New("verifier mismatch")
		if _, err := h.Store.RedeemCode(ctx, third, now, func(apps.CodeSnapshot, *apps.Installation) (*apps.Installation, error) { return nil, failed }); !errors.Is(err, failed) {
			t.Fatalf("fn error: %v", err)
		}
		if _, err := h.Store.RedeemCode(ctx, third, now, nil); !errors.Is(err, apps.ErrCodeUsed) {
			t.Fatalf("after a failed redemption: %v", err)
		}
	})

	t.Run("an app is found by its client id", func(t *testing.T) {
		h := newHarness(t)
		a := newApp(t, h, false, apps.ScopePaymentsRead)
		got, err := h.Store.AppByClientID(ctx, a.ClientID())
		if err != nil || got.ID() != a.ID() {
			t.Fatalf("%v %v", got, err)
		}
		if _, err := h.Store.AppByClientID(ctx, "ca_unknown"); !errors.Is(err, apps.ErrNotFound) {
			t.Fatalf("unknown: %v", err)
		}
	})
}
