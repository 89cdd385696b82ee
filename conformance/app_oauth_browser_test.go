package conformance

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"golang.org/x/oauth2"

	"github.com/kassa-pay/kassa/conformance/harness"
	op "github.com/kassa-pay/kassa/openapi/gen/operatorapi"
)

// The install flow as a merchant lives it: the app's link, sign-in, the consent page, Allow,
// and back at the app with a code the app exchanges.
func TestAppOAuthBrowser(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "D17", "OAuth install in a browser: sign-in, the consent page naming the app and its scopes, Allow, and back at the app with code and state", func(t *testing.T) {
		t.Parallel()
		o := dpNewOwner(t)
		got := make(chan url.Values, 1)
		app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case got <- r.URL.Query():
			default:
			}
			_, _ = w.Write([]byte("<!doctype html><title>Ledger Sync</title><p>Connected.</p>"))
		}))
		defer app.Close()
		redirect := app.URL + "/callback"
		a, err := operator(t).CreateAppWithResponse(context.Background(), op.AppCreate{Name: "Ledger Sync", RedirectUris: []string{redirect},
			Scopes: []op.AppScope{"payments:read", "analytics:read"}})
		if err != nil || a.JSON201 == nil {
			t.Fatalf("create app: %v %s", err, a.Body)
		}
		conf := &oauth2.Config{ClientID: a.JSON201.ClientId, ClientSecret: a.JSON201.ClientSecret, RedirectURL: redirect,
			Scopes:   []string{"payments:read", "analytics:read"},
			Endpoint: oauth2.Endpoint{AuthURL: target.DashboardURL + "/oauth/authorize", TokenURL: appBase() + "/oauth/token"}}
		verifier := oauth2.GenerateVerifier()
		ctx := harness.NewBrowser(t)
		dpDo(t, ctx, "follow the app's link signed out", chromedp.Navigate(conf.AuthCodeURL("xyz-1", oauth2.S256ChallengeOption(verifier))))
		dpWait(t, ctx, "the sign-in page", `location.pathname === "/login" && !document.getElementById("login-submit").disabled`)
		dpDo(t, ctx, "sign in", dpType("#login-email", o.Email), dpType("#login-password", o.Password), dpClick("#login-submit"))
		dpWait(t, ctx, "the consent page", `location.pathname === "/oauth/authorize" && document.querySelector("h1") && document.querySelector("h1").textContent.includes("Ledger Sync")`)
		for _, words := range []string{"See your payments", "See your sales figures"} {
			dpWait(t, ctx, "the scope in plain words: "+words, `document.body.textContent.includes(`+dpJS(words)+`)`)
		}
		harness.Page(t, ctx, "oauth-consent")
		dpDo(t, ctx, "allow", dpClick(`button[value="approve"]`))
		var q url.Values
		select {
		case q = <-got:
		case <-time.After(15 * time.Second):
			t.Fatal("the browser never came back to the app")
		}
		if q.Get("state") != "xyz-1" || !strings.HasPrefix(q.Get("code"), "ac_") {
			t.Fatalf("callback query %v", q)
		}
		tok, err := conf.Exchange(context.Background(), q.Get("code"), oauth2.VerifierOption(verifier))
		if err != nil {
			t.Fatal(err)
		}
		if r := appRaw(t, http.MethodGet, "/v1/analytics/summary", tok.AccessToken); r.Status != 200 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	})
}
