package conformance

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/kassa-pay/kassa/conformance/harness"
	"github.com/kassa-pay/kassa/openapi"
	"github.com/kassa-pay/kassa/openapi/gen/appapi"
	op "github.com/kassa-pay/kassa/openapi/gen/operatorapi"
)

func init() {
	sectionTitles["D11"] = "App API"
	sectionTitles["D17"] = "apps, installations and App API tokens"
}

var (
	appTransportOnce sync.Once
	appTransportVal  *harness.ValidatingTransport
)

// appTransport validates every App API response against openapi/app.yaml; the App API is
// served under /app on the API listener, its paths relative to that base.
func appTransport(t *testing.T) *harness.ValidatingTransport {
	t.Helper()
	appTransportOnce.Do(func() {
		doc, err := openapi.LoadApp()
		if err != nil {
			panic(err)
		}
		vt, err := harness.NewValidatingTransport(doc)
		if err != nil {
			panic(err)
		}
		vt.Prefix = "/app"
		appTransportVal = vt
	})
	return appTransportVal
}

func appBase() string { return target.BaseURL + "/app" }

// appClient is the typed App API client (the app developer's SDK) with token ("" sends none).
func appClient(t *testing.T, token string) *appapi.ClientWithResponses {
	t.Helper()
	c, err := appapi.NewClientWithResponses(appBase(), appapi.WithHTTPClient(appTransport(t).Client()),
		appapi.WithRequestEditorFn(appapi.RequestEditorFn(bearer(token))))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// appRaw sends method path (relative to the app base URL) with the token ("" for none) and an
// optional Authorization header value that replaces it.
func appRaw(t *testing.T, method, path, token string, authorization ...string) Raw {
	t.Helper()
	return appRawAt(t, appBase(), method, path, token, authorization...)
}

// appRawAt is appRaw against another server's app base URL (a sibling).
func appRawAt(t *testing.T, base, method, path, token string, authorization ...string) Raw {
	t.Helper()
	req, err := http.NewRequest(method, base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if len(authorization) > 0 {
		req.Header.Set("Authorization", authorization[0])
	}
	resp, err := appTransport(t).Client().Do(req)
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

// wantAppError checks the App envelope {error: {type, message}} (and nothing else in it).
func wantAppError(t *testing.T, r Raw, status int, typ, messageContains string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
	var env map[string]map[string]any
	if err := json.Unmarshal(r.Body, &env); err != nil {
		t.Fatalf("body: %v: %s", err, r.Body)
	}
	e := env["error"]
	if e["type"] != typ || len(e) != 2 {
		t.Fatalf("error %v, want type %s and only type and message", e, typ)
	}
	if msg, _ := e["message"].(string); !strings.Contains(msg, messageContains) {
		t.Fatalf("message %q does not contain %q", msg, messageContains)
	}
}

// appAllScopes are the scopes any app may register (payouts:read needs a review).
var appAllScopes = []op.AppScope{"merchant:read", "payments:read", "refunds:read", "disputes:read", "products:read",
	"invoices:read", "subscriptions:read", "analytics:read"}

// appInstall registers an app with every unrestricted scope and installs it on m with scopes
// (none: all of them) through the operator API.
func appInstall(t *testing.T, m *Merchant, scopes ...op.AppScope) *op.InstallationCreated {
	t.Helper()
	ctx := context.Background()
	a, err := operator(t).CreateAppWithResponse(ctx, op.AppCreate{Name: "Conformance app", RedirectUris: []string{"https://app.example/cb"}, Scopes: appAllScopes})
	if err != nil {
		t.Fatal(err)
	}
	if a.JSON201 == nil {
		t.Fatalf("create app: %d %s", a.StatusCode(), a.Body)
	}
	body := op.InstallationCreate{MerchantId: m.ID}
	if len(scopes) > 0 {
		body.Scopes = &scopes
	}
	i, err := operator(t).CreateInstallationWithResponse(ctx, a.JSON201.Id, body)
	if err != nil {
		t.Fatal(err)
	}
	if i.JSON201 == nil {
		t.Fatalf("install: %d %s", i.StatusCode(), i.Body)
	}
	return i.JSON201
}
