package invoicing

import (
	"errors"
	"testing"

	"github.com/kassa-pay/kassa/core"
)

func TestParseRate(t *testing.T) {
	good := map[string]Rate{"0": 0, "19": 1900, "7.5": 750, "7.25": 725, "0.01": 1, "100": 10000, "100.00": 10000, "05": 500}
	for s, want := range good {
		got, err := ParseRate(s, "line_items.0.vat_rate")
		if err != nil || got != want {
			t.Errorf("ParseRate(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "-1", "+5", "1e2", "7.", ".5", "7.255", "100.01", "101", "19%", "1,5", "1000", " 19"} {
		_, err := ParseRate(s, "line_items.0.vat_rate")
		var de *core.Error
		if !errors.As(err, &de) || de.Code != "vat_rate_invalid" || de.Param != "line_items.0.vat_rate" {
			t.Errorf("ParseRate(%q) = %v; want vat_rate_invalid at line_items.0.vat_rate", s, err)
		}
	}
}

func TestRateString(t *testing.T) {
	for r, want := range map[Rate]string{0: "0", 1900: "19", 750: "7.5", 725: "7.25", 1: "0.01", 10000: "100", 5: "0.05"} {
		if got := r.String(); got != want {
			t.Errorf("Rate(%d).String() = %q, want %q", r, got, want)
		}
	}
}

// VAT per line = round half-up(quantity × unit_amount × rate / 100), hand-computed.
func TestLineVATRoundsHalfUpPerLine(t *testing.T) {
	cases := []struct {
		q, unit int64
		rate    Rate
		want    int64
	}{
		{1, 1000, 1900, 190}, // 10.00 × 19% = 1.90
		{3, 333, 1900, 190},  // 999 × 0.19 = 189.81 → 190
		{1, 50, 700, 4},      // 3.5 → 4 (half-up)
		{1, 150, 700, 11},    // 10.5 → 11
		{1, 149, 700, 10},    // 10.43 → 10
		{7, 1, 750, 1},       // 0.525 → 1
		{1, 10, 2500, 3},     // 2.5 → 3
		{1, 1, 4999, 0},      // 0.4999 → 0
		{1, 1, 5000, 1},      // 0.5 → 1
		{10000, 99_999_999, 10000, 999_999_990_000}, // no overflow at the limits
		{2, 1234, 0, 0},
	}
	for _, c := range cases {
		if got := LineVAT(c.q, c.unit, c.rate); got != c.want {
			t.Errorf("LineVAT(%d, %d, %s) = %d, want %d", c.q, c.unit, c.rate, got, c.want)
		}
	}
}

// The invoice's VAT is the sum of the lines' rounded VAT, never the VAT of the sum.
func TestTotalsSumRoundedLineVAT(t *testing.T) {
	lines := []Line{
		{Description: "a", Quantity: 1, UnitAmount: 50, VATRate: 700},   // 3.5 → 4
		{Description: "b", Quantity: 1, UnitAmount: 50, VATRate: 700},   // 3.5 → 4
		{Description: "c", Quantity: 3, UnitAmount: 333, VATRate: 1900}, // 189.81 → 190
	}
	got := TotalsOf(lines)
	want := Totals{Subtotal: 50 + 50 + 999, VAT: 4 + 4 + 190, Total: 1099 + 198}
	if got != want {
		t.Fatalf("TotalsOf = %+v, want %+v (the VAT of the sum would be 7 + 190)", got, want)
	}
}

func TestDefaultPrefix(t *testing.T) {
	for name, want := range map[string]string{"Acme GmbH": "ACME", "ab": "ABXX", "Müller & Söhne": "MLLE", "3D-Druck": "3DDR", "": "XXXX", "x y z": "XYZX"} {
		if got := DefaultPrefix(name); got != want {
			t.Errorf("DefaultPrefix(%q) = %q, want %q", name, got, want)
		}
	}
	if got := FormatNumber("ACME", 2026, 7); got != "ACME-INV-2026-0007" {
		t.Errorf("FormatNumber = %q", got)
	}
	if got := FormatNumber("ACME", 2026, 12345); got != "ACME-INV-2026-12345" {
		t.Errorf("FormatNumber past 9999 = %q", got)
	}
}
