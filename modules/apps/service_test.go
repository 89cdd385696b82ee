package apps

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
)

var tokenShape = regexp.MustCompile(`^at_(live|test)_[0-9A-Za-z]{40}$`)

func newTestService(t *testing.T) (*Service, *fakeStore, *core.FixedClock) {
	t.Helper()
	f := newFakeStore()
	clock := &core.FixedClock{T: time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)}
	s, err := NewService(f, clock)
	if err != nil {
		t.Fatal(err)
	}
	return s, f, clock
}

func TestNewServiceRefusesMissingDependencies(t *testing.T) {
	if _, err := NewService(nil, core.SystemClock{}); err == nil {
		t.Fatal("nil store accepted")
	}
	if _, err := NewService(newFakeStore(), nil); err == nil {
		t.Fatal("nil clock accepted")
	}
}

func TestRegisterAppChecksItsInput(t *testing.T) {
	s, _, _ := newTestService(t)
	ctx := context.Background()
	ok := AppInput{Name: "Books", RedirectURIs: []string{"https://books.example/cb", "http://127.0.0.1:9000/cb", "http://localhost/cb"}, Scopes: []string{ScopePaymentsRead}}
	for name, c := range map[string]struct {
		mutate func(*AppInput)
		want   *core.Error
		param  string
	}{
		"empty name":              {func(in *AppInput) { in.Name = " " }, ErrNameInvalid, "name"},
		"no redirect uri":         {func(in *AppInput) { in.RedirectURIs = nil }, ErrRedirectURIsMissing, "redirect_uris"},
		"plain http elsewhere":    {func(in *AppInput) { in.RedirectURIs = []string{"http://books.example/cb"} }, ErrRedirectURIInvalid, "redirect_uris.0"},
		"fragment":                {func(in *AppInput) { in.RedirectURIs = []string{"https://books.example/cb#x"} }, ErrRedirectURIInvalid, "redirect_uris.0"},
		"no scope":                {func(in *AppInput) { in.Scopes = nil }, ErrScopesMissing, "scopes"},
		"unknown scope":           {func(in *AppInput) { in.Scopes = []string{"payments:write"} }, ErrScopeUnknown, "scopes"},
		"duplicate scope":         {func(in *AppInput) { in.Scopes = []string{ScopePaymentsRead, ScopePaymentsRead} }, ErrScopeDuplicate, "scopes"},
		"payouts:read unreviewed": {func(in *AppInput) { in.Scopes = []string{ScopePayoutsRead} }, ErrScopeRequiresReview, "scopes"},
	} {
		in := ok
		c.mutate(&in)
		_, _, err := s.RegisterApp(ctx, in)
		var de *core.Error
		if !errors.As(err, &de) || !errors.Is(err, c.want) || de.Param != c.param {
			t.Errorf("%s: got %v", name, err)
		}
	}
	a, secret, err := s.RegisterApp(ctx, ok)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(a.ID(), PrefixApp) || !strings.HasPrefix(a.ClientID(), PrefixClient) || !strings.HasPrefix(secret, PrefixClientSecret) || len(secret) < len(PrefixClientSecret)+33 {
		t.Fatalf("app %s %s secret %s", a.ID(), a.ClientID(), secret)
	}
	reviewed := ok
	reviewed.Reviewed, reviewed.Scopes = true, []string{ScopePayoutsRead, ScopeMerchantRead}
	r, _, err := s.RegisterApp(ctx, reviewed)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.Scopes(), ","); got != "merchant:read,payouts:read" {
		t.Fatalf("scopes in canonical order: %s", got)
	}
}

