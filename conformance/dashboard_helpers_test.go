package conformance

import (
	"context"
	"maps"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"github.com/kassa-pay/kassa/conformance/harness"
	"github.com/kassa-pay/kassa/core"
	capi "github.com/kassa-pay/kassa/openapi/gen/checkoutapi"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
	op "github.com/kassa-pay/kassa/openapi/gen/operatorapi"
)

func init() {
	sectionTitles["DASH"] = "dashboard API (session, CSRF, routes)"
}

// DashOwner is a merchant of the test's own with a dashboard owner login, signed in: Client
// carries the session cookie (in Jar) and sends the CSRF token on unsafe requests.
type DashOwner struct {
	*Merchant
	Name, Email, Password string
	Jar                   http.CookieJar
	CSRF                  string
	Client                *dash.ClientWithResponses
}

// newDashMerchant creates a merchant whose owner can sign in to the dashboard (D1
// owner_password), with an e-mail address of its own, and returns it not yet signed in.
func newDashMerchant(t *testing.T, onboarded bool) *DashOwner {
	t.Helper()
	return newDashMerchantAt(t, target, onboarded)
}

// newDashMerchantAt is newDashMerchant on another server the harness started (e.g. one on a
// database of its own); the owner's clients talk to that server.
func newDashMerchantAt(t *testing.T, srv *harness.Target, onboarded bool) *DashOwner {
	t.Helper()
	email := "owner-" + strings.ToLower(core.RandomBase62(10)) + "@example.com"
	password := "pw-" + core.NewSecretPart()
	name := "Dashboard " + core.RandomBase62(6)
	resp, err := operatorAt(t, srv).CreateMerchantWithResponse(context.Background(), op.MerchantCreate{
		Name: name, Country: "DE", Email: email, Onboarded: &onboarded,
		OwnerPassword: &password,
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.JSON201 == nil {
		t.Fatalf("create merchant: %d %s", resp.StatusCode(), resp.Body)
	}
	m := resp.JSON201
	o := &DashOwner{
		Merchant: &Merchant{ID: m.Id, TestKey: m.TestKey, LiveKey: m.LiveKey,
			Test: clientAt(t, srv.BaseURL, m.TestKey), Live: clientAt(t, srv.BaseURL, m.LiveKey)},
		Name: name, Email: email, Password: password,
	}
	o.Jar, o.Client = dashClientAt(t, srv.DashboardURL, nil, &o.CSRF)
	return o
}

// newDashOwner is newDashMerchant (onboarded) signed in.
func newDashOwner(t *testing.T) *DashOwner {
	t.Helper()
	return newDashOwnerAt(t, target)
}

// newDashOwnerAt is newDashOwner on another server the harness started.
func newDashOwnerAt(t *testing.T, srv *harness.Target) *DashOwner {
	t.Helper()
	o := newDashMerchantAt(t, srv, true)
	o.signIn(t)
	return o
}

// at returns the owner with clients bound to another server on the same database (a sibling,
// or a server started after this one died): keys, dashboard session and CSRF token live in the
// database, and the cookie jar is shared (cookies do not depend on the port).
func (o *DashOwner) at(t *testing.T, srv *harness.Target) *DashOwner {
	t.Helper()
	m := *o.Merchant
	m.Test, m.Live = clientAt(t, srv.BaseURL, m.TestKey), clientAt(t, srv.BaseURL, m.LiveKey)
	c := *o
	c.Merchant = &m
	_, c.Client = dashClientAt(t, srv.DashboardURL, o.Jar, &c.CSRF)
	return &c
}

// signIn signs the owner in and keeps the CSRF token.
func (o *DashOwner) signIn(t *testing.T) *dash.Session {
	t.Helper()
	resp, err := o.Client.SignInWithResponse(context.Background(), dash.SignIn{Email: o.Email, Password: o.Password})
	if err != nil {
		t.Fatal(err)
	}
	if resp.JSON200 == nil {
		t.Fatalf("sign in: %d %s", resp.StatusCode(), resp.Body)
	}
	o.CSRF = resp.JSON200.CsrfToken
	return resp.JSON200
}

// sessionToken is the current value of the owner's session cookie ("" when none).
func (o *DashOwner) sessionToken(t *testing.T) string {
	t.Helper()
	u, _ := url.Parse(target.DashboardURL)
	for _, c := range o.Jar.Cookies(u) {
		if c.Name == "kassa_session" {
			return c.Value
		}
	}
	return ""
}

// dashClient returns a dashboard client with a cookie jar of its own that sends *csrf as
// X-CSRF-Token on unsafe requests (when not empty).
func dashClient(t *testing.T, csrf *string) (http.CookieJar, *dash.ClientWithResponses) {
	t.Helper()
	return dashClientAt(t, target.DashboardURL, nil, csrf)
}

// dashClientAt is dashClient for another dashboard origin, with jar as its cookie jar (a new
// one when nil).
func dashClientAt(t *testing.T, base string, jar http.CookieJar, csrf *string) (http.CookieJar, *dash.ClientWithResponses) {
	t.Helper()
	if jar == nil {
		var err error
		if jar, err = cookiejar.New(nil); err != nil {
			t.Fatal(err)
		}
	}
	c, err := dash.NewClientWithResponses(base,
		dash.WithHTTPClient(&http.Client{Transport: transport, Jar: jar}),
		dash.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
			if r.Method != http.MethodGet && csrf != nil && *csrf != "" && r.Header.Get("X-CSRF-Token") == "" {
				r.Header.Set("X-CSRF-Token", *csrf)
			}
			return nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	return jar, c
}

// csrfHeader overrides the CSRF header of one request ("" removes it).
func csrfHeader(v string) dash.RequestEditorFn {
	return func(_ context.Context, r *http.Request) error {
		if v == "" {
			r.Header.Set("X-CSRF-Token", "")
			r.Header.Del("X-CSRF-Token")
			return nil
		}
		r.Header.Set("X-CSRF-Token", v)
		return nil
	}
}

// dashRaw is rawAt on the dashboard origin with the given session cookie value ("" = none)
// instead of a bearer; responses pass the validating transport.
func dashRaw(t *testing.T, method, path, session, body string, headers map[string]string) Raw {
	t.Helper()
	h := maps.Clone(headers)
	if session != "" {
		if h == nil {
			h = map[string]string{}
		}
		h["Cookie"] = (&http.Cookie{Name: "kassa_session", Value: session}).String()
	}
	return rawAt(t, target.DashboardURL, method, path, "", body, h)
}

// dashPay creates a checkout session with the merchant's test key and pays it with card
// number through the checkout browser API (authorised by the client secret), as a buyer
// would; it returns the completed session with its payment.
func dashPay(t *testing.T, m *Merchant, amount int64, currency, card string) *api.CheckoutSession {
	t.Helper()
	payNeedsCheckout(t)
	s := csCreate(t, m.Test, api.CheckoutSessionCreate{Amount: &amount, Currency: currency,
		CustomerName: "Ada Lovelace", CustomerEmail: "ada@example.com"})
	payConfirmOK(t, s, payCard(card), capi.ConfirmResultStatusSucceeded)
	done := csGet(t, m.Test, s.Id)
	if done.Payment == nil {
		t.Fatalf("session %s has no payment after confirmation (status %s)", s.Id, done.Status)
	}
	return done
}
