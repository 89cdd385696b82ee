package conformance

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kassa-pay/kassa/conformance/harness"
	"github.com/kassa-pay/kassa/core"
)

// The served specs name the server they came from, and API answers carry
// X-Content-Type-Options: nosniff.
func TestServedSpecsAndHeaders(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "EDGE", "each served spec's servers is the URL its listener was started with", func(t *testing.T) {
		t.Parallel()
		for _, c := range []struct{ base, path string }{
			{target.BaseURL, "/v1/openapi.json"},
			{target.BaseURL, "/operator/v1/openapi.json"},
			{target.CheckoutURL, "/api/v1/openapi.json"},
			{target.DashboardURL, "/api/v1/openapi.json"},
		} {
			r := rawAt(t, c.base, "GET", c.path, "", "", nil)
			var doc struct {
				Servers []struct {
					URL string `json:"url"`
				} `json:"servers"`
			}
			if r.Status != 200 || json.Unmarshal(r.Body, &doc) != nil {
				t.Fatalf("GET %s%s: %d", c.base, c.path, r.Status)
			}
			if len(doc.Servers) != 1 || doc.Servers[0].URL != c.base {
				t.Errorf("GET %s%s: servers %+v, want %s", c.base, c.path, doc.Servers, c.base)
			}
		}
	})
	harness.Rule(t, "EDGE", "merchant, operator and dashboard answers carry X-Content-Type-Options: nosniff", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		for name, r := range map[string]Raw{
			"merchant 200":   raw(t, "GET", "/v1/checkout/sessions", m.TestKey, "", nil),
			"merchant 401":   raw(t, "GET", "/v1/checkout/sessions", "sk_test_wrong", "", nil),
			"merchant 404":   raw(t, "GET", "/v1/nothing-here", m.TestKey, "", nil),
			"merchant spec":  raw(t, "GET", "/v1/openapi.json", "", "", nil),
			"operator 401":   raw(t, "POST", "/operator/v1/merchants", "", `{}`, nil),
			"operator spec":  raw(t, "GET", "/operator/v1/openapi.json", "", "", nil),
			"health":         raw(t, "GET", "/healthz", "", "", nil),
			"unknown path":   raw(t, "GET", "/nothing", "", "", nil),
			"dashboard spec": rawAt(t, target.DashboardURL, "GET", "/api/v1/openapi.json", "", "", nil),
		} {
			if got := r.Header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("%s (%d): X-Content-Type-Options %q", name, r.Status, got)
			}
		}
	})
}

// Numbers beyond what a field can hold (2^63) get the field's documented error naming it,
// and a body-less dashboard POST refuses a body that is not JSON with the 415 its spec lists.
func TestBoundsAndBodiesAsDocumented(t *testing.T) {
	t.Parallel()
	const huge = "9223372036854775808" // 2^63
	harness.Rule(t, "EDGE", "card.exp_month, card.exp_year and the clock's to of 2^63 answer 400 naming the field", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		m := newMerchant(t, true)
		s := paySession(t, m)
		for field, body := range map[string]string{
			"card.exp_month": `{"payment_method": "card", "card": {"number": "4242424242424242", "exp_month": ` + huge + `, "exp_year": 2030, "cvc": "123", "name": "Ada"}}`,
			"card.exp_year":  `{"payment_method": "card", "card": {"number": "4242424242424242", "exp_month": 12, "exp_year": ` + huge + `, "cvc": "123", "name": "Ada"}}`,
		} {
			r := rawAt(t, target.CheckoutURL, "POST", "/api/v1/checkout/sessions/"+s.Id+"/confirm", s.ClientSecret, body, nil)
			wantError(t, r.Status, r.Header, r.Body, 400, "invalid_request", field[len("card."):]+"_invalid", field)
		}
		for _, to := range []string{huge, "-" + huge, "253402300800"} {
			r := clockPost(t, m.TestKey, `{"to": `+to+`}`)
			wantError(t, r.Status, r.Header, r.Body, 400, "invalid_request", "to_invalid", "to")
		}
	})
	harness.Rule(t, "DASH", "a body-less POST with a body that is not JSON answers 415, one over 1 MiB 413 (both documented)", func(t *testing.T) {
		t.Parallel()
		o := newDashMerchant(t, true)
		o.signIn(t)
		session := o.sessionToken(t)
		path := "/api/v1/test/products/prod_" + core.RandomBase62(24) + "/archive"
		r := dashRaw(t, "POST", path, session, "not json", map[string]string{"X-CSRF-Token": o.CSRF, "Content-Type": "text/plain"})
		wantError(t, r.Status, r.Header, r.Body, 415, "invalid_request", "content_type_invalid", "")
		big := `{"x": "` + strings.Repeat("a", 1<<20) + `"}`
		r = dashRaw(t, "POST", path, session, big, map[string]string{"X-CSRF-Token": o.CSRF})
		wantError(t, r.Status, r.Header, r.Body, 413, "invalid_request", "body_too_large", "")
		// An empty body, or JSON it ignores, reaches the operation.
		r = dashRaw(t, "POST", path, session, `{}`, map[string]string{"X-CSRF-Token": o.CSRF})
		wantError(t, r.Status, r.Header, r.Body, 404, "not_found", "product_not_found", "id")
	})
}
