package kit

import (
	"errors"
	"testing"

	"github.com/kassa-pay/kassa/core"
)

func TestCleanPath(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]bool{
		"/": true, "/v1/products": true, "/test/": true, "/v1/products/prod_1": true,
		"//v1": false, "/v1//products": false, "/v1/./products": false, "/v1/../v1": false,
		"/v1/.": false, "/v1/..": false, "": false,
	} {
		if got := cleanPath(p); got != want {
			t.Errorf("cleanPath(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestNormalizeNumbers(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`{"amount":2500}`:                   `{"amount":2500}`,
		`{"amount":2500.0}`:                 `{"amount":2500}`,
		`{"a":[1.0,2.5e3,2.5],"b":"1.0e3"}`: `{"a":[1,2500,2.5],"b":"1.0e3"}`,
		`{"x":1e300}`:                       `{"x":1e300}`,
	} {
		got, err := normalizeNumbers([]byte(in))
		if err != nil || string(got) != want {
			t.Errorf("normalizeNumbers(%s) = %s, %v; want %s", in, got, err, want)
		}
	}
	_, err := normalizeNumbers([]byte(`{"price":{"unit_amount":-1e400}}`))
	var de *core.Error
	if !errors.As(err, &de) || de.Code != "unit_amount_invalid" || de.Param != "price.unit_amount" {
		t.Fatalf("out of range: %v", err)
	}
}

func TestPlainNumbers(t *testing.T) {
	t.Parallel()
	if got := plainNumbers("number must be at most 9.9999999e+07"); got != "number must be at most 99999999" {
		t.Fatal(got)
	}
	if got := plainNumbers("number must be at least 0.5"); got != "number must be at least 0.5" {
		t.Fatal(got)
	}
}

func TestMethodsOf(t *testing.T) {
	t.Parallel()
	ts := []pathTemplate{
		{segs: []string{"v1", "products"}, methods: []string{"GET", "POST"}},
		{segs: []string{"v1", "products", "{id}"}, methods: []string{"GET", "POST"}},
		{segs: []string{"v1", "checkout", "sessions", "{id}"}, methods: []string{"GET"}},
		{segs: []string{"v1", "checkout", "sessions", "search"}, methods: []string{"POST"}},
	}
	for p, want := range map[string]string{
		"/v1/products": "GET,POST", "/v1/products/x": "GET,POST", "/v1/products/": "",
		"/v1/checkout/sessions/cs_1": "GET", "/v1/checkout/sessions/search": "POST", "/v2": "",
	} {
		got := ""
		for i, m := range methodsOf(ts, p) {
			if i > 0 {
				got += ","
			}
			got += m
		}
		if got != want {
			t.Errorf("methodsOf(%q) = %q, want %q", p, got, want)
		}
	}
}
