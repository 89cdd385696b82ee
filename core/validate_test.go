package core

import (
	"errors"
	"strings"
	"testing"
)

func TestValidEmail(t *testing.T) {
	for s, want := range map[string]bool{
		"ada@example.com": true, "a.b+c@sub.example.org": true,
		"": false, "not-an-email": false, "a@": false, "@example.com": false, "Ada <ada@example.com>": false,
		"ada@localhost": false, "ada@example..com": false, "ada @example.com": false,
		strings.Repeat("a", 250) + "@x.io": false,
	} {
		if got := ValidEmail(s); got != want {
			t.Errorf("ValidEmail(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestCheckWebURL(t *testing.T) {
	for s, ok := range map[string]bool{
		"https://shop.example/ok": true, "http://127.0.0.1:8080/x": true,
		"/relative": false, "ftp://x.example": false, "https://": false, "": false,
		"https://" + strings.Repeat("a", 2048): false, "https://a b.example": false,
	} {
		err := CheckWebURL(s, "success_url")
		if (err == nil) != ok {
			t.Errorf("CheckWebURL(%q) = %v, want ok=%v", s, err, ok)
		}
		var de *Error
		if err != nil && (!errors.As(err, &de) || de.Code != "success_url_invalid" || de.Param != "success_url") {
			t.Errorf("CheckWebURL(%q) error = %v", s, err)
		}
	}
}

func TestCheckMetadata(t *testing.T) {
	many := map[string]string{}
	for i := range 51 {
		many[RandomBase62(8)+string(rune('a'+i%26))] = "v"
	}
	cases := []struct {
		name  string
		md    map[string]string
		param string
	}{
		{"51 keys", many, "metadata"},
		{"empty key", map[string]string{"": "v"}, "metadata"},
		{"41-char key", map[string]string{strings.Repeat("k", 41): "v"}, "metadata"},
		{"501-char value", map[string]string{"k": strings.Repeat("v", 501)}, "metadata.k"},
	}
	for _, c := range cases {
		err := CheckMetadata(c.md, "metadata")
		var de *Error
		if !errors.As(err, &de) || de.Code != CodeMetadataInvalid || de.Param != c.param {
			t.Errorf("%s: got %v, want metadata_invalid at %s", c.name, err, c.param)
		}
	}
	ok := map[string]string{strings.Repeat("k", 40): strings.Repeat("v", 500)}
	if err := CheckMetadata(ok, "metadata"); err != nil {
		t.Errorf("limits themselves must pass: %v", err)
	}
}
