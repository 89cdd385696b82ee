package conformance

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/kassa-pay/kassa/conformance/harness"
	op "github.com/kassa-pay/kassa/openapi/gen/operatorapi"
)

const oauthRedirect = "http://127.0.0.1:9/callback" // never contacted: the test reads the redirect

// oauthApp registers an app and returns the x/oauth2 configuration an app developer writes.
func oauthApp(t *testing.T, scopes ...string) *oauth2.Config {
	t.Helper()
	a, err := operator(t).CreateAppWithResponse(context.Background(), op.AppCreate{Name: "Ledger Sync", RedirectUris: []string{oauthRedirect},
		Scopes: []op.AppScope{"merchant:read", "payments:read", "analytics:read"}})
	if err != nil || a.JSON201 == nil {
		t.Fatalf("create app: %v %s", err, a.Body)
	}
	return &oauth2.Config{
		ClientID: a.JSON201.ClientId, ClientSecret: a.JSON201.ClientSecret, RedirectURL: oauthRedirect, Scopes: scopes,
		Endpoint: oauth2.Endpoint{AuthURL: target.DashboardURL + "/oauth/authorize", TokenURL: appBase() + "/oauth/token"},
	}
}

// oauthBrowser is the signed-in owner's browser: its cookies, redirects not followed.
func oauthBrowser(o *DashOwner) *http.Client {
	return &http.Client{Jar: o.Jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// oauthDecide loads the consent page of authURL and answers it; it returns the consent page's
// body and the redirect's Location.
func oauthDecide(t *testing.T, o *DashOwner, authURL, decision string) (string, *url.URL) {
	t.Helper()
	b := oauthBrowser(o)
	resp, err := b.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	page := readAll(t, resp)
	if resp.StatusCode != 200 {
		t.Fatalf("consent page: %d %s", resp.StatusCode, page)
	}
	u, _ := url.Parse(authURL)
	form := u.Query()
	form.Set("csrf_token", o.CSRF)
	form.Set("decision", decision)
	resp, err = b.PostForm(target.DashboardURL+"/oauth/authorize", form)
	if err != nil {
		t.Fatal(err)
	}
	_ = readAll(t, resp)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("decision: %d", resp.StatusCode)
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || !strings.HasPrefix(loc.String(), oauthRedirect+"?") {
		t.Fatalf("redirect to %q", resp.Header.Get("Location"))
	}
	return page, loc
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return b.String()
}

// oauthGrant runs the flow to a code for o and returns it with its verifier.
func oauthGrant(t *testing.T, o *DashOwner, conf *oauth2.Config) (code, verifier string) {
	t.Helper()
	verifier = oauth2.GenerateVerifier()
	_, loc := oauthDecide(t, o, conf.AuthCodeURL("st", oauth2.S256ChallengeOption(verifier)), "approve")
	return loc.Query().Get("code"), verifier
}

func wantGrantError(t *testing.T, err error, code string) {
	t.Helper()
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.ErrorCode != code {
		t.Fatalf("got %v, want %s", err, code)
	}
}

func TestAppOAuth(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	harness.Rule(t, "D17", "OAuth install: the consent page names the app and each scope in plain words; approving redirects with code and the state; x/oauth2 exchanges the code with PKCE for both tokens", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		conf := oauthApp(t, "payments:read", "merchant:read")
		verifier := oauth2.GenerateVerifier()
		page, loc := oauthDecide(t, o, conf.AuthCodeURL("state-42", oauth2.S256ChallengeOption(verifier)), "approve")
		for _, want := range []string{"Ledger Sync", "See your payments", "See your business profile", o.Email} {
			if !strings.Contains(page, want) {
				t.Fatalf("consent page lacks %q", want)
			}
		}
		if strings.Contains(page, "See your sales figures") {
			t.Fatal("the page names a scope the app did not ask for")
		}
		if loc.Query().Get("state") != "state-42" || !strings.HasPrefix(loc.Query().Get("code"), "ac_") {
			t.Fatalf("redirect %s", loc)
		}
		tok, err := conf.Exchange(ctx, loc.Query().Get("code"), oauth2.VerifierOption(verifier))
		if err != nil {
			t.Fatal(err)
		}
		test, _ := tok.Extra("test_access_token").(string)
		inst, _ := tok.Extra("installation").(string)
		if !appLiveToken.MatchString(tok.AccessToken) || !appTestToken.MatchString(test) || !appUUID.MatchString(inst) ||
			tok.Extra("scope") != "merchant:read payments:read" || !strings.EqualFold(tok.TokenType, "bearer") {
			t.Fatalf("token %+v", tok)
		}
		if r := appRaw(t, http.MethodGet, "/v1/payments", test); r.Status != 200 {
			t.Fatalf("payments: %d %s", r.Status, r.Body)
		}
		wantAppError(t, appRaw(t, http.MethodGet, "/v1/analytics/summary", tok.AccessToken), 403, "insufficient_scope", "analytics:read")
	})

	harness.Rule(t, "D17", "OAuth install: a visitor who is not signed in is sent to sign in first and back", func(t *testing.T) {
		t.Parallel()
		conf := oauthApp(t)
		authURL := conf.AuthCodeURL("s", oauth2.S256ChallengeOption(oauth2.GenerateVerifier()))
		b := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := b.Get(authURL)
		if err != nil {
			t.Fatal(err)
		}
		_ = readAll(t, resp)
		loc, _ := url.Parse(resp.Header.Get("Location"))
		if resp.StatusCode != http.StatusSeeOther || loc.Path != "/login" || !strings.HasPrefix(loc.Query().Get("next"), "/oauth/authorize?") {
			t.Fatalf("%d %s", resp.StatusCode, resp.Header.Get("Location"))
		}
	})

	harness.Rule(t, "D17", "OAuth install: denied consent redirects with error=access_denied and the state", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		conf := oauthApp(t)
		_, loc := oauthDecide(t, o, conf.AuthCodeURL("keep-me", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())), "deny")
		if loc.Query().Get("error") != "access_denied" || loc.Query().Get("state") != "keep-me" || loc.Query().Get("code") != "" {
			t.Fatalf("redirect %s", loc)
		}
	})

	harness.Rule(t, "D17", "OAuth install: an unknown client or an unregistered redirect URI is an error page, never a redirect; a missing PKCE challenge or an unknown scope redirects with the error", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		conf := oauthApp(t)
		b := oauthBrowser(o)
		ch := oauth2.S256ChallengeOption(oauth2.GenerateVerifier())
		other := *conf
		other.RedirectURL = "https://evil.example/cb"
		unknown := *conf
		unknown.ClientID = "ca_unknown"
		for _, u := range []string{other.AuthCodeURL("s", ch), unknown.AuthCodeURL("s", ch)} {
			resp, err := b.Get(u)
			if err != nil {
				t.Fatal(err)
			}
			_ = readAll(t, resp)
			if resp.StatusCode != 400 || resp.Header.Get("Location") != "" {
				t.Fatalf("%s: %d %s", u, resp.StatusCode, resp.Header.Get("Location"))
			}
		}
		wide := *conf
		wide.Scopes = []string{"payouts:read"}
		for u, want := range map[string]string{conf.AuthCodeURL("s"): "invalid_request", wide.AuthCodeURL("s", ch): "invalid_scope"} {
			resp, err := b.Get(u)
			if err != nil {
				t.Fatal(err)
			}
			_ = readAll(t, resp)
			loc, _ := url.Parse(resp.Header.Get("Location"))
			if resp.StatusCode != http.StatusSeeOther || loc.Query().Get("error") != want || loc.Query().Get("state") != "s" {
				t.Fatalf("%s: %d %s", u, resp.StatusCode, loc)
			}
		}
	})

	harness.Rule(t, "D17", "OAuth token: a PKCE mismatch, another redirect URI and a wrong client secret are refused with RFC 6749 errors", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		conf := oauthApp(t)
		code, _ := oauthGrant(t, o, conf)
		_, err := conf.Exchange(ctx, code, oauth2.VerifierOption(oauth2.GenerateVerifier()))
		wantGrantError(t, err, "invalid_grant")
		code, verifier := oauthGrant(t, o, conf)
		moved := *conf
		moved.RedirectURL = "http://127.0.0.1:9/elsewhere"
		_, err = moved.Exchange(ctx, code, oauth2.VerifierOption(verifier))
		wantGrantError(t, err, "invalid_grant")
		code, verifier = oauthGrant(t, o, conf)
		wrong := *conf
		wrong.ClientSecret = "cs_app_wrong"
		_, err = wrong.Exchange(ctx, code, oauth2.VerifierOption(verifier))
		wantGrantError(t, err, "invalid_client")
	})

	harness.Rule(t, "D17", "OAuth token: a code is single use; presenting it again is invalid_grant and revokes the tokens it issued", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		conf := oauthApp(t)
		code, verifier := oauthGrant(t, o, conf)
		tok, err := conf.Exchange(ctx, code, oauth2.VerifierOption(verifier))
		if err != nil {
			t.Fatal(err)
		}
		if r := appRaw(t, http.MethodGet, "/v1/merchant", tok.AccessToken); r.Status != 200 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		_, err = conf.Exchange(ctx, code, oauth2.VerifierOption(verifier))
		wantGrantError(t, err, "invalid_grant")
		wantAppError(t, appRaw(t, http.MethodGet, "/v1/merchant", tok.AccessToken), 401, "invalid_token", "")
	})

	harness.Rule(t, "D17", "OAuth install: re-authorising replaces the installation's tokens", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		conf := oauthApp(t)
		code, verifier := oauthGrant(t, o, conf)
		first, err := conf.Exchange(ctx, code, oauth2.VerifierOption(verifier))
		if err != nil {
			t.Fatal(err)
		}
		code, verifier = oauthGrant(t, o, conf)
		second, err := conf.Exchange(ctx, code, oauth2.VerifierOption(verifier))
		if err != nil {
			t.Fatal(err)
		}
		if first.Extra("installation") != second.Extra("installation") {
			t.Fatalf("a second installation: %v %v", first.Extra("installation"), second.Extra("installation"))
		}
		wantAppError(t, appRaw(t, http.MethodGet, "/v1/merchant", first.AccessToken), 401, "invalid_token", "")
		if r := appRaw(t, http.MethodGet, "/v1/merchant", second.AccessToken); r.Status != 200 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	})
}
