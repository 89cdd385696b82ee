package conformance

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/conformance/harness"
	"github.com/kassa-pay/kassa/core"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
	op "github.com/kassa-pay/kassa/openapi/gen/operatorapi"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

var (
	opMerchantID = regexp.MustCompile(`^mer_[0-9A-Za-z]{24}$`)
	opKeyID      = regexp.MustCompile(`^key_[0-9A-Za-z]{24}$`)
	// 192 bits of base62 need at least 33 characters.
	opSecret = regexp.MustCompile(`^sk_(test|live)_[0-9A-Za-z]{33,}$`)
)

// opMerchantBody is a valid create-merchant body.
func opMerchantBody() op.MerchantCreate {
	return op.MerchantCreate{Name: "Operator case " + core.RandomBase62(6), Country: "DE", Email: "ops@example.com"}
}

func TestOperator(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	harness.Rule(t, "D1", "a missing or wrong operator token is 401 invalid_operator_token", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		body := rawJSON(t, opMerchantBody())
		for name, h := range map[string]map[string]string{
			"missing":      nil,
			"wrong":        {"Authorization": "Bearer " + target.OperatorToken + "x"},
			"basic scheme": {"Authorization": "Basic " + target.OperatorToken},
			"merchant key": {"Authorization": "Bearer " + m.TestKey},
		} {
			r := raw(t, http.MethodPost, "/operator/v1/merchants", "", body, h)
			if r.Status != 401 {
				t.Fatalf("%s: %d %s", name, r.Status, r.Body)
			}
			wantError(t, r.Status, r.Header, r.Body, 401, "authentication_error", "invalid_operator_token", "")
			r = raw(t, http.MethodGet, "/operator/v1/merchants/"+m.ID, "", "", h)
			wantError(t, r.Status, r.Header, r.Body, 401, "authentication_error", "invalid_operator_token", "")
		}
		// The operator token is no merchant key.
		r := raw(t, http.MethodGet, "/v1/products", target.OperatorToken, "", nil)
		wantError(t, r.Status, r.Header, r.Body, 401, "authentication_error", "invalid_api_key", "")
	})

	harness.Rule(t, "D1", "creating a merchant returns 201 with its id and both secret keys once", func(t *testing.T) {
		t.Parallel()
		in := opMerchantBody()
		resp, err := operator(t).CreateMerchantWithResponse(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode() != 201 || resp.JSON201 == nil {
			t.Fatalf("create: %d %s", resp.StatusCode(), resp.Body)
		}
		m := resp.JSON201
		if !opMerchantID.MatchString(m.Id) {
			t.Fatalf("merchant id %q is not mer_ + 24 base62", m.Id)
		}
		if !strings.HasPrefix(m.TestKey, "sk_test_") || !opSecret.MatchString(m.TestKey) {
			t.Fatalf("test key %q", m.TestKey)
		}
		if !strings.HasPrefix(m.LiveKey, "sk_live_") || !opSecret.MatchString(m.LiveKey) {
			t.Fatalf("live key %q", m.LiveKey)
		}
		if m.Name != in.Name || m.Country != "DE" || m.Onboarded {
			t.Fatalf("echo: %s", resp.Body)
		}
		// Both keys work in their environment.
		for _, k := range []string{m.TestKey, m.LiveKey} {
			if r := raw(t, http.MethodGet, "/v1/products", k, "", nil); r.Status != 200 {
				t.Fatalf("new key refused: %d %s", r.Status, r.Body)
			}
		}
		// Retrieve shows the merchant without any secret.
		got, err := operator(t).RetrieveMerchantWithResponse(ctx, m.Id)
		if err != nil {
			t.Fatal(err)
		}
		if got.JSON200 == nil || got.JSON200.Id != m.Id || got.JSON200.Name != in.Name || got.JSON200.Onboarded {
			t.Fatalf("retrieve: %d %s", got.StatusCode(), got.Body)
		}
		if strings.Contains(string(got.Body), m.TestKey) || strings.Contains(string(got.Body), m.LiveKey) || strings.Contains(string(got.Body), "sk_") {
			t.Fatalf("retrieve shows a secret: %s", got.Body)
		}
	})

	harness.Rule(t, "D1", "an invalid merchant is 400 naming the field", func(t *testing.T) {
		t.Parallel()
		c := operator(t)
		bad := opMerchantBody()
		bad.Country = "de"
		resp, err := c.CreateMerchantWithResponse(ctx, bad)
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, resp, resp.HTTPResponse, resp.Body, 400, "invalid_request", "country_invalid", "country")
		r := raw(t, http.MethodPost, "/operator/v1/merchants", target.OperatorToken, `{"country":"DE","email":"ops@example.com"}`, nil)
		wantError(t, r.Status, r.Header, r.Body, 400, "invalid_request", "parameter_missing", "name")
		bad = opMerchantBody()
		bad.Email = "not an email"
		resp, err = c.CreateMerchantWithResponse(ctx, bad)
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, resp, resp.HTTPResponse, resp.Body, 400, "invalid_request", "email_invalid", "email")
		r = raw(t, http.MethodPost, "/operator/v1/merchants", target.OperatorToken, `{"name":"X","country":"DE","email":"ops@example.com","bogus":1}`, nil)
		wantError(t, r.Status, r.Header, r.Body, 400, "invalid_request", "parameter_unknown", "bogus")
	})

	harness.Rule(t, "D1", "an unknown merchant is 404 merchant_not_found", func(t *testing.T) {
		t.Parallel()
		c := operator(t)
		unknown := "mer_" + core.RandomBase62(24)
		resp, err := c.RetrieveMerchantWithResponse(ctx, unknown)
		if err != nil {
			t.Fatal(err)
		}
		authWantNotFound(t, resp.HTTPResponse, resp.Body, "merchant_not_found")
		ob, err := c.CompleteOnboardingWithResponse(ctx, unknown)
		if err != nil {
			t.Fatal(err)
		}
		authWantNotFound(t, ob.HTTPResponse, ob.Body, "merchant_not_found")
		lk, err := c.ListApiKeysWithResponse(ctx, unknown)
		if err != nil {
			t.Fatal(err)
		}
		authWantNotFound(t, lk.HTTPResponse, lk.Body, "merchant_not_found")
		ck, err := c.CreateApiKeyWithResponse(ctx, unknown, op.ApiKeyCreate{Name: "x", Mode: wire.EnvironmentTest})
		if err != nil {
			t.Fatal(err)
		}
		authWantNotFound(t, ck.HTTPResponse, ck.Body, "merchant_not_found")
	})

	harness.Rule(t, "D1", "completing onboarding lets live requests that move money through", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, false)
		resp, err := m.Live.CreateCheckoutSessionWithResponse(ctx, nil, sessionBody())
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, resp, resp.HTTPResponse, resp.Body, 409, "resource_conflict", "merchant_not_ready", "")
		// The test environment does not wait for onboarding.
		if tr, err := m.Test.CreateCheckoutSessionWithResponse(ctx, nil, sessionBody()); err != nil || tr.JSON200 == nil {
			t.Fatalf("test session of a merchant not onboarded: %v", err)
		}
		ob, err := operator(t).CompleteOnboardingWithResponse(ctx, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		if ob.JSON200 == nil || !ob.JSON200.Onboarded || ob.JSON200.Id != m.ID {
			t.Fatalf("complete onboarding: %d %s", ob.StatusCode(), ob.Body)
		}
		got, err := operator(t).RetrieveMerchantWithResponse(ctx, m.ID)
		if err != nil || got.JSON200 == nil || !got.JSON200.Onboarded {
			t.Fatalf("retrieve after onboarding: %v", err)
		}
		resp, err = m.Live.CreateCheckoutSessionWithResponse(ctx, nil, sessionBody())
		if err != nil {
			t.Fatal(err)
		}
		if resp.JSON200 == nil || string(resp.JSON200.Mode) != "live" {
			t.Fatalf("live session after onboarding: %d %s", resp.StatusCode(), resp.Body)
		}
		// Completing twice is harmless.
		if again, err := operator(t).CompleteOnboardingWithResponse(ctx, m.ID); err != nil || again.JSON200 == nil || !again.JSON200.Onboarded {
			t.Fatalf("second completion: %v", err)
		}
	})

	harness.Rule(t, "D1", "an API key's secret is shown once, at creation", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		c := operator(t)
		resp, err := c.CreateApiKeyWithResponse(ctx, m.ID, op.ApiKeyCreate{Name: "backend", Mode: wire.EnvironmentLive})
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode() != 201 || resp.JSON201 == nil {
			t.Fatalf("create key: %d %s", resp.StatusCode(), resp.Body)
		}
		k := resp.JSON201
		if !opKeyID.MatchString(k.Id) || !strings.HasPrefix(k.Secret, "sk_live_") || !opSecret.MatchString(k.Secret) {
			t.Fatalf("key %s secret %s", k.Id, k.Secret)
		}
		if k.Merchant != m.ID || k.Name != "backend" || k.Mode != wire.EnvironmentLive || k.RevokedAt != nil || k.LastUsed != nil {
			t.Fatalf("created key: %s", resp.Body)
		}
		if strings.Contains(k.Display, k.Secret[len("sk_live_"):len("sk_live_")+8]) || strings.Contains(k.Display, k.Secret) || !strings.HasPrefix(k.Display, "sk_live_") {
			t.Fatalf("display %q reveals the secret", k.Display)
		}
		// The key works, and live.
		if r := raw(t, http.MethodGet, "/v1/products", k.Secret, "", nil); r.Status != 200 {
			t.Fatalf("new key refused: %d %s", r.Status, r.Body)
		}
		list, err := c.ListApiKeysWithResponse(ctx, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		if list.JSON200 == nil {
			t.Fatalf("list keys: %d %s", list.StatusCode(), list.Body)
		}
		found := false
		for _, x := range list.JSON200.Data {
			if x.Merchant != m.ID {
				t.Fatalf("list holds another merchant's key: %s", list.Body)
			}
			if x.Id == k.Id {
				found = true
				if x.Display != k.Display || x.Mode != wire.EnvironmentLive {
					t.Fatalf("listed key differs: %+v", x)
				}
			}
		}
		// The merchant's two initial keys plus this one.
		if !found || len(list.JSON200.Data) != 3 {
			t.Fatalf("list: %s", list.Body)
		}
		rev, err := c.RevokeApiKeyWithResponse(ctx, k.Id)
		if err != nil {
			t.Fatal(err)
		}
		for name, body := range map[string][]byte{"list": list.Body, "revoke": rev.Body} {
			for _, secret := range []string{k.Secret, m.TestKey, m.LiveKey} {
				if strings.Contains(string(body), secret) {
					t.Fatalf("%s shows a secret: %s", name, body)
				}
			}
			if strings.Contains(string(body), `"secret"`) {
				t.Fatalf("%s carries a secret field: %s", name, body)
			}
		}
	})

	harness.Rule(t, "D1", "revoking twice keeps the first revoked_at; an unknown key is 404", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		c := operator(t)
		k := authNewKey(t, m.ID, wire.EnvironmentTest)
		first, err := c.RevokeApiKeyWithResponse(ctx, k.Id)
		if err != nil {
			t.Fatal(err)
		}
		if first.JSON200 == nil || first.JSON200.RevokedAt == nil || first.JSON200.Id != k.Id {
			t.Fatalf("revoke: %d %s", first.StatusCode(), first.Body)
		}
		time.Sleep(1100 * time.Millisecond) // revoked_at is in whole seconds
		second, err := c.RevokeApiKeyWithResponse(ctx, k.Id)
		if err != nil {
			t.Fatal(err)
		}
		if second.JSON200 == nil || second.JSON200.RevokedAt == nil || *second.JSON200.RevokedAt != *first.JSON200.RevokedAt {
			t.Fatalf("second revoke: %s, first %s", second.Body, first.Body)
		}
		list, err := c.ListApiKeysWithResponse(ctx, m.ID)
		if err != nil || list.JSON200 == nil {
			t.Fatalf("list: %v", err)
		}
		for _, x := range list.JSON200.Data {
			if x.Id == k.Id && (x.RevokedAt == nil || *x.RevokedAt != *first.JSON200.RevokedAt) {
				t.Fatalf("listed revoked_at differs: %s", list.Body)
			}
		}
		unknown, err := c.RevokeApiKeyWithResponse(ctx, "key_"+core.RandomBase62(24))
		if err != nil {
			t.Fatal(err)
		}
		authWantNotFound(t, unknown.HTTPResponse, unknown.Body, "api_key_not_found")
		bad, err := c.CreateApiKeyWithBodyWithResponse(ctx, m.ID, "application/json", strings.NewReader(`{"name":"x","mode":"staging"}`))
		if err != nil {
			t.Fatal(err)
		}
		if bad.StatusCode() != 400 {
			t.Fatalf("mode staging: %d %s", bad.StatusCode(), bad.Body)
		}
	})

	harness.Rule(t, "D1", "health and readiness answer 200 without credentials", func(t *testing.T) {
		t.Parallel()
		for _, p := range []string{"/healthz", "/readyz"} {
			r := raw(t, http.MethodGet, p, "", "", nil)
			var h struct {
				Status string `json:"status"`
			}
			if r.Status != 200 || json.Unmarshal(r.Body, &h) != nil || h.Status != "ok" {
				t.Fatalf("GET %s: %d %s", p, r.Status, r.Body)
			}
		}
	})

	harness.Rule(t, "D1", "both APIs serve their OpenAPI 3.0 document", func(t *testing.T) {
		t.Parallel()
		for p, want := range map[string]string{"/v1/openapi.json": "/v1/checkout/sessions", "/operator/v1/openapi.json": "/operator/v1/merchants"} {
			r := raw(t, http.MethodGet, p, "", "", nil)
			if r.Status != 200 {
				t.Fatalf("GET %s: %d %s", p, r.Status, r.Body)
			}
			var doc struct {
				OpenAPI string                     `json:"openapi"`
				Paths   map[string]json.RawMessage `json:"paths"`
			}
			if err := json.Unmarshal(r.Body, &doc); err != nil {
				t.Fatalf("GET %s: not JSON: %v", p, err)
			}
			if !strings.HasPrefix(doc.OpenAPI, "3.0") || doc.Paths[want] == nil {
				t.Fatalf("GET %s: openapi %q, paths lack %s", p, doc.OpenAPI, want)
			}
			if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Fatalf("GET %s: Content-Type %q", p, ct)
			}
		}
	})

	harness.Rule(t, "5.1", "the server log holds no API key secret and no client_secret", func(t *testing.T) {
		t.Parallel()
		if target.LogPath == "" {
			t.Skip("needs the log of a server the harness started")
		}
		m := newMerchant(t, true)
		k := authNewKey(t, m.ID, wire.EnvironmentTest)
		sess, err := m.Test.CreateCheckoutSessionWithResponse(ctx, &api.CreateCheckoutSessionParams{IdempotencyKey: ptr(idemKey())}, sessionBody())
		if err != nil || sess.JSON200 == nil {
			t.Fatalf("create session: %v", err)
		}
		secret := sess.JSON200.ClientSecret
		id := sess.JSON200.Id
		// Requests that carry the secrets in various places, including failing ones.
		raw(t, http.MethodGet, "/v1/checkout/sessions/"+id, m.TestKey, "", nil)
		raw(t, http.MethodGet, "/v1/checkout/sessions/"+id+"?client_secret="+secret, m.TestKey, "", nil)
		raw(t, http.MethodGet, "/v1/products/"+secret, m.LiveKey, "", nil)
		raw(t, http.MethodGet, "/v1/products", k.Secret, "", nil)
		raw(t, http.MethodGet, "/v1/products", "", "", map[string]string{"Authorization": "Basic " + m.TestKey})
		raw(t, http.MethodGet, "/v1/nope/"+m.LiveKey, "", "", nil)
		raw(t, http.MethodPost, "/v1/products", m.TestKey, `{"name":"`+secret+`","bogus":"`+k.Secret+`"}`, nil)
		time.Sleep(200 * time.Millisecond) // let the log lines reach the file
		log, err := os.ReadFile(target.LogPath)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(log), m.ID) {
			t.Fatal("the log does not mention the merchant; is it the right file?")
		}
		for name, s := range map[string]string{"test key": m.TestKey, "live key": m.LiveKey, "new key": k.Secret, "client_secret": secret, "operator token": target.OperatorToken} {
			if strings.Contains(string(log), s) {
				t.Fatalf("the server log contains the %s", name)
			}
		}
	})
}
