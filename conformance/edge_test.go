package conformance

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/kassa-pay/kassa/conformance/harness"
	"github.com/kassa-pay/kassa/openapi"
	op "github.com/kassa-pay/kassa/openapi/gen/operatorapi"
)

func init() {
	sectionTitles["EDGE"] = "the HTTP edge of every listener (paths, methods, numbers, caching)"
}

// edgeClient sends requests through the validating transport without following redirects: a
// redirect page is an answer of its own here, not a step towards one.
var edgeClient = &http.Client{
	Transport:     transportRoundTripper{},
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// transportRoundTripper defers to the suite's validating transport (set in TestMain).
type transportRoundTripper struct{}

func (transportRoundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	return transport.RoundTrip(r)
}

// edgeDo sends method base+path with headers (a JSON body when body is not "").
func edgeDo(t *testing.T, base, method, path, body string, headers map[string]string) Raw {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, base, rd)
	if err != nil {
		t.Fatal(err)
	}
	// Set the path as it is: url.Parse would keep "//" and "/./", but be explicit.
	req.URL.Path, req.URL.RawPath = path, ""
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := edgeClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return Raw{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// edgeAPI is one listener's contract and the base URL it is served at.
type edgeAPI struct {
	name string
	base string
	doc  func() (*openapi3.T, error)
}

func edgeAPIs() []edgeAPI {
	return []edgeAPI{
		{"merchant", target.BaseURL, openapi.LoadMerchant},
		{"operator", target.BaseURL, openapi.LoadOperator},
		{"checkout", target.CheckoutURL, openapi.LoadCheckout},
		{"dashboard", target.DashboardURL, openapi.LoadDashboard},
	}
}

// edgeConcrete fills a path template's parameters with plausible values.
func edgeConcrete(tmpl string) string {
	segs := strings.Split(tmpl, "/")
	for i, s := range segs {
		switch {
		case s == "{env}":
			segs[i] = "test"
		case strings.HasPrefix(s, "{"):
			segs[i] = "x_edge1"
		}
	}
	return strings.Join(segs, "/")
}

func TestEdge(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "EDGE", "every method a path does not support is 405 method_not_allowed with Allow, on every listener", func(t *testing.T) {
		t.Parallel()
		pairs := 0
		for _, a := range edgeAPIs() {
			doc, err := a.doc()
			if err != nil {
				t.Fatal(err)
			}
			for tmpl, item := range doc.Paths.Map() {
				var allowed []string
				for m := range item.Operations() {
					allowed = append(allowed, strings.ToUpper(m))
				}
				sort.Strings(allowed)
				for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
					if slices.Contains(allowed, m) {
						continue
					}
					pairs++
					path := edgeConcrete(tmpl)
					r := edgeDo(t, a.base, m, path, "", nil)
					if r.Status != http.StatusMethodNotAllowed {
						t.Errorf("%s %s %s: status %d, want 405; body %s", a.name, m, path, r.Status, r.Body)
						continue
					}
					wantError(t, r.Status, r.Header, r.Body, 405, "invalid_request", "method_not_allowed", "")
					if got, want := r.Header.Get("Allow"), strings.Join(allowed, ", "); got != want {
						t.Errorf("%s %s %s: Allow %q, want %q", a.name, m, path, got, want)
					}
				}
			}
		}
		if pairs < 40 {
			t.Fatalf("only %d unsupported path/method pairs checked", pairs)
		}
	})

	harness.Rule(t, "EDGE", "DELETE on a session or on the product list is 405, not 404 or 400", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		r := raw(t, http.MethodDelete, "/v1/checkout/sessions/cs_x", m.TestKey, "", nil)
		wantError(t, r.Status, r.Header, r.Body, 405, "invalid_request", "method_not_allowed", "")
		if r.Header.Get("Allow") != "GET" {
			t.Errorf("Allow %q, want GET", r.Header.Get("Allow"))
		}
		r = raw(t, http.MethodDelete, "/v1/products", m.TestKey, "", nil)
		wantError(t, r.Status, r.Header, r.Body, 405, "invalid_request", "method_not_allowed", "")
		if r.Header.Get("Allow") != "GET, POST" {
			t.Errorf("Allow %q, want GET, POST", r.Header.Get("Allow"))
		}
	})

	harness.Rule(t, "EDGE", "a trailing slash, // , /./ or /../ in a path is the 404 envelope, never a redirect or plain text", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		auth := map[string]string{"Authorization": "Bearer " + m.TestKey}
		cases := []struct{ base, path string }{
			{target.BaseURL, "/v1/products/"},
			{target.BaseURL, "//v1/products"},
			{target.BaseURL, "/v1//products"},
			{target.BaseURL, "/v1/./products"},
			{target.BaseURL, "/v1/x/../products"},
			{target.BaseURL, "/v1"},
			{target.BaseURL, "/operator/v1"},
			{target.BaseURL, "/healthz/"},
			{target.CheckoutURL, "/api/v1/checkout/sessions/cs_x/"},
			{target.CheckoutURL, "//api/v1/checkout/sessions/cs_x"},
			{target.CheckoutURL, "/api/v1/./openapi.json"},
			{target.CheckoutURL, "/api/v1"},
			{target.CheckoutURL, "//c/cs_x"},
			{target.DashboardURL, "/api/v1/session/"},
			{target.DashboardURL, "//api/v1/session"},
			{target.DashboardURL, "/api/v1/test/../test/products"},
			{target.DashboardURL, "/api"},
		}
		for _, c := range cases {
			r := edgeDo(t, c.base, http.MethodGet, c.path, "", auth)
			if r.Status != http.StatusNotFound || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
				t.Errorf("GET %s%s: %d %s %s, want the 404 envelope", c.base, c.path, r.Status, r.Header.Get("Content-Type"), r.Body)
				continue
			}
			wantError(t, r.Status, r.Header, r.Body, 404, "invalid_request", "resource_missing", "")
		}
	})

	harness.Rule(t, "EDGE", "a whole number written 2500.0 or 2.5e3 is the integer it is", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		for _, amount := range []string{"2500.0", "2.5e3", "2500.000"} {
			r := raw(t, http.MethodPost, "/v1/checkout/sessions", m.TestKey,
				`{"amount":`+amount+`,"currency":"eur","customer_name":"Ada Lovelace","customer_email":"ada@example.com"}`, nil)
			if r.Status != http.StatusOK {
				t.Fatalf("amount %s: %d %s", amount, r.Status, r.Body)
			}
			var s struct{ Amount int64 }
			if err := json.Unmarshal(r.Body, &s); err != nil || s.Amount != 2500 {
				t.Fatalf("amount %s: session amount %d (%v)", amount, s.Amount, err)
			}
		}
		r := raw(t, http.MethodPost, "/v1/checkout/sessions", m.TestKey,
			`{"amount":2500.5,"currency":"eur","customer_name":"Ada Lovelace","customer_email":"ada@example.com"}`, nil)
		wantError(t, r.Status, r.Header, r.Body, 400, "invalid_request", "amount_invalid", "amount")
	})

	harness.Rule(t, "EDGE", "a number out of range is refused naming the field, never with a Go message", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		r := raw(t, http.MethodPost, "/v1/checkout/sessions", m.TestKey,
			`{"amount":1e400,"currency":"eur","customer_name":"Ada Lovelace","customer_email":"ada@example.com"}`, nil)
		wantError(t, r.Status, r.Header, r.Body, 400, "invalid_request", "amount_invalid", "amount")
		edgeNoGoText(t, r.Body)
		r = raw(t, http.MethodPost, "/v1/products", m.TestKey, `{"name":"Widget","price":{"currency":"eur","unit_amount":-1e400}}`, nil)
		wantError(t, r.Status, r.Header, r.Body, 400, "invalid_request", "unit_amount_invalid", "price.unit_amount")
		edgeNoGoText(t, r.Body)
	})

	harness.Rule(t, "EDGE", "limits in messages are printed as integers", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		r := raw(t, http.MethodPost, "/v1/checkout/sessions", m.TestKey,
			`{"amount":199999999,"currency":"eur","customer_name":"Ada Lovelace","customer_email":"ada@example.com"}`, nil)
		wantError(t, r.Status, r.Header, r.Body, 400, "amount_too_large", "amount_above_maximum", "amount")
		var e envelope
		_ = json.Unmarshal(r.Body, &e)
		if !strings.Contains(e.Error.Message, "99999999") || strings.Contains(e.Error.Message, "e+") {
			t.Fatalf("message %q, want the limit 99999999 in digits", e.Error.Message)
		}
	})

	harness.Rule(t, "EDGE", "every API response carries Cache-Control: no-store", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		o := newDashOwner(t)
		cases := []Raw{
			raw(t, http.MethodGet, "/v1/products", m.TestKey, "", nil),
			raw(t, http.MethodPost, "/v1/checkout/sessions", m.TestKey,
				`{"amount":2500,"currency":"eur","customer_name":"Ada Lovelace","customer_email":"ada@example.com"}`, nil),
			raw(t, http.MethodGet, "/v1/products", "sk_test_unknown", "", nil),
			raw(t, http.MethodGet, "/operator/v1/merchants/"+m.ID, target.OperatorToken, "", nil),
			raw(t, http.MethodPost, "/operator/v1/merchants/"+m.ID+"/api_keys", target.OperatorToken, `{"name":"edge","mode":"test"}`, nil),
			dashRaw(t, http.MethodGet, "/api/v1/session", o.sessionToken(t), "", nil),
			edgeDo(t, target.CheckoutURL, http.MethodGet, "/api/v1/checkout/sessions/cs_x", "", nil),
		}
		for i, r := range cases {
			if got := r.Header.Get("Cache-Control"); got != "no-store" {
				t.Errorf("case %d (%d): Cache-Control %q, want no-store", i, r.Status, got)
			}
		}
	})

	harness.Rule(t, "EDGE", "dashboard GET /api/v1/{env}/products/{id} answers its 400 as documented", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		r := dashRaw(t, http.MethodGet, "/api/v1/staging/products/prod_x", o.sessionToken(t), "", nil)
		wantError(t, r.Status, r.Header, r.Body, 400, "invalid_request", "env_invalid", "env")
	})

	harness.Rule(t, "EDGE", "a merchant whose owner e-mail is already a dashboard user's is 409 email_in_use", func(t *testing.T) {
		t.Parallel()
		first := newDashMerchant(t, true)
		pw := "pw-edge-second-owner"
		resp, err := operator(t).CreateMerchantWithResponse(context.Background(), op.MerchantCreate{
			Name: "Second", Country: "DE", Email: strings.ToUpper(first.Email), OwnerPassword: &pw,
		})
		if err != nil {
			t.Fatal(err)
		}
		wantError(t, resp.StatusCode(), resp.HTTPResponse.Header, resp.Body, 409, "resource_conflict", "email_in_use", "email")
		// Without owner_password the e-mail is only a contact address: no user, no conflict.
		resp, err = operator(t).CreateMerchantWithResponse(context.Background(), op.MerchantCreate{
			Name: "Third", Country: "DE", Email: first.Email,
		})
		if err != nil {
			t.Fatal(err)
		}
		if resp.JSON201 == nil {
			t.Fatalf("create merchant without owner: %d %s", resp.StatusCode(), resp.Body)
		}
	})
}

// edgeNoGoText fails when an error message shows Go internals of number decoding.
func edgeNoGoText(t *testing.T, body []byte) {
	t.Helper()
	for _, s := range []string{"json.Number", "float64", "strconv", "cannot convert"} {
		if strings.Contains(string(body), s) {
			t.Fatalf("message shows %q: %s", s, body)
		}
	}
}
