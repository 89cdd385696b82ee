package dashboardweb

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/kassa-pay/kassa/openapi"
)

func get(t *testing.T, h http.Handler, method, path string, header map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestRoutes(t *testing.T) {
	t.Parallel()
	h := New()
	cases := []struct {
		path     string
		status   int
		contains string
	}{
		{"/login", 200, `src="/assets/login.js"`},
		{"/test/overview", 200, `src="/assets/app.js"`},
		{"/live/payments", 200, `src="/assets/app.js"`},
		{"/test/payments/py_a1B2c3D4e5F6g7H8i9J0k1L2", 200, `src="/assets/app.js"`},
		{"/live/webhooks/we_abc", 200, `src="/assets/app.js"`},
		{"/test/catalog/prod_abc", 200, `src="/assets/app.js"`},
		{"/test/mailbox", 200, `src="/assets/app.js"`},
		{"/test/mailbox/msg_abc", 200, `src="/assets/app.js"`},
		{"/live/mailbox", 404, "Page not found"},
		{"/prod/overview", 404, "Page not found"},
		{"/test/nope", 404, "Page not found"},
		{"/test/overview/py_abc", 404, "Page not found"},    // overview has no detail pages
		{"/test/payments/not-an-id", 404, "Page not found"}, // not an id's shape
		{"/test/payments/py_abc/more", 404, "Page not found"},
		{"/assets/nope.js", 404, "Page not found"},
		{"/assets/app.html", 404, "Page not found"}, // shells only at their page URLs
		{"/assets/app.css", 200, ".topbar"},
		{"/assets/app.js", 200, "import"},
		{"/assets/pages/webhooks.js", 200, "export async function detail"},
		{"/assets/vendor/htm-preact-standalone.module.js", 200, "useState"},
		{"/assets/vendor/LICENSE-preact.txt", 200, "MIT"},
		{"/assets/vendor/LICENSE-htm.txt", 200, "Apache License"},
		{"/assets/vendor/README.md", 404, "Page not found"},
		{"/assets/vendor/htm-preact-standalone.module.d.ts", 404, "Page not found"},
	}
	for _, c := range cases {
		rec := get(t, h, "GET", c.path, nil)
		if rec.Code != c.status {
			t.Errorf("GET %s: status %d, want %d", c.path, rec.Code, c.status)
		}
		if !strings.Contains(rec.Body.String(), c.contains) {
			t.Errorf("GET %s: body lacks %q", c.path, c.contains)
		}
	}
}

func TestRedirects(t *testing.T) {
	t.Parallel()
	h := New()
	for path, want := range map[string]string{"/": "/test/overview", "/live/": "/live/overview", "/test/": "/test/overview"} {
		rec := get(t, h, "GET", path, nil)
		if rec.Code != http.StatusFound || rec.Header().Get("Location") != want {
			t.Errorf("GET %s: %d → %q, want 302 → %q", path, rec.Code, rec.Header().Get("Location"), want)
		}
	}
	if rec := get(t, h, "GET", "/other/", nil); rec.Code != http.StatusNotFound {
		t.Errorf("GET /other/: %d, want 404", rec.Code)
	}
}

// Every answer, including 404s, 405s and redirects, carries the security headers.
func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	h := New()
	for _, r := range []struct{ method, path string }{
		{"GET", "/login"}, {"GET", "/test/overview"}, {"GET", "/assets/app.js"}, {"GET", "/nope"}, {"GET", "/"}, {"POST", "/login"},
	} {
		rec := get(t, h, r.method, r.path, nil)
		hd := rec.Header()
		if got := hd.Get("Content-Security-Policy"); got != contentSecurityPolicy {
			t.Errorf("%s %s: CSP %q", r.method, r.path, got)
		}
		for k, v := range map[string]string{"X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "same-origin"} {
			if hd.Get(k) != v {
				t.Errorf("%s %s: %s = %q, want %q", r.method, r.path, k, hd.Get(k), v)
			}
		}
	}
	if rec := get(t, h, "POST", "/login", nil); rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /login: %d, want 405", rec.Code)
	}
}

func TestContentTypesAndRevalidation(t *testing.T) {
	t.Parallel()
	h := New()
	for path, want := range map[string]string{
		"/assets/app.js": "text/javascript; charset=utf-8", "/assets/currencies.js": "text/javascript; charset=utf-8",
		"/assets/app.css": "text/css; charset=utf-8", "/assets/kassa.css": "text/css; charset=utf-8", "/login": "text/html; charset=utf-8", "/assets/favicon.svg": "image/svg+xml",
	} {
		rec := get(t, h, "GET", path, nil)
		if got := rec.Header().Get("Content-Type"); got != want {
			t.Errorf("%s: Content-Type %q, want %q", path, got, want)
		}
		etag := rec.Header().Get("ETag")
		if etag == "" || rec.Header().Get("Cache-Control") != "no-cache" {
			t.Errorf("%s: ETag %q, Cache-Control %q", path, etag, rec.Header().Get("Cache-Control"))
			continue
		}
		if again := get(t, h, "GET", path, map[string]string{"If-None-Match": etag}); again.Code != http.StatusNotModified || again.Body.Len() != 0 {
			t.Errorf("%s revalidated: %d with %d bytes, want 304 and none", path, again.Code, again.Body.Len())
		}
	}
	if rec := get(t, h, "HEAD", "/login", nil); rec.Code != 200 || rec.Body.Len() != 0 {
		t.Errorf("HEAD /login: %d with %d bytes", rec.Code, rec.Body.Len())
	}
}

