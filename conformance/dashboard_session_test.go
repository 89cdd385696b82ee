package conformance

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/kassa-pay/kassa/conformance/harness"
	"github.com/kassa-pay/kassa/core"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
)

func TestDashboardSession(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "DASH", "sign-in returns the user, merchant and CSRF token and sets a HttpOnly SameSite=Strict cookie", func(t *testing.T) {
		t.Parallel()
		o := newDashMerchant(t, false)
		resp, err := o.Client.SignInWithResponse(context.Background(), dash.SignIn{Email: strings.ToUpper(o.Email), Password: o.Password})
		if err != nil {
			t.Fatal(err)
		}
		s := resp.JSON200
		if s == nil {
			t.Fatalf("sign in: %d %s", resp.StatusCode(), resp.Body)
		}
		if s.Merchant.Id != o.ID || s.Merchant.Onboarded || !strings.HasPrefix(s.User.Id, "usr_") ||
			s.User.Email != o.Email || len(s.CsrfToken) < 32 || s.ExpiresAt <= 0 {
			t.Fatalf("session %+v", s)
		}
		cookies := resp.HTTPResponse.Cookies()
		if len(cookies) != 1 {
			t.Fatalf("Set-Cookie: %v", resp.HTTPResponse.Header.Values("Set-Cookie"))
		}
		c := cookies[0]
		if c.Name != "kassa_session" || len(c.Value) < 40 || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode ||
			c.Path != "/" || c.Secure || c.MaxAge <= 0 {
			t.Fatalf("cookie %q", resp.HTTPResponse.Header.Get("Set-Cookie"))
		}
		if strings.Contains(string(resp.Body), c.Value) {
			t.Fatal("the session token appears in the body")
		}
		got, err := o.Client.GetSessionWithResponse(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if got.JSON200 == nil || got.JSON200.CsrfToken != s.CsrfToken || got.JSON200.User.Id != s.User.Id {
			t.Fatalf("get session: %d %s", got.StatusCode(), got.Body)
		}
	})

	harness.Rule(t, "DASH", "a wrong password and an unknown e-mail get the same 401 credentials_invalid", func(t *testing.T) {
		t.Parallel()
		o := newDashMerchant(t, true)
		wrong, err := o.Client.SignInWithResponse(context.Background(), dash.SignIn{Email: o.Email, Password: o.Password + "x"})
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, wrong, wrong.HTTPResponse, wrong.Body, 401, "authentication_error", "credentials_invalid", "")
		unknown, err := o.Client.SignInWithResponse(context.Background(), dash.SignIn{Email: "nobody-" + strings.ToLower(core.RandomBase62(8)) + "@example.com", Password: o.Password})
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, unknown, unknown.HTTPResponse, unknown.Body, 401, "authentication_error", "credentials_invalid", "")
		if authMessage(t, wrong.Body) != authMessage(t, unknown.Body) {
			t.Fatalf("messages differ: %s vs %s", wrong.Body, unknown.Body)
		}
		if len(wrong.HTTPResponse.Cookies()) != 0 || len(unknown.HTTPResponse.Cookies()) != 0 {
			t.Fatal("a failed sign-in set a cookie")
		}
	})

	harness.Rule(t, "DASH", "a sign-in without e-mail or password is 400 parameter_missing", func(t *testing.T) {
		t.Parallel()
		r := dashRaw(t, http.MethodPost, "/api/v1/session", "", `{"email":"a@example.com"}`, nil)
		wantError(t, r.Status, r.Header, r.Body, 400, "invalid_request", "parameter_missing", "password")
	})

	harness.Rule(t, "DASH", "five failed sign-ins for an e-mail throttle it: 429 login_throttled with Retry-After, even with the right password", func(t *testing.T) {
		t.Parallel()
		o := newDashMerchant(t, true)
		for i := range 5 {
			r, err := o.Client.SignInWithResponse(context.Background(), dash.SignIn{Email: o.Email, Password: "wrong-" + strconv.Itoa(i)})
			if err != nil {
				t.Fatal(err)
			}
			wantErr(t, r, r.HTTPResponse, r.Body, 401, "authentication_error", "credentials_invalid", "")
		}
		r, err := o.Client.SignInWithResponse(context.Background(), dash.SignIn{Email: o.Email, Password: o.Password})
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, r, r.HTTPResponse, r.Body, 429, "rate_limit_error", "login_throttled", "")
		if s, err := strconv.Atoi(r.HTTPResponse.Header.Get("Retry-After")); err != nil || s < 1 || s > 15*60 {
			t.Fatalf("Retry-After %q", r.HTTPResponse.Header.Get("Retry-After"))
		}
	})

	harness.Rule(t, "DASH", "without a session cookie, or with an unknown one, requests are 401 session_required", func(t *testing.T) {
		t.Parallel()
		for _, cookie := range []string{"", "not-a-session", core.NewSecretPart()} {
			r := dashRaw(t, http.MethodGet, "/api/v1/session", cookie, "", nil)
			wantError(t, r.Status, r.Header, r.Body, 401, "authentication_error", "session_required", "")
		}
	})

	harness.Rule(t, "DASH", "an unsafe request without the CSRF token, or with a wrong one, is 403 csrf_token_invalid", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		other := newDashOwner(t)
		for _, token := range []string{"", "wrong", other.CSRF} {
			r, err := o.Client.SignOutWithResponse(context.Background(), csrfHeader(token))
			if err != nil {
				t.Fatal(err)
			}
			wantErr(t, r, r.HTTPResponse, r.Body, 403, "permission_error", "csrf_token_invalid", "")
		}
		// The session survived the refused sign-outs.
		if r, err := o.Client.GetSessionWithResponse(context.Background()); err != nil || r.JSON200 == nil {
			t.Fatalf("session gone: %v %v", err, r)
		}
	})

	harness.Rule(t, "DASH", "sign-out clears the cookie and ends the session for every copy of it", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		token := o.sessionToken(t)
		r, err := o.Client.SignOutWithResponse(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if r.StatusCode() != 204 {
			t.Fatalf("sign out: %d %s", r.StatusCode(), r.Body)
		}
		cs := r.HTTPResponse.Cookies()
		if len(cs) != 1 || cs[0].Name != "kassa_session" || cs[0].Value != "" || cs[0].MaxAge >= 0 {
			t.Fatalf("Set-Cookie %q", r.HTTPResponse.Header.Get("Set-Cookie"))
		}
		raw := dashRaw(t, http.MethodGet, "/api/v1/session", token, "", nil)
		wantError(t, raw.Status, raw.Header, raw.Body, 401, "authentication_error", "session_required", "")
	})

	harness.Rule(t, "DASH", "an unknown dashboard API route is 404 resource_missing", func(t *testing.T) {
		t.Parallel()
		r := dashRaw(t, http.MethodGet, "/api/v1/nothing-here", "", "", nil)
		wantError(t, r.Status, r.Header, r.Body, 404, "invalid_request", "resource_missing", "")
	})
}
