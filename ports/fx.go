package ports

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// FXRates gives the reference exchange rate of a day (D7: the ECB reference rate of the charge
// day). Reference rates are published on working days only, so the rate used is the latest one
// published on or before `day`; the returned Rate says which publication day that was.
//
// `day` is read as a calendar date in UTC (the merchant API speaks UTC): any instant of that
// UTC day gives the same rate. Implementations are safe for concurrent use.
//
// Errors: ErrFXCurrencyNotQuoted when from or to has no rate on the publication day used,
// ErrFXNoRateForDay when nothing was published on or before day. Both are wrapped with
// detail; match them with errors.Is. Neither is a client error: a supported currency without a
// rate means the rates source is incomplete.
type FXRates interface {
	Rate(ctx context.Context, day time.Time, from, to core.Currency) (Rate, error)
}

// Errors of an FXRates source.
var (
	ErrFXCurrencyNotQuoted = errors.New("fx: currency not quoted")
	ErrFXNoRateForDay      = errors.New("fx: no rate published on or before the day")
)

// Rate is an exact exchange rate: one major unit of From is worth Value() major units of To
// (1 EUR = 1.1625 USD gives From EUR, To USD, Value 1.1625). Money is never converted through
// float64: the value is a rational number, parsed exactly from the source's decimal string.
// A Rate is immutable; Value returns a copy.
type Rate struct {
	From core.Currency
	To   core.Currency
	// Day is the publication date of the rate actually used, at 00:00 UTC.
	Day   time.Time
	value *big.Rat
}

// NewRate builds a rate; value must be positive. value is copied, and day is truncated to its
// UTC date.
func NewRate(from, to core.Currency, day time.Time, value *big.Rat) (Rate, error) {
	if value == nil || value.Sign() <= 0 {
		return Rate{}, fmt.Errorf("fx: rate %s→%s must be positive", from, to)
	}
	return Rate{From: from, To: to, Day: DateOf(day), value: new(big.Rat).Set(value)}, nil
}

// Value returns the rate as an exact rational (a copy: the caller may modify it). The zero Rate
// answers 0.
func (r Rate) Value() *big.Rat {
	if r.value == nil {
		return new(big.Rat)
	}
	return new(big.Rat).Set(r.value)
}

// IsZero reports whether r is the zero Rate (no value).
func (r Rate) IsZero() bool { return r.value == nil }

// String renders the rate for people and logs, e.g. "1 EUR = 1.1625 USD (2026-11-18)". The
// value is shown with up to 10 decimals (cross rates may not terminate).
func (r Rate) String() string {
	return fmt.Sprintf("1 %s = %s %s (%s)", r.From, trimZeros(r.Value().FloatString(10)), r.To,
		r.Day.Format(time.DateOnly))
}

// DateOf returns the UTC calendar date of t at 00:00 UTC.
func DateOf(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

func trimZeros(s string) string {
	i := len(s)
	for i > 0 && s[i-1] == '0' {
		i--
	}
	if i > 0 && s[i-1] == '.' {
		i--
	}
	return s[:i]
}
