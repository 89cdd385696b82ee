package core

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"sort"
)

// Money is an amount in minor units of a currency (cents for EUR, yen for JPY). Arithmetic
// checks the currencies: adding euros to dollars is an error, never a number. The zero Money
// has no currency; it only equals itself.
type Money struct {
	amount   int64
	currency Currency
}

// NewMoney is amount minor units of c.
func NewMoney(amount int64, c Currency) Money { return Money{amount: amount, currency: c} }

// Amount is the amount in minor units.
func (m Money) Amount() int64 { return m.amount }

// Currency is the money's currency.
func (m Money) Currency() Currency { return m.currency }

// IsZero reports whether the amount is zero.
func (m Money) IsZero() bool { return m.amount == 0 }

// IsNegative reports whether the amount is below zero.
func (m Money) IsNegative() bool { return m.amount < 0 }

// String renders the money for people: "10.50 EUR".
func (m Money) String() string { return FormatAmount(m.amount, m.currency) }

// Errors of Money arithmetic.
var (
	// ErrCurrencyMismatch: an operation on money of two currencies.
	ErrCurrencyMismatch = errors.New("core: money of different currencies")
	// ErrMoneyOverflow: a result that does not fit in int64 minor units.
	ErrMoneyOverflow = errors.New("core: money amount out of range")
)

func (m Money) same(o Money) error {
	if m.currency != o.currency {
		return fmt.Errorf("%w: %s and %s", ErrCurrencyMismatch, m.currency, o.currency)
	}
	return nil
}

// Add returns m + o; both must be of one currency.
func (m Money) Add(o Money) (Money, error) {
	if err := m.same(o); err != nil {
		return Money{}, err
	}
	s := m.amount + o.amount
	if (o.amount > 0 && s < m.amount) || (o.amount < 0 && s > m.amount) {
		return Money{}, ErrMoneyOverflow
	}
	return Money{amount: s, currency: m.currency}, nil
}

// Sub returns m − o; both must be of one currency.
func (m Money) Sub(o Money) (Money, error) {
	if o.amount == math.MinInt64 {
		return Money{}, ErrMoneyOverflow
	}
	return m.Add(Money{amount: -o.amount, currency: o.currency})
}

// Neg returns −m.
func (m Money) Neg() (Money, error) {
	if m.amount == math.MinInt64 {
		return Money{}, ErrMoneyOverflow
	}
	return Money{amount: -m.amount, currency: m.currency}, nil
}

// Cmp compares m and o of one currency: −1, 0 or +1.
func (m Money) Cmp(o Money) (int, error) {
	if err := m.same(o); err != nil {
		return 0, err
	}
	switch {
	case m.amount < o.amount:
		return -1, nil
	case m.amount > o.amount:
		return 1, nil
	}
	return 0, nil
}

// Allocate splits m into len(weights) parts in proportion to the weights, by the largest
// remainder method: each part first gets the floor of its exact share, and the minor units
// left over go one each to the parts with the largest fractional remainders (the earlier part
// first among equal remainders). The parts always sum to m exactly, and each is within one
// minor unit of its exact share. Weights must be non-negative with a positive sum. A negative
// m is split as its absolute value, every part negated. Proration, fee splits and refunds use
// it so that no cent is created or lost.
func (m Money) Allocate(weights ...int64) ([]Money, error) {
	if len(weights) == 0 {
		return nil, errors.New("core: allocate: no weights")
	}
	total := new(big.Int)
	for _, w := range weights {
		if w < 0 {
			return nil, fmt.Errorf("core: allocate: negative weight %d", w)
		}
		total.Add(total, big.NewInt(w))
	}
	if total.Sign() == 0 {
		return nil, errors.New("core: allocate: the weights sum to zero")
	}
	neg := m.amount < 0
	abs := new(big.Int).Abs(big.NewInt(m.amount))
	type part struct {
		i   int
		q   int64
		rem *big.Int
	}
	parts := make([]part, len(weights))
	left := new(big.Int).Set(abs)
	for i, w := range weights {
		num := new(big.Int).Mul(abs, big.NewInt(w))
		q, r := new(big.Int).QuoRem(num, total, new(big.Int))
		parts[i] = part{i: i, q: q.Int64(), rem: r}
		left.Sub(left, q)
	}
	order := make([]part, len(parts))
	copy(order, parts)
	sort.SliceStable(order, func(a, b int) bool { return order[a].rem.Cmp(order[b].rem) > 0 })
	extra := left.Int64() // < len(weights)
	for k := int64(0); k < extra; k++ {
		parts[order[k].i].q++
	}
	out := make([]Money, len(parts))
	for i, p := range parts {
		a := p.q
		if neg {
			a = -a
		}
		out[i] = Money{amount: a, currency: m.currency}
	}
	return out, nil
}

// Sum adds ms, all of currency c (an empty list is zero of c).
func Sum(c Currency, ms ...Money) (Money, error) {
	total := NewMoney(0, c)
	for _, m := range ms {
		var err error
		if total, err = total.Add(m); err != nil {
			return Money{}, err
		}
	}
	return total, nil
}
