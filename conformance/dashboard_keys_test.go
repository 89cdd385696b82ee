package conformance

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/kassa-pay/kassa/conformance/harness"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
)

const (
	dashTest = dash.DashboardEnvironmentTest
	dashLive = dash.DashboardEnvironmentLive
)

// dashKeyWorks reports whether secret authenticates on the merchant API.
func dashKeyWorks(t *testing.T, secret string) bool {
	t.Helper()
	r := raw(t, http.MethodGet, "/v1/products", secret, "", nil)
	switch r.Status {
	case 200:
		return true
	case 401:
		return false
	}
	t.Fatalf("GET /v1/products with the key: %d %s", r.Status, r.Body)
	return false
}

func TestDashboardAPIKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	harness.Rule(t, "5.1", "a key created in the dashboard is shown once, works on the merchant API in its mode, shows last_used, and is refused after revoke", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		r, err := o.Client.CreateApiKeyWithResponse(ctx, dashTest, dash.ApiKeyCreate{Name: " Order service "})
		if err != nil {
			t.Fatal(err)
		}
		k := r.JSON201
		if k == nil {
			t.Fatalf("create key: %d %s", r.StatusCode(), r.Body)
		}
		if !strings.HasPrefix(k.Secret, "sk_test_") || !strings.HasPrefix(k.Id, "key_") || k.Name != "Order service" ||
			k.Mode != dashTest || k.Display != "sk_test_…"+k.Secret[len(k.Secret)-4:] || k.RevokedAt != nil || k.LastUsed != nil {
			t.Fatalf("created key %s", r.Body)
		}
		if !dashKeyWorks(t, k.Secret) {
			t.Fatal("the new key is refused by the merchant API")
		}
		list, err := o.Client.ListApiKeysWithResponse(ctx, dashTest)
		if err != nil {
			t.Fatal(err)
		}
		if list.JSON200 == nil || strings.Contains(string(list.Body), k.Secret) {
			t.Fatalf("list: %d (the secret must never be listed)", list.StatusCode())
		}
		var listed *dash.ApiKey
		for i, x := range list.JSON200.Data {
			if x.Mode != dashTest {
				t.Fatalf("a %s key in the test list", x.Mode)
			}
			if x.Id == k.Id {
				listed = &list.JSON200.Data[i]
			}
		}
		if listed == nil || listed.LastUsed == nil || *listed.LastUsed < k.Created {
			t.Fatalf("listed key %+v (last_used must be set after use)", listed)
		}
		if list.JSON200.Data[0].Id != k.Id {
			t.Fatal("the list is not newest first")
		}
		live, err := o.Client.ListApiKeysWithResponse(ctx, dashLive)
		if err != nil || live.JSON200 == nil || len(live.JSON200.Data) != 1 || live.JSON200.Data[0].Mode != dashLive {
			t.Fatalf("live list (only the default live key): %v %s", err, live.Body)
		}

		rv, err := o.Client.RevokeApiKeyWithResponse(ctx, dashTest, k.Id)
		if err != nil {
			t.Fatal(err)
		}
		if rv.JSON200 == nil || rv.JSON200.RevokedAt == nil || rv.JSON200.Id != k.Id {
			t.Fatalf("revoke: %d %s", rv.StatusCode(), rv.Body)
		}
		if dashKeyWorks(t, k.Secret) {
			t.Fatal("the revoked key still works")
		}
	})

	harness.Rule(t, "5.1", "a key created under live is an sk_live_ key listed only under live", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		r, err := o.Client.CreateApiKeyWithResponse(ctx, dashLive, dash.ApiKeyCreate{Name: "live worker"})
		if err != nil {
			t.Fatal(err)
		}
		if r.JSON201 == nil || !strings.HasPrefix(r.JSON201.Secret, "sk_live_") || r.JSON201.Mode != dashLive {
			t.Fatalf("create live key: %d %s", r.StatusCode(), r.Body)
		}
		if !dashKeyWorks(t, r.JSON201.Secret) {
			t.Fatal("the live key is refused")
		}
		test, err := o.Client.ListApiKeysWithResponse(ctx, dashTest)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range test.JSON200.Data {
			if k.Id == r.JSON201.Id {
				t.Fatal("the live key is listed under test")
			}
		}
		// Revoking it through the test environment is a 404; it keeps working.
		rv, err := o.Client.RevokeApiKeyWithResponse(ctx, dashTest, r.JSON201.Id)
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, rv, rv.HTTPResponse, rv.Body, 404, "not_found", "api_key_not_found", "id")
		if !dashKeyWorks(t, r.JSON201.Secret) {
			t.Fatal("a refused revoke revoked the key")
		}
	})

	harness.Rule(t, "ISO", "another merchant's API key cannot be revoked from the dashboard (404) and keeps working", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		other := newDashOwner(t)
		r, err := other.Client.CreateApiKeyWithResponse(ctx, dashTest, dash.ApiKeyCreate{Name: "theirs"})
		if err != nil || r.JSON201 == nil {
			t.Fatalf("create: %v %v", err, r)
		}
		rv, err := o.Client.RevokeApiKeyWithResponse(ctx, dashTest, r.JSON201.Id)
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, rv, rv.HTTPResponse, rv.Body, 404, "not_found", "api_key_not_found", "id")
		if !dashKeyWorks(t, r.JSON201.Secret) {
			t.Fatal("another merchant revoked the key")
		}
	})

	harness.Rule(t, "DASH", "creating a key validates its name and needs the CSRF token", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		r, err := o.Client.CreateApiKeyWithResponse(ctx, dashTest, dash.ApiKeyCreate{Name: strings.Repeat("k", 101)})
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, r, r.HTTPResponse, r.Body, 400, "invalid_request", "name_invalid", "name")
		r, err = o.Client.CreateApiKeyWithResponse(ctx, dashTest, dash.ApiKeyCreate{Name: "no csrf"}, csrfHeader(""))
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, r, r.HTTPResponse, r.Body, 403, "permission_error", "csrf_token_invalid", "")
		raw := dashRaw(t, http.MethodPost, "/api/v1/test/api_keys", o.sessionToken(t), `{}`, map[string]string{"X-CSRF-Token": o.CSRF})
		wantError(t, raw.Status, raw.Header, raw.Body, 400, "invalid_request", "parameter_missing", "name")
	})
}
