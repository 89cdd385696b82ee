package billing

import (
	"context"
	"errors"
	"math/big"
	"slices"

	"github.com/kassa-pay/kassa/core"
)

// CustomerFilter narrows the customer list: Email, when set, keeps the customer with that
// address (compared as EmailKey).
type CustomerFilter struct {
	Email *string
}

// RecurringGroup is what the recurring revenue needs of the scope's active and past-due
// subscriptions: per status, currency, billing cycle and pause, how many there are and the sum
// of their amounts per period.
type RecurringGroup struct {
	Status        Status
	Currency      core.Currency
	Interval      string
	IntervalCount int
	// Paused groups subscriptions with pause_collection set: counted, but no revenue.
	Paused bool
	Count  int64
	Amount int64
}

// Reads are the dashboard's read queries over billing's tables, outside a unit of work.
type Reads interface {
	// Customers pages the scope's customers newest first; a cursor that is not a customer of
	// the scope is ErrUnknownCursor.
	Customers(ctx context.Context, scope core.Scope, q core.ListQuery, f CustomerFilter) (core.Page[*Customer], error)
	// BalanceTransactions pages customer id's balance transactions newest first; a cursor
	// that is not one of them is ErrUnknownCursor.
	BalanceTransactions(ctx context.Context, scope core.Scope, id string, q core.ListQuery) (core.Page[*BalanceTransaction], error)
	// RecurringGroups sums the scope's active and past_due subscriptions by status, currency,
	// cycle and pause.
	RecurringGroups(ctx context.Context, scope core.Scope) ([]RecurringGroup, error)
}

// Queries answers the dashboard's questions about customers and recurring revenue. It has no
// rules beyond paging and the monthly normalisation of Summary.
type Queries struct {
	store Store
	reads Reads
}

// NewQueries checks the dependencies.
func NewQueries(store Store, reads Reads) (*Queries, error) {
	if store == nil || reads == nil {
		return nil, errors.New("billing: queries need the store and the reads")
	}
	return &Queries{store: store, reads: reads}, nil
}

// Customers pages the scope's customers (D8 paging); email, when given, must be a plausible
// address length (400 email_invalid).
func (q *Queries) Customers(ctx context.Context, scope core.Scope, lq core.ListQuery, f CustomerFilter) (core.Page[*Customer], error) {
	lq, err := lq.Normalize()
	if err != nil {
		return core.Page[*Customer]{}, err
	}
	if f.Email != nil && len(*f.Email) > MaxEmailBytes {
		return core.Page[*Customer]{}, core.InvalidField("email", "email must be at most %d bytes.", MaxEmailBytes)
	}
	if f.Email != nil {
		k := EmailKey(*f.Email)
		f.Email = &k
	}
	page, err := q.reads.Customers(ctx, scope, lq, f)
	if errors.Is(err, ErrUnknownCursor) {
		return page, lq.UnknownCursor()
	}
	return page, err
}

// Customer reads customer id of scope with its saved methods, newest first (404
// customer_not_found).
func (q *Queries) Customer(ctx context.Context, scope core.Scope, id string) (*Customer, []*PaymentMethod, error) {
	c, err := q.store.Customer(ctx, scope, id)
	if err != nil {
		return nil, nil, customerNotFound(err)
	}
	ms, err := q.store.CustomerMethods(ctx, scope, id)
	if err != nil {
		return nil, nil, err
	}
	return c, ms, nil
}

// Balances is the customer's balance per currency it has had one in (negative: credit).
func (q *Queries) Balances(ctx context.Context, scope core.Scope, id string) (map[core.Currency]int64, error) {
	return q.store.CustomerBalances(ctx, scope, id)
}

// Summary counts the active and past-due subscriptions and their monthly recurring revenue
// (SummarizeRecurring).
func (q *Queries) Summary(ctx context.Context, scope core.Scope) (BillingSummary, error) {
	gs, err := q.reads.RecurringGroups(ctx, scope)
	if err != nil {
		return BillingSummary{}, err
	}
	return SummarizeRecurring(gs)
}

// BillingSummary is the scope's recurring revenue now.
type BillingSummary struct {
	ActiveCount, PastDueCount int64
	// MRR is the monthly recurring revenue per currency, by currency code.
	MRR []core.Money
}

// monthlyFactor is the fraction num/den that brings one period's amount to a month: a month
// ÷ count, a year ÷ (12 × count), a week × 52 ÷ (12 × count), a day × 365 ÷ (12 × count).
func monthlyFactor(interval string, count int) (num, den int64, ok bool) {
	if count < 1 {
		return 0, 0, false
	}
	c := int64(count)
	switch interval {
	case IntervalMonth:
		return 1, c, true
	case IntervalYear:
		return 1, 12 * c, true
	case IntervalWeek:
		return 52, 12 * c, true
	case IntervalDay:
		return 365, 12 * c, true
	}
	return 0, 0, false
}

// SummarizeRecurring counts active and past_due subscriptions and brings each group's amount
// to a month (a yearly amount ÷ 12, a weekly one × 52 ÷ 12, a daily one × 365 ÷ 12, each ÷ the
// interval count), summing exactly per currency and rounding half-up once at the end. A paused
// subscription is counted under its status but adds no revenue: it makes no invoices.
func SummarizeRecurring(gs []RecurringGroup) (BillingSummary, error) {
	var out BillingSummary
	sums := map[core.Currency]*big.Rat{}
	for _, g := range gs {
		switch g.Status {
		case StatusActive:
			out.ActiveCount += g.Count
		case StatusPastDue:
			out.PastDueCount += g.Count
		default:
			continue
		}
		if g.Paused {
			continue
		}
		num, den, ok := monthlyFactor(g.Interval, g.IntervalCount)
		if !ok {
			return BillingSummary{}, errors.New("billing: unknown billing cycle " + g.Interval)
		}
		r := new(big.Rat).SetFrac(new(big.Int).Mul(big.NewInt(g.Amount), big.NewInt(num)), big.NewInt(den))
		if sums[g.Currency] == nil {
			sums[g.Currency] = new(big.Rat)
		}
		sums[g.Currency].Add(sums[g.Currency], r)
	}
	cs := make([]core.Currency, 0, len(sums))
	for c := range sums {
		cs = append(cs, c)
	}
	slices.Sort(cs)
	for _, c := range cs {
		out.MRR = append(out.MRR, core.NewMoney(roundHalfUp(sums[c]), c))
	}
	return out, nil
}

// roundHalfUp rounds a non-negative fraction to the nearest integer, halves up.
func roundHalfUp(r *big.Rat) int64 {
	n := new(big.Int).Mul(r.Num(), big.NewInt(2))
	n.Add(n, r.Denom())
	d := new(big.Int).Mul(r.Denom(), big.NewInt(2))
	return new(big.Int).Quo(n, d).Int64()
}
