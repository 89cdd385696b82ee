package checkoutweb

import (
	"net/http"
	"strings"
	"testing"
)

func TestPageHeaders(t *testing.T) {
	h := http.Header{}
	pageHeaders(h, pageTop, "https://shop.example/thanks?o=1", "https://shop.example/cart", "http://127.0.0.1:9/x", "javascript:alert(1)", "")
	csp := h.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'",
		"form-action 'self' https://shop.example http://127.0.0.1:9;", "frame-ancestors 'none'", "base-uri 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "javascript") || strings.Contains(csp, "unsafe") {
		t.Errorf("CSP %q", csp)
	}
	if h.Get("X-Frame-Options") != "DENY" || h.Get("Cache-Control") != "no-store" || h.Get("Referrer-Policy") != "no-referrer" {
		t.Errorf("headers %v", h)
	}
	e := http.Header{}
	pageHeaders(e, pageEmbed)
	if e.Get("X-Frame-Options") != "" || !strings.Contains(e.Get("Content-Security-Policy"), "frame-ancestors *") {
		t.Errorf("embed headers %v", e)
	}
}
