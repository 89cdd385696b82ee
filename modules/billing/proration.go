package billing

import (
	"fmt"
	"math/big"
	"time"
)

// Proration is what a plan change in the middle of a period is worth: Credit for the unused
// part of the period at the old amount and Charge for the same part at the new amount, both
// counted by the second and each rounded half-up to a minor unit. Net = Charge − Credit; a
// negative Net is money owed to the customer.
//
// When the interval changes the period restarts at the change: Credit is still the unused part
// of the old period, and Charge is the whole new amount for the new period that begins then.
type Proration struct {
	Credit, Charge, Net int64
	// Unused and Total are the seconds left in the period and the period's length.
	Unused, Total int64
	// Restart: the interval changed, the new period starts at the change.
	Restart bool
}

// ProrationInput describes a change at At of a subscription in the period [PeriodStart,
// PeriodEnd) from OldAmount to NewAmount (unit amount × quantity, minor units, same currency).
type ProrationInput struct {
	PeriodStart, PeriodEnd, At time.Time
	OldAmount, NewAmount       int64
	IntervalChanged            bool
}

// Prorate computes the proration of in. At outside the period is an error (no time remains,
// or the period has not begun); amounts must not be negative.
func Prorate(in ProrationInput) (Proration, error) {
	start, end, at := in.PeriodStart.Unix(), in.PeriodEnd.Unix(), in.At.Unix()
	if end <= start {
		return Proration{}, fmt.Errorf("billing: empty period %d–%d", start, end)
	}
	if at < start || at >= end {
		return Proration{}, fmt.Errorf("billing: change at %d outside the period %d–%d", at, start, end)
	}
	if in.OldAmount < 0 || in.NewAmount < 0 {
		return Proration{}, fmt.Errorf("billing: negative amount")
	}
	p := Proration{Unused: end - at, Total: end - start, Restart: in.IntervalChanged}
	p.Credit = proportionHalfUp(in.OldAmount, p.Unused, p.Total)
	if in.IntervalChanged {
		p.Charge = in.NewAmount
	} else {
		p.Charge = proportionHalfUp(in.NewAmount, p.Unused, p.Total)
	}
	p.Net = p.Charge - p.Credit
	return p, nil
}

// proportionHalfUp is amount × part / whole rounded half-up (amount, part ≥ 0, whole > 0),
// in exact integer arithmetic.
func proportionHalfUp(amount, part, whole int64) int64 {
	n := new(big.Int).Mul(big.NewInt(amount), big.NewInt(part))
	n.Mul(n, big.NewInt(2))
	n.Add(n, big.NewInt(whole))
	d := new(big.Int).Mul(big.NewInt(whole), big.NewInt(2))
	return n.Quo(n, d).Int64()
}
