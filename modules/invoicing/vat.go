package invoicing

import (
	"strconv"
	"strings"

	"github.com/kassa-pay/kassa/core"
)

// Rate is a VAT rate in hundredths of a percent: "19" is 1900, "7.5" is 750, "0.01" is 1.
// Rates are exact decimals with at most two decimals, 0 to 100; never a float.
type Rate int64

// MaxRate is 100%.
const MaxRate Rate = 100_00

// ParseRate reads a VAT rate ("19", "7.5", "0.25"). Anything else (a sign, an exponent, three
// decimals, above 100) is 400 vat_rate_invalid at param.
func ParseRate(s, param string) (Rate, error) {
	bad := core.InvalidField(param, "vat_rate must be a decimal string from 0 to 100 with at most 2 decimals, e.g. \"19\" or \"7.5\".")
	whole, frac, dotted := strings.Cut(s, ".")
	if whole == "" || len(whole) > 3 || len(frac) > 2 || (dotted && frac == "") || !digits(whole) || !digits(frac) {
		return 0, bad
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, bad
	}
	f := int64(0)
	if frac != "" {
		f, _ = strconv.ParseInt(frac, 10, 64)
		if len(frac) == 1 {
			f *= 10
		}
	}
	r := Rate(w*100 + f)
	if r > MaxRate {
		return 0, bad
	}
	return r, nil
}

func digits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// String is the rate's canonical decimal form: "19", "7.5", "7.25", "0".
func (r Rate) String() string {
	w, f := int64(r)/100, int64(r)%100
	switch {
	case f == 0:
		return strconv.FormatInt(w, 10)
	case f%10 == 0:
		return strconv.FormatInt(w, 10) + "." + strconv.FormatInt(f/10, 10)
	}
	return strconv.FormatInt(w, 10) + "." + strconv.FormatInt(f/10, 10) + strconv.FormatInt(f%10, 10)
}

// LineVAT is the VAT of a line: quantity × unit_amount × rate / 100, rounded half-up to the
// minor unit. Quantities are at most 10,000, unit amounts at most core.MaxAmount and rates at
// most 100.00, so the product (≤ 10^16) never overflows.
func LineVAT(quantity, unitAmount int64, r Rate) int64 {
	return (quantity*unitAmount*int64(r) + 5000) / 10000
}

// Totals are an invoice's sums: subtotal (the lines' net amounts), VAT (the sum of the lines'
// rounded VAT: VAT is rounded per line, never on the sum) and total.
type Totals struct {
	Subtotal, VAT, Total int64
}

// TotalsOf sums the lines.
func TotalsOf(lines []Line) Totals {
	var t Totals
	for _, l := range lines {
		t.Subtotal += l.Amount()
		t.VAT += l.VATAmount()
	}
	t.Total = t.Subtotal + t.VAT
	return t
}