func TestInstallIssuesTwoTokensAndAuthenticateDecidesTheEnvironment(t *testing.T) {
	s, f, _ := newTestService(t)
	ctx := context.Background()
	a, _, err := s.RegisterApp(ctx, AppInput{Name: "Books", RedirectURIs: []string{"https://b.example/cb"}, Scopes: []string{ScopePaymentsRead, ScopeMerchantRead}})
	if err != nil {
		t.Fatal(err)
	}
	m := core.NewID(core.PrefixMerchant)
	f.addMerchant(m)
	if _, _, err := s.Install(ctx, a.ID(), m, []string{ScopeAnalyticsRead}); !errors.Is(err, ErrScopeNotRegistered) {
		t.Fatalf("unregistered scope: %v", err)
	}
	if _, _, err := s.Install(ctx, a.ID(), "mer_nobody", nil); !errors.Is(err, ErrMerchantNotFound) {
		t.Fatalf("unknown merchant: %v", err)
	}
	i, tokens, err := s.Install(ctx, a.ID(), m, []string{ScopePaymentsRead})
	if err != nil {
		t.Fatal(err)
	}
	if !IsUUID(i.ID()) || !tokenShape.MatchString(tokens.Live) || !tokenShape.MatchString(tokens.Test) ||
		!strings.HasPrefix(tokens.Live, PrefixLiveToken) || !strings.HasPrefix(tokens.Test, PrefixTestToken) {
		t.Fatalf("installation %s tokens %s %s", i.ID(), tokens.Live, tokens.Test)
	}
	if _, _, err := s.Install(ctx, a.ID(), m, nil); !errors.Is(err, ErrAlreadyInstalled) {
		t.Fatalf("second install: %v", err)
	}
	for tok, env := range map[string]core.Environment{tokens.Live: core.EnvLive, tokens.Test: core.EnvTest} {
		c, err := s.Authenticate(ctx, "Bearer "+tok)
		if err != nil || c.Scope != (core.Scope{MerchantID: m, Env: env}) || c.Installation.ID() != i.ID() {
			t.Fatalf("%s: %+v %v", env, c, err)
		}
		if err := c.Require(ScopePaymentsRead); err != nil {
			t.Fatal(err)
		}
		if err := c.Require(ScopeMerchantRead); !errors.Is(err, ErrInsufficientScope) || !strings.Contains(err.(*core.Error).Message, ScopeMerchantRead) {
			t.Fatalf("missing scope: %v", err)
		}
	}
	// A test token's secret part behind the live prefix is no live token.
	swapped := PrefixLiveToken + strings.TrimPrefix(tokens.Test, PrefixTestToken)
	for name, h := range map[string]string{
		"missing": "", "basic": "Basic " + tokens.Live, "malformed": "Bearer at_live_short", "unknown": "Bearer " + PrefixLiveToken + core.NewSecretPart(),
		"prefix swapped": "Bearer " + swapped, "merchant key": "Bearer sk_test_" + core.NewSecretPart(),
	} {
		if _, err := s.Authenticate(ctx, h); !errors.Is(err, ErrInvalidToken) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := s.Uninstall(ctx, i.ID()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authenticate(ctx, "Bearer "+tokens.Live); !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("after uninstall: %v", err)
	}
	if _, err := s.Uninstall(ctx, i.ID()); !errors.Is(err, ErrInstallationMissing) {
		t.Fatalf("second uninstall: %v", err)
	}
	if _, err := s.Uninstall(ctx, "not-a-uuid"); !errors.Is(err, ErrInstallationMissing) {
		t.Fatalf("malformed id: %v", err)
	}
}

func TestInstallRefusesPayoutsReadForAnAppReviewedNoMore(t *testing.T) {
	s, f, clock := newTestService(t)
	ctx := context.Background()
	// An app stored as reviewed may install payouts:read; one stored unreviewed may not, even
	// if the scope is in its registration (a review withdrawn).
	a := RehydrateApp(AppSnapshot{ID: core.NewID(PrefixApp), Name: "x", Scopes: []string{ScopePayoutsRead}, Created: clock.T})
	_ = f.CreateApp(ctx, a)
	m := core.NewID(core.PrefixMerchant)
	f.addMerchant(m)
	if _, _, err := s.Install(ctx, a.ID(), m, []string{ScopePayoutsRead}); !errors.Is(err, ErrScopeRequiresReview) {
		t.Fatalf("got %v", err)
	}
}
