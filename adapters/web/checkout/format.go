package checkoutweb

import (
	"strconv"
	"strings"

	"github.com/kassa-pay/kassa/core"
)

// currencySign is how a buyer expects to see a currency: a sign and where it goes. Currencies
// without an entry show their ISO code after the number ("1,250.00 CHF").
type currencySign struct {
	sign   string
	before bool
}

var currencySigns = map[core.Currency]currencySign{
	"EUR": {"€", false}, "USD": {"$", true}, "GBP": {"£", true}, "JPY": {"¥", true},
	"KRW": {"₩", true}, "INR": {"₹", true}, "CNY": {"CN¥", true}, "ILS": {"₪", true},
	"PHP": {"₱", true}, "THB": {"฿", true}, "TRY": {"₺", true}, "PLN": {"zł", false},
	"AUD": {"A$", true}, "CAD": {"CA$", true}, "NZD": {"NZ$", true}, "HKD": {"HK$", true},
	"SGD": {"S$", true}, "BRL": {"R$", true}, "MXN": {"MX$", true},
}

// FormatMoney renders minor units for the buyer with the currency's own number of decimals
// (core's exponents: none for JPY, KRW and ISK) and thousands grouped: 2500 EUR → "25.00 €",
// 123456 USD → "$1,234.56", 500 JPY → "¥500", 1000 ISK → "1,000 ISK".
func FormatMoney(amount int64, c core.Currency) string {
	neg := amount < 0
	if neg {
		amount = -amount
	}
	digits := strconv.FormatInt(amount, 10)
	exp := c.Exponent()
	frac := ""
	if exp > 0 {
		for len(digits) <= exp {
			digits = "0" + digits
		}
		frac = "." + digits[len(digits)-exp:]
		digits = digits[:len(digits)-exp]
	}
	var b strings.Builder
	for i, r := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	num := b.String() + frac
	if neg {
		num = "-" + num
	}
	s, ok := currencySigns[c]
	switch {
	case !ok:
		return num + " " + string(c)
	case s.before:
		return s.sign + num
	default:
		return num + " " + s.sign
	}
}
