package payments

import (
	"context"
	"sort"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// The overview's chart: the scope's gross volume per currency and per day.

// DayTotal is one currency's captured volume on one UTC day, as the store sums it.
type DayTotal struct {
	Day      time.Time // UTC midnight
	Currency core.Currency
	Amount   int64
	Count    int64
}

// DailyVolume is a scope's gross volume over Days UTC days, From to To (both midnights, To is
// the day of the scope's clock), one dense series per currency.
type DailyVolume struct {
	Days     int
	From, To time.Time
	Series   []CurrencyVolume
}

// CurrencyVolume is one currency's series: Days entries, oldest first, with its totals.
type CurrencyVolume struct {
	Currency      core.Currency
	Amount, Count int64
	Days          []DayTotal
}

// DefaultVolumeDays is the range the overview charts; MaxVolumeDays bounds a request.
const (
	DefaultVolumeDays = 90
	MaxVolumeDays     = 366
)

// DailyVolume returns the scope's gross volume (the payments in one of CapturedStatuses, by
// the day they were created) over the days UTC days that end with the day of now, the scope's
// clock (the test clock in test mode).
func (q *Queries) DailyVolume(ctx context.Context, scope core.Scope, now time.Time, days int) (DailyVolume, error) {
	if days < 1 || days > MaxVolumeDays {
		return DailyVolume{}, core.InvalidField("days", "days must be an integer from 1 to %d.", MaxVolumeDays)
	}
	to := utcDay(now)
	from := to.AddDate(0, 0, -(days - 1))
	totals, err := q.lister.VolumeByDay(ctx, scope, CapturedStatuses, from, to.AddDate(0, 0, 1))
	if err != nil {
		return DailyVolume{}, err
	}
	return densify(from, days, totals), nil
}

// utcDay is the UTC midnight that starts t's UTC day.
func utcDay(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// densify spreads the store's sums over every day of the range, per currency (sorted by
// code), zero where a currency had no payment; sums outside the range are dropped.
func densify(from time.Time, days int, totals []DayTotal) DailyVolume {
	out := DailyVolume{Days: days, From: from, To: from.AddDate(0, 0, days-1)}
	byCurrency := map[core.Currency]*CurrencyVolume{}
	var codes []core.Currency
	for _, t := range totals {
		i := int(utcDay(t.Day).Sub(from) / (24 * time.Hour))
		if i < 0 || i >= days {
			continue
		}
		s, ok := byCurrency[t.Currency]
		if !ok {
			s = &CurrencyVolume{Currency: t.Currency, Days: make([]DayTotal, days)}
			for d := range s.Days {
				s.Days[d] = DayTotal{Day: from.AddDate(0, 0, d), Currency: t.Currency}
			}
			byCurrency[t.Currency] = s
			codes = append(codes, t.Currency)
		}
		s.Days[i].Amount += t.Amount
		s.Days[i].Count += t.Count
		s.Amount += t.Amount
		s.Count += t.Count
	}
	sort.Slice(codes, func(a, b int) bool { return codes[a] < codes[b] })
	out.Series = make([]CurrencyVolume, 0, len(codes))
	for _, c := range codes {
		out.Series = append(out.Series, *byCurrency[c])
	}
	return out
}
