package apidocs

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/kassa-pay/kassa/adapters/web/theme"
)

// TestVendoredRendererIsPinned fails when vendor/rapidoc-min.js changes without its version and
// checksum being updated here and in vendor/README.md.
func TestVendoredRendererIsPinned(t *testing.T) {
	sum := sha256.Sum256(rendererJS)
	if got := hex.EncodeToString(sum[:]); got != rendererSHA256 {
		t.Fatalf("vendor/rapidoc-min.js sha256 %s, pinned %s", got, rendererSHA256)
	}
	if !strings.Contains(string(rendererJS[:200]), "RapiDoc "+rendererVersion) {
		t.Fatalf("vendor/rapidoc-min.js does not announce RapiDoc %s", rendererVersion)
	}
}

func TestPageServesRendererAndSpecOfItsOrigin(t *testing.T) {
	mux := http.NewServeMux()
	Checkout.Mount(mux)
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/docs", nil))
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("page: %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	csp := rec.Header().Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "connect-src 'self'", "font-src 'self'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	body := rec.Body.String()
	for _, want := range []string{`spec-url="/api/v1/openapi.json"`, `load-fonts="false"`, `src="/api/docs/rapidoc-9.3.8.min.js"`,
		`href="/api/docs/kassa.css"`, `<h1>Kassa checkout browser API reference</h1>`, `primary-color="` + theme.Token("--k-accent") + `"`} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	// No absolute URL in the page but the empty data: icon (which spares a favicon request):
	// everything it loads comes from its own origin.
	if m := regexp.MustCompile(`(src|href|spec-url)="[a-z]+:[^,"]`).FindString(body); m != "" {
		t.Errorf("page loads from another origin: %s", m)
	}

	rec = httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/docs/rapidoc-9.3.8.min.js", nil))
	if rec.Code != http.StatusOK || rec.Body.Len() != len(rendererJS) ||
		!strings.HasPrefix(rec.Header().Get("Content-Type"), "text/javascript") {
		t.Fatalf("script: %d %q %d bytes", rec.Code, rec.Header().Get("Content-Type"), rec.Body.Len())
	}
	rec = httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/docs/kassa.css", nil))
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/css") ||
		!strings.Contains(rec.Body.String(), "--k-accent") || rec.Header().Get("Content-Security-Policy") == "" {
		t.Fatalf("design tokens: %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	rec = httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodHead, "/api/docs", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("HEAD page: %d", rec.Code)
	}
}
