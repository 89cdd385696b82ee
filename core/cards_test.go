package core

import (
	"strings"
	"testing"
	"time"
)

// The sandbox test numbers of D6, plus common test numbers of the other brands.
var d6Cards = []string{
	"4242424242424242", "4000000000000002", "4000000000009995", "4000000000009987",
	"4000000000000069", "4000000000000127", "4000002760003184", "4000000000000259",
	"4000000000000077",
}

func TestLuhnValid(t *testing.T) {
	for _, n := range d6Cards {
		if !LuhnValid(n) {
			t.Errorf("LuhnValid(%s) = false, want true", n)
		}
	}
	cases := []struct {
		in   string
		want bool
	}{
		{"4242 4242 4242 4242", true},
		{"5555555555554444", true},
		{"378282246310005", true},
		{"6011111111111117", true},
		{"79927398713", true},
		{"4242424242424241", false},
		{"4242-4242-4242-4242", false}, // only spaces are ignored
		{"4242a24242424242", false},
		{"", false},
		{"0", false},
		{"00", true},
		{"  ", false},
		{"٤٢٤٢٤٢٤٢٤٢٤٢٤٢٤٢", false}, // non-ASCII digits
	}
	for _, c := range cases {
		if got := LuhnValid(c.in); got != c.want {
			t.Errorf("LuhnValid(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestNormalizeCardNumber(t *testing.T) {
	cases := []struct {
		in, want string
		ok       bool
	}{
		{"4242424242424242", "4242424242424242", true},
		{"4242 4242 4242 4242", "4242424242424242", true},
		{"4242-4242-4242-4242", "4242424242424242", true},
		{" 3782 822463 10005 ", "378282246310005", true},
		{"4242424242424241", "4242424242424241", true}, // Luhn is not its business
		{"123456789012", "123456789012", true},         // 12 digits
		{"1234567890123456789", "1234567890123456789", true},
		{"12345678901", "", false},          // 11 digits
		{"12345678901234567890", "", false}, // 20 digits
		{"4242.4242.4242.4242", "", false},
		{"4242424242424242x", "", false},
		{"", "", false},
	}
	for _, c := range cases {
		got, ok := NormalizeCardNumber(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("NormalizeCardNumber(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestCardBrand(t *testing.T) {
	cases := map[string]string{
		"4242424242424242":    BrandVisa,
		"4000002760003184":    BrandVisa,
		"4242 4242 4242 4242": BrandVisa,
		"5555555555554444":    BrandMastercard,
		"5105105105105100":    BrandMastercard,
		"2223003122003222":    BrandMastercard,
		"2221000000000009":    BrandMastercard,
		"2720990000000000":    BrandMastercard,
		"2721000000000000":    BrandUnknown,
		"2220990000000000":    BrandUnknown,
		"378282246310005":     BrandAmex,
		"371449635398431":     BrandAmex,
		"6011111111111117":    BrandDiscover,
		"6011000990139424":    BrandDiscover,
		"6445644564456445":    BrandDiscover,
		"6500000000000002":    BrandDiscover,
		"6221260000000000":    BrandDiscover,
		"6229250000000000":    BrandDiscover,
		"6221250000000000":    BrandUnknown,
		"3056930009020004":    BrandUnknown, // diners
		"3566002020360505":    BrandUnknown, // jcb
		"":                    BrandUnknown,
		"4x":                  BrandUnknown,
	}
	for in, want := range cases {
		if got := CardBrand(in); got != want {
			t.Errorf("CardBrand(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestBrandName(t *testing.T) {
	cases := map[string]string{
		BrandVisa: "Visa", BrandMastercard: "Mastercard", BrandAmex: "American Express",
		BrandDiscover: "Discover", BrandUnknown: "Card", "jcb": "Card", "": "Card",
	}
	for in, want := range cases {
		if got := BrandName(in); got != want {
			t.Errorf("BrandName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestExpiryValid(t *testing.T) {
	now := time.Date(2026, time.March, 15, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name        string
		month, year int
		now         time.Time
		want        bool
	}{
		{"this month", 3, 2026, now, true},
		{"this month 2-digit", 3, 26, now, true},
		{"last month", 2, 2026, now, false},
		{"last month 2-digit", 2, 26, now, false},
		{"next year", 1, 2027, now, true},
		{"last year", 12, 2025, now, false},
		{"last instant of month", 3, 2026, time.Date(2026, 3, 31, 23, 59, 59, 0, time.UTC), true},
		{"first instant after", 3, 2026, time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC), false},
		{"december rolls the year", 12, 2026, time.Date(2026, 12, 31, 23, 0, 0, 0, time.UTC), true},
		{"evaluated in UTC", 3, 2026, time.Date(2026, 4, 1, 0, 30, 0, 0, time.FixedZone("CET", 3600)), true},
		{"month 0", 0, 2027, now, false},
		{"month 13", 13, 2027, now, false},
		{"three-digit year", 1, 127, now, false},
		{"negative year", 1, -1, now, false},
		{"50 years ahead", 12, 2076, now, true},
		{"51 years ahead", 1, 2077, now, false},
	}
	for _, c := range cases {
		if got := ExpiryValid(c.month, c.year, c.now); got != c.want {
			t.Errorf("%s: ExpiryValid(%d, %d, %s) = %v, want %v", c.name, c.month, c.year, c.now, got, c.want)
		}
	}
}

func TestLast4(t *testing.T) {
	cases := map[string]string{
		"4242424242424242":            "4242",
		"4000 0027 6000 3184":         "3184",
		"4000-0000-0000-0259":         "0259",
		"DE89370400440532013000":      "3000",
		"DE62 3704 0044 0532 0130 01": "3001",
		"123":                         "",
		"":                            "",
	}
	for in, want := range cases {
		if got := Last4(in); got != want {
			t.Errorf("Last4(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNormalizeIBAN(t *testing.T) {
	valid := map[string]string{
		"DE89370400440532013000":          "DE89370400440532013000", // D6: settles succeeded
		"DE62370400440532013001":          "DE62370400440532013001", // D6: settles failed
		"DE89 3704 0044 0532 0130 00":     "DE89370400440532013000",
		"de89370400440532013000":          "DE89370400440532013000",
		"GB82WEST12345698765432":          "GB82WEST12345698765432",
		"FR1420041010050500013M02606":     "FR1420041010050500013M02606",
		"NL91ABNA0417164300":              "NL91ABNA0417164300",
		"BE68539007547034":                "BE68539007547034",
		"NO9386011117947":                 "NO9386011117947",
		"MT84MALT011000012345MTLCAST001S": "MT84MALT011000012345MTLCAST001S",
		"CH9300762011623852957":           "CH9300762011623852957",
		"AT611904300234573201":            "AT611904300234573201",
		"ES9121000418450200051332":        "ES9121000418450200051332",
		"IT60X0542811101000000123456":     "IT60X0542811101000000123456",
	}
	for in, want := range valid {
		got, ok := NormalizeIBAN(in)
		if !ok || got != want {
			t.Errorf("NormalizeIBAN(%q) = %q, %v; want %q, true", in, got, ok, want)
		}
	}
	invalid := map[string]string{
		"DE89370400440532013001":      "wrong check digits",
		"DE8937040044053201300":       "too short for DE",
		"DE893704004405320130000":     "too long for DE",
		"US12345678901234567890":      "not a SEPA country",
		"XX89370400440532013000":      "unknown country",
		"DEXX370400440532013000":      "check digits not digits",
		"DE89-3704-0044-0532-0130-00": "dashes are not part of the print form",
		"DE89370400440532013Ä00":      "non-ASCII",
		"DE89":                        "too short",
		"":                            "empty",
	}
	for in, why := range invalid {
		if got, ok := NormalizeIBAN(in); ok || got != "" {
			t.Errorf("NormalizeIBAN(%q) = %q, %v; want rejection (%s)", in, got, ok, why)
		}
	}
	for cc, n := range ibanLengths {
		if len(cc) != 2 || strings.ToUpper(cc) != cc || n < 15 || n > 34 {
			t.Errorf("ibanLengths[%q] = %d looks wrong", cc, n)
		}
	}
}