// The pages format money from the server's currency table: JPY, KRW and ISK have no decimals.
func TestCurrenciesModule(t *testing.T) {
	t.Parallel()
	body := get(t, New(), "GET", "/assets/currencies.js", nil).Body.String()
	for _, want := range []string{"EUR: 2", "JPY: 0", "KRW: 0", "ISK: 0", "USD: 2"} {
		if !strings.Contains(body, want) {
			t.Errorf("currencies.js lacks %q:\n%s", want, body)
		}
	}
}

// The CSP forbids inline script and style; the shells and scripts must not need them.
func TestNoInlineScriptOrStyle(t *testing.T) {
	t.Parallel()
	inline := []*regexp.Regexp{
		regexp.MustCompile(`<script[^>]*>\s*[^<\s]`), // a script with a body
		regexp.MustCompile(`<style`),
		regexp.MustCompile(`\sstyle=`),
		regexp.MustCompile(`\son[a-z]+=`), // onclick= and friends
	}
	for name, a := range map[string]*asset{"login.html": loginPage, "app.html": appPage, "404.html": notFoundPage} {
		for _, re := range inline {
			if re.Match(a.body) {
				t.Errorf("%s matches %s: inline code the CSP would block", name, re)
			}
		}
	}
	for name, a := range assets {
		if !strings.HasSuffix(name, ".js") || strings.HasPrefix(name, "vendor/") {
			continue // vendor/ is pinned by hash (TestVendoredLibrariesArePinned)
		}
		for _, bad := range []string{"innerHTML", "outerHTML =", "insertAdjacentHTML", "document.write", "eval(", "new Function", "setAttribute('style'", "dangerouslySetInnerHTML"} {
			if strings.Contains(string(a.body), bad) {
				t.Errorf("%s uses %s", name, bad)
			}
		}
	}
}

// The app's stylesheet takes every colour from the design tokens (kassa.css): no literal.
func TestStylesheetUsesTokens(t *testing.T) {
	css, err := assetFS.ReadFile("assets/app.css")
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`#[0-9a-fA-F]{3,8}\b|rgba?\(|hsla?\(`).Find(css); m != nil {
		t.Fatalf("app.css has the colour literal %q; add a token to adapters/web/theme/kassa.css", m)
	}
}

// The vendored libraries are the files their README names, unchanged: a new version changes
// the hash here and the README's line together. Neither may evaluate strings as code (the CSP
// forbids it) nor reach another origin.
func TestVendoredLibrariesArePinned(t *testing.T) {
	t.Parallel()
	pinned := map[string]string{
		"vendor/htm-preact-standalone.module.js": "72284e8e9079c87817145df1110f74e8a2aa040b2fc384922e18dfcb46fc1fd7",
	}
	readme, err := assetFS.ReadFile("assets/vendor/README.md")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range pinned {
		a, ok := assets[name]
		if !ok {
			t.Errorf("%s is not served", name)
			continue
		}
		sum := sha256.Sum256(a.body)
		if got := hex.EncodeToString(sum[:]); got != want {
			t.Errorf("%s: sha256 %s, want %s (update vendor/README.md and this test together)", name, got, want)
		}
		if !strings.Contains(string(readme), want) {
			t.Errorf("vendor/README.md does not name the sha256 of %s", name)
		}
		for _, bad := range []string{"eval(", "Function(", "https://", "import(", "fetch("} {
			if strings.Contains(string(a.body), bad) {
				t.Errorf("%s contains %q", name, bad)
			}
		}
		if a.contentType != "text/javascript; charset=utf-8" {
			t.Errorf("%s: Content-Type %q", name, a.contentType)
		}
	}
	// The pages build on the bridge module, which imports the vendored file.
	if !strings.Contains(string(assets["preact.js"].body), "./vendor/htm-preact-standalone.module.js") {
		t.Error("preact.js does not import the vendored bundle")
	}
}

// The customer page names every reason a balance changes for (the API's enum of a customer
// balance transaction's type) in words.
func TestCustomerPageLabelsEveryBalanceReason(t *testing.T) {
	t.Parallel()
	var spec struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					Enum []string `json:"enum"`
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openapi.DashboardJSON, &spec); err != nil {
		t.Fatal(err)
	}
	reasons := spec.Components.Schemas["CustomerBalanceTransaction"].Properties["type"].Enum
	if len(reasons) == 0 {
		t.Fatal("no balance transaction types in the dashboard API's document")
	}
	page := get(t, New(), "GET", "/assets/pages/customers.js", nil).Body.String()
	for _, r := range reasons {
		if !regexp.MustCompile(`(?m)^\s+` + regexp.QuoteMeta(r) + `: '[^']+',$`).MatchString(page) {
			t.Errorf("customers.js has no label for the balance reason %s", r)
		}
	}
}
