package core

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func eur(a int64) Money { return NewMoney(a, "EUR") }

func TestMoneyArithmeticChecksTheCurrency(t *testing.T) {
	t.Parallel()
	if s, err := eur(1050).Add(eur(-50)); err != nil || s != eur(1000) {
		t.Fatalf("add: %v %v", s, err)
	}
	if d, err := eur(1000).Sub(eur(1050)); err != nil || d != eur(-50) || !d.IsNegative() {
		t.Fatalf("sub: %v %v", d, err)
	}
	usd := NewMoney(100, "USD")
	for name, f := range map[string]func() error{
		"add": func() error { _, err := eur(1).Add(usd); return err },
		"sub": func() error { _, err := eur(1).Sub(usd); return err },
		"cmp": func() error { _, err := eur(1).Cmp(usd); return err },
		"sum": func() error { _, err := Sum("EUR", eur(1), usd); return err },
	} {
		if err := f(); !errors.Is(err, ErrCurrencyMismatch) {
			t.Errorf("%s across currencies: %v", name, err)
		}
	}
	if c, err := eur(2).Cmp(eur(1)); err != nil || c != 1 {
		t.Fatalf("cmp: %d %v", c, err)
	}
	if _, err := eur(math.MaxInt64).Add(eur(1)); !errors.Is(err, ErrMoneyOverflow) {
		t.Fatalf("overflow: %v", err)
	}
	if _, err := eur(math.MinInt64).Neg(); !errors.Is(err, ErrMoneyOverflow) {
		t.Fatalf("neg overflow: %v", err)
	}
	if s := NewMoney(-1050, "EUR").String(); s != "-10.50 EUR" {
		t.Fatalf("string %q", s)
	}
}

func TestMoneyAllocateByLargestRemainder(t *testing.T) {
	t.Parallel()
	cases := []struct {
		m       Money
		weights []int64
		want    []int64
	}{
		{eur(100), []int64{1, 1, 1}, []int64{34, 33, 33}},     // the first of equal remainders gets the cent
		{eur(-100), []int64{1, 1, 1}, []int64{-34, -33, -33}}, // negative: mirrored
		{eur(5), []int64{3, 7}, []int64{2, 3}},                // 1.5, 3.5: equal remainders, the earlier first
		{eur(10), []int64{1, 2, 7}, []int64{1, 2, 7}},         // exact
		{eur(1), []int64{0, 5}, []int64{0, 1}},                // a zero weight gets nothing
		{eur(0), []int64{1, 2}, []int64{0, 0}},
		{NewMoney(1000, "JPY"), []int64{1, 1, 1, 1, 1, 1, 1}, []int64{143, 143, 143, 143, 143, 143, 142}},
		{eur(30), []int64{1, 1, 1, 97}, []int64{1, 0, 0, 29}}, // 0.3 0.3 0.3 29.1: the first remainder of .3 wins
	}
	for _, c := range cases {
		got, err := c.m.Allocate(c.weights...)
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if got[i].Amount() != c.want[i] || got[i].Currency() != c.m.Currency() {
				t.Errorf("%v by %v: %v, want %v", c.m, c.weights, got, c.want)
				break
			}
		}
	}
	for _, bad := range [][]int64{nil, {0, 0}, {1, -1}} {
		if _, err := eur(10).Allocate(bad...); err == nil {
			t.Errorf("weights %v accepted", bad)
		}
	}
}

// Whatever the amount and the weights, the parts sum to the whole and each is within one minor
// unit of its exact share.
func TestMoneyAllocateNeverLosesACent(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 2000; n++ {
		amount := r.Int64N(2_000_000_000) - 1_000_000_000
		weights := make([]int64, 1+r.IntN(8))
		var total int64
		for i := range weights {
			weights[i] = r.Int64N(10_000)
			total += weights[i]
		}
		if total == 0 {
			continue
		}
		parts, err := eur(amount).Allocate(weights...)
		if err != nil {
			t.Fatal(err)
		}
		sum, err := Sum("EUR", parts...)
		if err != nil || sum.Amount() != amount {
			t.Fatalf("%d by %v: parts %v sum to %v", amount, weights, parts, sum)
		}
		for i, p := range parts {
			exact := float64(amount) * float64(weights[i]) / float64(total)
			if d := float64(p.Amount()) - exact; d <= -1 || d >= 1 {
				t.Fatalf("%d by %v: part %d is %d, exact %.3f", amount, weights, i, p.Amount(), exact)
			}
		}
	}
}
