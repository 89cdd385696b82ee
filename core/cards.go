package core

import (
	"strings"
	"time"
)

// Card and bank-account helpers shared by the checkout pages and the payment processors. They
// are pure and never log; none of them returns a full card number or IBAN in an error or a
// message. Only what D6 allows to be stored leaves them: brand, last four, expiry.

// Card brands returned by CardBrand.
const (
	BrandVisa       = "visa"
	BrandMastercard = "mastercard"
	BrandAmex       = "amex"
	BrandDiscover   = "discover"
	BrandUnknown    = "unknown"
)

// Card number lengths accepted by NormalizeCardNumber (ISO/IEC 7812 PANs).
const (
	MinCardNumberLen = 12
	MaxCardNumberLen = 19
)

// MaxExpiryYearsAhead bounds ExpiryValid: an expiry further in the future is a typo.
const MaxExpiryYearsAhead = 50

// LuhnValid reports whether number passes the Luhn (mod 10) check. Spaces are ignored; any
// other non-digit, or fewer than two digits, makes it invalid.
func LuhnValid(number string) bool {
	digits := strings.ReplaceAll(number, " ", "")
	if len(digits) < 2 || !isDigits(digits) {
		return false
	}
	sum := 0
	double := false
	for i := len(digits) - 1; i >= 0; i-- {
		d := int(digits[i] - '0')
		if double {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return sum%10 == 0
}

// NormalizeCardNumber strips spaces and dashes and returns the bare digits when there are
// 12 to 19 of them and nothing else. It does not check the Luhn digit (see LuhnValid), so a
// caller can tell a malformed number from a mistyped one.
func NormalizeCardNumber(s string) (string, bool) {
	n := stripCardSeparators(s)
	if len(n) < MinCardNumberLen || len(n) > MaxCardNumberLen || !isDigits(n) {
		return "", false
	}
	return n, true
}

// CardBrand tells the brand from the issuer identification number (IIN) prefix: visa (4),
// mastercard (51–55, 2221–2720), amex (34, 37), discover (6011, 622126–622925, 644–649, 65),
// else unknown. Spaces and dashes are ignored; anything else that is not a digit gives unknown.
func CardBrand(number string) string {
	n := stripCardSeparators(number)
	if n == "" || !isDigits(n) {
		return BrandUnknown
	}
	prefix := func(k int) int {
		if len(n) < k {
			return -1
		}
		v := 0
		for i := 0; i < k; i++ {
			v = v*10 + int(n[i]-'0')
		}
		return v
	}
	switch p2, p3, p4, p6 := prefix(2), prefix(3), prefix(4), prefix(6); {
	case n[0] == '4':
		return BrandVisa
	case p2 >= 51 && p2 <= 55, p4 >= 2221 && p4 <= 2720:
		return BrandMastercard
	case p2 == 34 || p2 == 37:
		return BrandAmex
	case p4 == 6011, p2 == 65, p3 >= 644 && p3 <= 649, p6 >= 622126 && p6 <= 622925:
		return BrandDiscover
	}
	return BrandUnknown
}

// BrandName is the display name of a card brand for buyers (pages, receipts): Visa,
// Mastercard, American Express, Discover; "Card" for unknown or any other brand.
func BrandName(brand string) string {
	switch brand {
	case BrandVisa:
		return "Visa"
	case BrandMastercard:
		return "Mastercard"
	case BrandAmex:
		return "American Express"
	case BrandDiscover:
		return "Discover"
	}
	return "Card"
}

// ExpiryValid reports whether a card expiring at the end of month/year (in UTC) is still
// usable at now: month 1–12; a year below 100 means 20xx; the card is valid through the last
// instant of its expiry month, and not more than 50 years ahead.
func ExpiryValid(month, year int, now time.Time) bool {
	if month < 1 || month > 12 {
		return false
	}
	year, ok := NormalizeExpiryYear(year)
	if !ok {
		return false
	}
	now = now.UTC()
	if year > now.Year()+MaxExpiryYearsAhead {
		return false
	}
	end := time.Date(year, time.Month(month)+1, 1, 0, 0, 0, 0, time.UTC) // first instant after expiry
	return now.Before(end)
}

// NormalizeExpiryYear turns a two-digit expiry year (0–99) into 20xx and accepts a four-digit
// one as it is; anything else is not a year.
func NormalizeExpiryYear(year int) (int, bool) {
	switch {
	case year >= 0 && year < 100:
		return year + 2000, true
	case year >= 1000 && year <= 9999:
		return year, true
	}
	return 0, false
}

// Last4 returns the last four characters of a card number or IBAN, ignoring spaces and
// dashes; "" when fewer than four remain. It is the only part of a number that may be shown
// or stored.
func Last4(number string) string {
	n := stripCardSeparators(number)
	if len(n) < 4 {
		return ""
	}
	return n[len(n)-4:]
}

// ibanLengths is the IBAN length of every country and territory whose IBANs take part in the
// SEPA schemes (ISO 13616 / SWIFT IBAN registry). French overseas departments, Åland and the
// Crown Dependencies use the FR, FI and GB formats.
var ibanLengths = map[string]int{
	"AD": 24, "AL": 28, "AT": 20, "BE": 16, "BG": 22, "CH": 21, "CY": 28, "CZ": 24,
	"DE": 22, "DK": 18, "EE": 20, "ES": 24, "FI": 18, "FR": 27, "GB": 22, "GI": 23,
	"GR": 27, "HR": 21, "HU": 28, "IE": 22, "IS": 26, "IT": 27, "LI": 21, "LT": 20,
	"LU": 20, "LV": 21, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MT": 31, "NL": 18,
	"NO": 15, "PL": 28, "PT": 25, "RO": 24, "RS": 22, "SE": 24, "SI": 19, "SK": 24,
	"SM": 27, "VA": 22,
}

// NormalizeIBAN removes spaces, upper-cases, and returns the electronic form of an IBAN of a
// SEPA country (see ibanLengths) when its length matches the country and its check digits
// pass the ISO 13616 mod-97 test. The country is the first two letters of the result.
func NormalizeIBAN(s string) (string, bool) {
	iban := strings.ToUpper(strings.ReplaceAll(s, " ", ""))
	if len(iban) < 5 {
		return "", false
	}
	want, ok := ibanLengths[iban[:2]]
	if !ok || len(iban) != want || !isDigits(iban[2:4]) {
		return "", false
	}
	// Move the country and check digits to the end, read letters as 10..35, take mod 97.
	rem := 0
	for _, c := range iban[4:] + iban[:4] {
		switch {
		case c >= '0' && c <= '9':
			rem = (rem*10 + int(c-'0')) % 97
		case c >= 'A' && c <= 'Z':
			rem = (rem*100 + int(c-'A') + 10) % 97
		default:
			return "", false
		}
	}
	if rem != 1 {
		return "", false
	}
	return iban, true
}

func stripCardSeparators(s string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' {
			return -1
		}
		return r
	}, s)
}
