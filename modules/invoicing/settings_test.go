package invoicing

import "testing"

func TestValidPrefix(t *testing.T) {
	for _, p := range []string{"ABC", "ACME", "ABCDEFGHIJ12", "123", "SHOP24"} {
		if !ValidPrefix(p) {
			t.Errorf("ValidPrefix(%q) = false", p)
		}
	}
	for _, p := range []string{"", "AB", "ABCDEFGHIJKLM", "acme", "Acme", "AC-ME", "AC ME", " ACM", "ACM\n", "ÄBC", "ＡＢＣ"} {
		if ValidPrefix(p) {
			t.Errorf("ValidPrefix(%q) = true", p)
		}
	}
	// Every default prefix is a valid prefix.
	for _, name := range []string{"Acme GmbH", "", "ü", "Müller & Söhne", "12345678"} {
		if p := DefaultPrefix(name); !ValidPrefix(p) {
			t.Errorf("DefaultPrefix(%q) = %q is not valid", name, p)
		}
	}
}
