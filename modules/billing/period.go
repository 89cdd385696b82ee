package billing

import (
	"fmt"
	"time"
)

// Billing intervals of a recurring price (the catalog's, interface 2.5).
const (
	IntervalDay   = "day"
	IntervalWeek  = "week"
	IntervalMonth = "month"
	IntervalYear  = "year"
)

// Cycle is a subscription's billing cycle: every Count Intervals, anchored at Anchor (the
// subscription's creation, or its trial end). Periods are counted from the anchor, never from
// the previous period's end, so a month clamped to a short month's last day comes back to the
// anchor's day: anchored on 31 January, the boundaries are 28 (29) February, 31 March,
// 30 April, 31 May.
type Cycle struct {
	Anchor   time.Time
	Interval string
	Count    int
}

// Boundary is the end of the n-th period of the cycle (n ≥ 0; Boundary(0) is the anchor),
// at the anchor's time of day, in UTC.
func (c Cycle) Boundary(n int) (time.Time, error) {
	if c.Count < 1 || n < 0 {
		return time.Time{}, fmt.Errorf("billing: cycle count %d, period %d", c.Count, n)
	}
	a := c.Anchor.UTC()
	k := n * c.Count
	switch c.Interval {
	case IntervalDay:
		return a.AddDate(0, 0, k), nil
	case IntervalWeek:
		return a.AddDate(0, 0, 7*k), nil
	case IntervalMonth:
		return addMonthsClamped(a, k), nil
	case IntervalYear:
		return addMonthsClamped(a, 12*k), nil
	}
	return time.Time{}, fmt.Errorf("billing: unknown interval %q", c.Interval)
}

// PeriodAt is the period of the cycle that contains t (start ≤ t < end) and its number; a t
// before the anchor is in period 0's start. It walks from an estimate, so a cycle of many
// years costs a few steps.
func (c Cycle) PeriodAt(t time.Time) (n int, start, end time.Time, err error) {
	if !t.After(c.Anchor) {
		end, err = c.Boundary(1)
		return 0, c.Anchor.UTC(), end, err
	}
	// Estimate with the shortest possible period, then walk forward.
	minPeriod := map[string]time.Duration{IntervalDay: 23 * time.Hour, IntervalWeek: 7 * 23 * time.Hour,
		IntervalMonth: 28 * 23 * time.Hour, IntervalYear: 365 * 23 * time.Hour}[c.Interval]
	if minPeriod == 0 || c.Count < 1 {
		return 0, time.Time{}, time.Time{}, fmt.Errorf("billing: unknown cycle %q × %d", c.Interval, c.Count)
	}
	n = int(t.Sub(c.Anchor)/(minPeriod*time.Duration(c.Count))) + 1
	for n > 0 {
		b, err := c.Boundary(n)
		if err != nil {
			return 0, time.Time{}, time.Time{}, err
		}
		if !b.After(t) {
			break
		}
		n--
	}
	for {
		start, _ = c.Boundary(n)
		end, _ = c.Boundary(n + 1)
		if end.After(t) {
			return n, start, end, nil
		}
		n++
	}
}

// addMonthsClamped adds k calendar months to t; a day the target month lacks becomes its last
// day (31 January + 1 month = 28 or 29 February).
func addMonthsClamped(t time.Time, k int) time.Time {
	y, m, d := t.Date()
	first := time.Date(y, m+time.Month(k), 1, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
	last := first.AddDate(0, 1, -1).Day()
	if d > last {
		d = last
	}
	return time.Date(first.Year(), first.Month(), d, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
}
