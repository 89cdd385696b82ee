package core

import (
	"strconv"
	"strings"
)

// Amount limits in minor units (interface 8, D2). They hold for every currency.
const (
	MinAmount int64 = 250
	MaxAmount int64 = 99_999_999
)

// currencyExponents lists the supported currencies (EUR plus those of the ECB daily
// reference rates, D2) with their ISO 4217 minor-unit exponent.
var currencyExponents = map[string]int{
	"EUR": 2, "USD": 2, "JPY": 0, "BGN": 2, "CZK": 2, "DKK": 2, "GBP": 2, "HUF": 2,
	"PLN": 2, "RON": 2, "SEK": 2, "CHF": 2, "ISK": 0, "NOK": 2, "TRY": 2, "AUD": 2,
	"BRL": 2, "CAD": 2, "CNY": 2, "HKD": 2, "IDR": 2, "ILS": 2, "INR": 2, "KRW": 0,
	"MXN": 2, "MYR": 2, "NZD": 2, "PHP": 2, "SGD": 2, "THB": 2, "ZAR": 2,
}

// Currency is an upper-case ISO 4217 code known to be supported.
type Currency string

// ParseCurrency accepts any case and returns the upper-case code, or ErrCurrencyUnsupported
// (pointing at param) when the code is not one Kassa settles in.
func ParseCurrency(s, param string) (Currency, error) {
	up := strings.ToUpper(strings.TrimSpace(s))
	if _, ok := currencyExponents[up]; !ok || len(s) != 3 {
		return "", ErrCurrencyUnsupported.At(param).Msg("Currency '%s' is not supported.", s)
	}
	return Currency(up), nil
}

// Exponent is the number of minor-unit digits (0 for JPY, KRW, ISK).
func (c Currency) Exponent() int { return currencyExponents[string(c)] }

// Lower is the lower-case code used in requests and App API money.
func (c Currency) Lower() string { return strings.ToLower(string(c)) }

// SupportedCurrencies returns the supported codes (unordered).
func SupportedCurrencies() []string {
	out := make([]string, 0, len(currencyExponents))
	for c := range currencyExponents {
		out = append(out, c)
	}
	return out
}

// CheckAmount enforces the minimum and maximum charge (D2) and names param on failure.
func CheckAmount(amount int64, param string) error {
	if amount < MinAmount {
		return ErrAmountTooSmall.At(param)
	}
	if amount > MaxAmount {
		return ErrAmountTooLarge.At(param)
	}
	return nil
}

// CheckAmountIn is CheckAmount for an amount in currency c: below the minimum, the message
// also gives the minimum in c's units ("Amount must be at least 250 minor units, 2.50 EUR.";
// "…, 250 JPY." for a zero-decimal currency). An unsupported c says minor units only.
func CheckAmountIn(amount int64, c Currency, param string) error {
	err := CheckAmount(amount, param)
	if _, known := currencyExponents[string(c)]; known && amount < MinAmount {
		return ErrAmountTooSmall.At(param).Msg("Amount must be at least %d minor units, %s.", MinAmount, FormatAmount(MinAmount, c))
	}
	return err
}

// FormatAmount renders minor units for people, e.g. 1050 EUR → "10.50 EUR", 500 JPY → "500 JPY".
func FormatAmount(amount int64, c Currency) string {
	exp := c.Exponent()
	neg := amount < 0
	if neg {
		amount = -amount
	}
	s := strconv.FormatInt(amount, 10)
	if exp > 0 {
		for len(s) <= exp {
			s = "0" + s
		}
		s = s[:len(s)-exp] + "." + s[len(s)-exp:]
	}
	if neg {
		s = "-" + s
	}
	return s + " " + string(c)
}
