package checkoutapi

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/kassa-pay/kassa/adapters/http/kit"
	"github.com/kassa-pay/kassa/core"
)

func TestClientSecretForm(t *testing.T) {
	t.Parallel()
	for h, ok := range map[string]bool{
		"Bearer cs_abc_secret_def":  true,
		"bearer cs_abc_secret_def":  true,
		"Bearer  cs_abc_secret_def": true,
		"":                          false,
		"Bearer ":                   false,
		"Basic cs_abc_secret_def":   false,
		"Bearer sk_test_abc":        false,
		"Bearer cs_abc":             false,
		"cs_abc_secret_def":         false,
	} {
		_, err := clientSecretForm(context.Background(), h)
		if (err == nil) != ok {
			t.Errorf("%q: err = %v, want ok %v", h, err, ok)
		}
		if err != nil && !errors.Is(err, errClientSecretMissing) {
			t.Errorf("%q: %v", h, err)
		}
	}
}

func TestBrowserHeaders(t *testing.T) {
	t.Parallel()
	var secret string
	h := browserHeaders(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secret = clientSecretOf(r.Context())
		kit.WriteError(w, r, core.Invalid("x", "", "x"))
	}))

	pre := httptest.NewRequest(http.MethodOptions, "/api/v1/checkout/sessions/cs_1/confirm", nil)
	pre.Header.Set("Origin", "https://shop.example")
	pre.Header.Set("Access-Control-Request-Method", "POST")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, pre)
	if rec.Code != http.StatusNoContent || rec.Header().Get("Access-Control-Allow-Origin") != "*" ||
		rec.Header().Get("Access-Control-Allow-Headers") != "Authorization, Content-Type" ||
		rec.Header().Get("Access-Control-Allow-Credentials") != "" || rec.Header().Get("Cache-Control") != "no-store" {
		t.Fatalf("preflight: %d %v", rec.Code, rec.Header())
	}

	get := httptest.NewRequest(http.MethodGet, "/api/v1/checkout/sessions/cs_1", nil)
	get.Header.Set("Authorization", "Bearer cs_1_secret_abc")
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, get)
	if secret != "cs_1_secret_abc" || rec.Header().Get("Cache-Control") != "no-store" || rec.Header().Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("GET: secret %q headers %v", secret, rec.Header())
	}
}
