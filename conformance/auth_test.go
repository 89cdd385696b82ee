package conformance

import (
	"context"
	"database/sql"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	_ "github.com/lib/pq"

	"github.com/kassa-pay/kassa/conformance/harness"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
	op "github.com/kassa-pay/kassa/openapi/gen/operatorapi"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

// authMessage returns error.message of an error body.
func authMessage(t *testing.T, body []byte) string {
	t.Helper()
	var e envelope
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("not an error envelope: %s", body)
	}
	return e.Error.Message
}

// authNewKey creates an API key of mode for the merchant through the operator API.
func authNewKey(t *testing.T, merchantID string, mode op.Environment) *op.ApiKeyCreated {
	t.Helper()
	resp, err := operator(t).CreateApiKeyWithResponse(context.Background(), merchantID, op.ApiKeyCreate{Name: "conformance " + string(mode), Mode: mode})
	if err != nil {
		t.Fatal(err)
	}
	if resp.JSON201 == nil {
		t.Fatalf("create key: %d %s", resp.StatusCode(), resp.Body)
	}
	return resp.JSON201
}

// authCreateProduct creates a product with c and returns its id.
func authCreateProduct(t *testing.T, c *api.ClientWithResponses) string {
	t.Helper()
	resp, err := c.CreateProductWithResponse(context.Background(), nil, api.ProductCreate{Name: "Auth widget"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.JSON200 == nil {
		t.Fatalf("create product: %d %s", resp.StatusCode(), resp.Body)
	}
	return resp.JSON200.Id
}

func TestAuth(t *testing.T) {
	t.Parallel()
	const products = "/v1/products"

	harness.Rule(t, "5.1", "a missing Authorization header is 401 invalid_api_key", func(t *testing.T) {
		t.Parallel()
		r := raw(t, http.MethodGet, products, "", "", nil)
		wantError(t, r.Status, r.Header, r.Body, 401, "authentication_error", "invalid_api_key", "")
	})

	harness.Rule(t, "5.1", "a non-Bearer scheme is 401 invalid_api_key", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		r := raw(t, http.MethodGet, products, "", "", map[string]string{"Authorization": "Basic " + m.TestKey})
		wantError(t, r.Status, r.Header, r.Body, 401, "authentication_error", "invalid_api_key", "")
	})

	harness.Rule(t, "5.1", "a malformed key is 401 invalid_api_key", func(t *testing.T) {
		t.Parallel()
		for _, k := range []string{"sk_test_abc", "pk_test_abcdefghijklmnopqrstuvwxyz0123456789AB", "sk_test_" + strings.Repeat("!", 40)} {
			r := raw(t, http.MethodGet, products, k, "", nil)
			wantError(t, r.Status, r.Header, r.Body, 401, "authentication_error", "invalid_api_key", "")
		}
	})

	harness.Rule(t, "5.1", "an unknown well-formed key is 401 invalid_api_key", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		// Same shape as a real key, different last character.
		k := m.TestKey[:len(m.TestKey)-1] + flipChar(m.TestKey[len(m.TestKey)-1])
		r := raw(t, http.MethodGet, products, k, "", nil)
		wantError(t, r.Status, r.Header, r.Body, 401, "authentication_error", "invalid_api_key", "")
		if strings.Contains(string(r.Body), m.ID) {
			t.Fatalf("the message names the merchant whose key is similar: %s", r.Body)
		}
	})

	harness.Rule(t, "5.1", "a revoked key fails on its very next request and shows revoked_at", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		k := authNewKey(t, m.ID, wire.EnvironmentTest)
		c := client(t, k.Secret)
		if resp, err := c.ListProductsWithResponse(context.Background(), nil); err != nil || resp.JSON200 == nil {
			t.Fatalf("fresh key refused: %v %v", err, resp)
		}
		rev, err := operator(t).RevokeApiKeyWithResponse(context.Background(), k.Id)
		if err != nil {
			t.Fatal(err)
		}
		if rev.JSON200 == nil || rev.JSON200.RevokedAt == nil {
			t.Fatalf("revoke: %d %s", rev.StatusCode(), rev.Body)
		}
		resp, err := c.ListProductsWithResponse(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, resp, resp.HTTPResponse, resp.Body, 401, "authentication_error", "invalid_api_key", "")
		// The merchant's other keys keep working.
		if resp, err := m.Test.ListProductsWithResponse(context.Background(), nil); err != nil || resp.JSON200 == nil {
			t.Fatalf("other key refused after revoking one: %v", err)
		}
	})

	harness.Rule(t, "5.1", "a key whose prefix disagrees with its stored mode is 401 invalid_api_key", func(t *testing.T) {
		t.Parallel()
		if target.DatabaseURL == "" {
			t.Skip("needs the database of a server the harness started")
		}
		m := newMerchant(t, true)
		k := authNewKey(t, m.ID, wire.EnvironmentTest)
		db, err := sql.Open("postgres", target.DatabaseURL)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec(`UPDATE api_keys SET environment = 'live' WHERE id = $1`, k.Id); err != nil {
			t.Fatal(err)
		}
		r := raw(t, http.MethodGet, products, k.Secret, "", nil)
		wantError(t, r.Status, r.Header, r.Body, 401, "authentication_error", "invalid_api_key", "")
	})

	harness.Rule(t, "5.1", "authentication failures name their case and never another merchant", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		other := newMerchant(t, true)
		revoked := authNewKey(t, m.ID, wire.EnvironmentTest)
		if rev, err := operator(t).RevokeApiKeyWithResponse(context.Background(), revoked.Id); err != nil || rev.JSON200 == nil {
			t.Fatalf("revoke: %v", err)
		}
		cases := map[string]map[string]string{
			"missing":   {"Authorization": ""},
			"basic":     {"Authorization": "Basic " + m.TestKey},
			"malformed": {"Authorization": "Bearer sk_test_abc"},
			"unknown":   {"Authorization": "Bearer " + m.TestKey[:len(m.TestKey)-1] + flipChar(m.TestKey[len(m.TestKey)-1])},
			"revoked":   {"Authorization": "Bearer " + revoked.Secret},
		}
		seen := map[string]string{}
		for name, h := range cases {
			r := raw(t, http.MethodGet, products, "", "", h)
			wantError(t, r.Status, r.Header, r.Body, 401, "authentication_error", "invalid_api_key", "")
			msg := authMessage(t, r.Body)
			if prev, dup := seen[msg]; dup {
				t.Fatalf("cases %s and %s share the message %q", prev, name, msg)
			}
			seen[msg] = name
			for _, id := range []string{m.ID, other.ID, revoked.Id} {
				if strings.Contains(string(r.Body), id) {
					t.Fatalf("%s: the error names %s: %s", name, id, r.Body)
				}
			}
			if strings.Contains(string(r.Body), m.TestKey) || strings.Contains(string(r.Body), revoked.Secret) {
				t.Fatalf("%s: the error echoes a secret: %s", name, r.Body)
			}
		}
	})

	harness.Rule(t, "5.1", "the key's mode selects the environment", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		ctx := context.Background()
		testProd := authCreateProduct(t, m.Test)
		liveProd := authCreateProduct(t, m.Live)
		for _, c := range []struct {
			c  *api.ClientWithResponses
			id string
		}{{m.Live, testProd}, {m.Test, liveProd}} {
			resp, err := c.c.RetrieveProductWithResponse(ctx, c.id)
			if err != nil {
				t.Fatal(err)
			}
			authWantNotFound(t, resp.HTTPResponse, resp.Body, "product_not_found")
		}
		for _, c := range []struct {
			c  *api.ClientWithResponses
			id string
		}{{m.Test, testProd}, {m.Live, liveProd}} {
			resp, err := c.c.RetrieveProductWithResponse(ctx, c.id)
			if err != nil || resp.JSON200 == nil {
				t.Fatalf("own environment cannot read its product: %v %v", err, resp)
			}
		}
	})

	harness.Rule(t, "ISO", "another merchant's key gets 404 for a merchant's objects", func(t *testing.T) {
		t.Parallel()
		a, b := newMerchant(t, true), newMerchant(t, true)
		ctx := context.Background()
		prod := authCreateProduct(t, a.Test)
		sess, err := a.Test.CreateCheckoutSessionWithResponse(ctx, nil, sessionBody())
		if err != nil || sess.JSON200 == nil {
			t.Fatalf("create session: %v", err)
		}
		pr, err := b.Test.RetrieveProductWithResponse(ctx, prod)
		if err != nil {
			t.Fatal(err)
		}
		authWantNotFound(t, pr.HTTPResponse, pr.Body, "product_not_found")
		sr, err := b.Test.RetrieveCheckoutSessionWithResponse(ctx, sess.JSON200.Id)
		if err != nil {
			t.Fatal(err)
		}
		authWantNotFound(t, sr.HTTPResponse, sr.Body, "session_not_found")
		for _, body := range [][]byte{pr.Body, sr.Body} {
			if strings.Contains(string(body), a.ID) {
				t.Fatalf("the 404 names the owning merchant: %s", body)
			}
		}
		// Writes are refused alike.
		ex, err := b.Test.ExpireCheckoutSessionWithResponse(ctx, sess.JSON200.Id, nil)
		if err != nil {
			t.Fatal(err)
		}
		authWantNotFound(t, ex.HTTPResponse, ex.Body, "session_not_found")
	})
}

// flipChar returns a base62 character different from c.
func flipChar(c byte) string {
	if c == 'a' {
		return "b"
	}
	return "a"
}

// authWantNotFound asserts a 404 not_found with code. The path id is not a body field, and the
// modules disagree on whether param names it ("id") or is null, so either is accepted here.
func authWantNotFound(t *testing.T, resp *http.Response, body []byte, code string) {
	t.Helper()
	var e envelope
	_ = json.Unmarshal(body, &e)
	param := ""
	if e.Error.Param != nil {
		param = *e.Error.Param
	}
	if param != "id" {
		param = ""
	}
	wantError(t, resp.StatusCode, resp.Header, body, 404, "not_found", code, param)
}
