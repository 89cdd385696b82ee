package checkoutweb

import (
	"testing"

	"github.com/kassa-pay/kassa/core"
)

func TestFormatMoney(t *testing.T) {
	cases := []struct {
		amount int64
		cur    core.Currency
		want   string
	}{
		{2500, "EUR", "25.00 €"},
		{5, "EUR", "0.05 €"},
		{99_999_999, "EUR", "999,999.99 €"},
		{123456, "USD", "$1,234.56"},
		{250, "GBP", "£2.50"},
		{500, "JPY", "¥500"},
		{1234567, "JPY", "¥1,234,567"},
		{25000, "KRW", "₩25,000"},
		{1000, "ISK", "1,000 ISK"},
		{125000, "CHF", "1,250.00 CHF"},
		{-2500, "EUR", "-25.00 €"},
	}
	for _, c := range cases {
		if got := FormatMoney(c.amount, c.cur); got != c.want {
			t.Errorf("FormatMoney(%d, %s) = %q, want %q", c.amount, c.cur, got, c.want)
		}
	}
}
