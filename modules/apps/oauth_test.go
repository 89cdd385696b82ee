package apps

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
)

func pkce() (verifier, challenge string) {
	verifier = strings.Repeat("v", 20) + core.RandomBase62(30)
	h := sha256.Sum256([]byte(verifier))
	return verifier, base64.RawURLEncoding.EncodeToString(h[:])
}

func oauthSetup(t *testing.T) (*Service, *fakeStore, *core.FixedClock, *App, string, string) {
	t.Helper()
	s, f, clock := newTestService(t)
	a, secret, err := s.RegisterApp(context.Background(), AppInput{Name: "Ledger", RedirectURIs: []string{"https://l.example/cb"}, Scopes: []string{ScopePaymentsRead, ScopeMerchantRead}})
	if err != nil {
		t.Fatal(err)
	}
	m := core.NewID(core.PrefixMerchant)
	f.addMerchant(m)
	return s, f, clock, a, secret, m
}

func wantOAuth(t *testing.T, err error, code string, redirect bool) {
	t.Helper()
	var oe *OAuthError
	if !errors.As(err, &oe) || oe.Code != code || oe.Redirect != redirect {
		t.Fatalf("got %v, want %s (redirect %v)", err, code, redirect)
	}
}

func TestCheckAuthorizationRules(t *testing.T) {
	s, _, _, a, _, _ := oauthSetup(t)
	ctx := context.Background()
	_, ch := pkce()
	ok := AuthorizationRequest{ResponseType: "code", ClientID: a.ClientID(), RedirectURI: "https://l.example/cb", Scope: "payments:read", State: "s", CodeChallenge: ch, CodeChallengeMethod: "S256"}
	c, err := s.CheckAuthorization(ctx, ok)
	if err != nil || len(c.Scopes) != 1 || c.Scopes[0] != ScopePaymentsRead {
		t.Fatalf("%v %+v", err, c)
	}
	all := ok
	all.Scope = ""
	if c, err := s.CheckAuthorization(ctx, all); err != nil || len(c.Scopes) != 2 {
		t.Fatalf("no scope asks for every registered scope: %v", err)
	}
	for name, tc := range map[string]struct {
		mutate   func(*AuthorizationRequest)
		code     string
		redirect bool
	}{
		"unknown client":         {func(r *AuthorizationRequest) { r.ClientID = "ca_x" }, "invalid_client", false},
		"unregistered redirect":  {func(r *AuthorizationRequest) { r.RedirectURI = "https://l.example/other" }, "invalid_request", false},
		"missing redirect":       {func(r *AuthorizationRequest) { r.RedirectURI = "" }, "invalid_request", false},
		"token response type":    {func(r *AuthorizationRequest) { r.ResponseType = "token" }, "unsupported_response_type", true},
		"no challenge":           {func(r *AuthorizationRequest) { r.CodeChallenge = "" }, "invalid_request", true},
		"plain method":           {func(r *AuthorizationRequest) { r.CodeChallengeMethod = "plain" }, "invalid_request", true},
		"unregistered scope":     {func(r *AuthorizationRequest) { r.Scope = "analytics:read" }, "invalid_scope", true},
		"unknown scope":          {func(r *AuthorizationRequest) { r.Scope = "payments:write" }, "invalid_scope", true},
		"restricted, unreviewed": {func(r *AuthorizationRequest) { r.Scope = "payouts:read" }, "invalid_scope", true},
	} {
		r := ok
		tc.mutate(&r)
		_, err := s.CheckAuthorization(ctx, r)
		t.Run(name, func(t *testing.T) { wantOAuth(t, err, tc.code, tc.redirect) })
	}
}

func TestExchangeRules(t *testing.T) {
	s, _, clock, a, secret, m := oauthSetup(t)
	ctx := context.Background()
	grant := func() (code, verifier string) {
		t.Helper()
		v, ch := pkce()
		c, err := s.CheckAuthorization(ctx, AuthorizationRequest{ResponseType: "code", ClientID: a.ClientID(), RedirectURI: "https://l.example/cb", CodeChallenge: ch, CodeChallengeMethod: "S256"})
		if err != nil {
			t.Fatal(err)
		}
		code, err = s.Approve(ctx, c, m)
		if err != nil {
			t.Fatal(err)
		}
		return code, v
	}
	req := func(code, verifier string) TokenRequest {
		return TokenRequest{GrantType: "authorization_code", Code: code, RedirectURI: "https://l.example/cb", ClientID: a.ClientID(), ClientSecret: secret, CodeVerifier: verifier}
	}

	t.Run("a code expires after ten minutes", func(t *testing.T) {
		code, v := grant()
		start := clock.T
		defer func() { clock.T = start }()
		clock.T = start.Add(CodeLifetime)
		_, _, err := s.Exchange(ctx, req(code, v))
		wantOAuth(t, err, "invalid_grant", true)
		if !strings.Contains(err.Error(), "expired") {
			t.Fatalf("message: %v", err)
		}
	})
	t.Run("a code is good just before it expires", func(t *testing.T) {
		code, v := grant()
		start := clock.T
		defer func() { clock.T = start }()
		clock.T = start.Add(CodeLifetime - time.Second)
		if _, _, err := s.Exchange(ctx, req(code, v)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("grant type, missing parameters, client authentication", func(t *testing.T) {
		code, v := grant()
		r := req(code, v)
		r.GrantType = "client_credentials"
		_, _, err := s.Exchange(ctx, r)
		wantOAuth(t, err, "unsupported_grant_type", true)
		r = req(code, "")
		_, _, err = s.Exchange(ctx, r)
		wantOAuth(t, err, "invalid_request", true)
		r = req(code, v)
		r.ClientSecret = ""
		_, _, err = s.Exchange(ctx, r)
		wantOAuth(t, err, "invalid_client", false)
		r = req("ac_unknown", v)
		_, _, err = s.Exchange(ctx, r)
		wantOAuth(t, err, "invalid_grant", true)
	})
	t.Run("a failed attempt uses the code up", func(t *testing.T) {
		code, v := grant()
		_, _, err := s.Exchange(ctx, req(code, v+"x"))
		wantOAuth(t, err, "invalid_grant", true)
		_, _, err = s.Exchange(ctx, req(code, v))
		wantOAuth(t, err, "invalid_grant", true)
	})
}
