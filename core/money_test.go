package core

import (
	"errors"
	"testing"
)

func TestCheckAmountInNamesTheUnit(t *testing.T) {
	cases := []struct {
		amount int64
		c      Currency
		want   string // message; "" = no error
	}{
		{249, "EUR", "Amount must be at least 250 minor units, 2.50 EUR."},
		{0, "USD", "Amount must be at least 250 minor units, 2.50 USD."},
		{249, "JPY", "Amount must be at least 250 minor units, 250 JPY."},
		{-1, "", "Amount must be at least 250 minor units."},
		{250, "EUR", ""},
		{MaxAmount + 1, "EUR", ErrAmountTooLarge.Message},
	}
	for _, c := range cases {
		err := CheckAmountIn(c.amount, c.c, "amount")
		if c.want == "" {
			if err != nil {
				t.Errorf("%d %s: %v", c.amount, c.c, err)
			}
			continue
		}
		var e *Error
		if !errors.As(err, &e) || e.Message != c.want || e.Param != "amount" {
			t.Errorf("%d %s: got %v, want message %q on amount", c.amount, c.c, err, c.want)
		}
	}
}
