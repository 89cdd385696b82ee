package billing

import (
	"testing"
	"time"
)

func day(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 9, 30, 15, 0, time.UTC) }

// Periods are anchored at creation: months add calendar months, clamped to the month's last
// day and re-anchored to the original day.
func TestPeriodsAreAnchoredAndMonthsClamped(t *testing.T) {
	cases := []struct {
		name  string
		cycle Cycle
		want  []time.Time // Boundary(0), Boundary(1), …
	}{
		{"Jan 31 monthly: Feb 28, Mar 31, Apr 30", Cycle{day(2027, 1, 31), IntervalMonth, 1},
			[]time.Time{day(2027, 1, 31), day(2027, 2, 28), day(2027, 3, 31), day(2027, 4, 30), day(2027, 5, 31)}},
		{"Jan 31 monthly in a leap year: Feb 29", Cycle{day(2028, 1, 31), IntervalMonth, 1},
			[]time.Time{day(2028, 1, 31), day(2028, 2, 29), day(2028, 3, 31)}},
		{"Jan 30 monthly: Feb 28, Mar 30", Cycle{day(2027, 1, 30), IntervalMonth, 1},
			[]time.Time{day(2027, 1, 30), day(2027, 2, 28), day(2027, 3, 30)}},
		{"Aug 31 quarterly: Nov 30, Feb 29, May 31", Cycle{day(2027, 8, 31), IntervalMonth, 3},
			[]time.Time{day(2027, 8, 31), day(2027, 11, 30), day(2028, 2, 29), day(2028, 5, 31)}},
		{"Dec 31 monthly across the year", Cycle{day(2026, 12, 31), IntervalMonth, 1},
			[]time.Time{day(2026, 12, 31), day(2027, 1, 31), day(2027, 2, 28)}},
		{"Feb 29 yearly: Feb 28, then Feb 29 again in a leap year", Cycle{day(2028, 2, 29), IntervalYear, 1},
			[]time.Time{day(2028, 2, 29), day(2029, 2, 28), day(2030, 2, 28), day(2031, 2, 28), day(2032, 2, 29)}},
		{"weekly", Cycle{day(2027, 3, 26), IntervalWeek, 2},
			[]time.Time{day(2027, 3, 26), day(2027, 4, 9), day(2027, 4, 23)}},
		{"daily across a month end", Cycle{day(2027, 2, 27), IntervalDay, 1},
			[]time.Time{day(2027, 2, 27), day(2027, 2, 28), day(2027, 3, 1)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for n, want := range c.want {
				got, err := c.cycle.Boundary(n)
				if err != nil || !got.Equal(want) {
					t.Errorf("boundary %d: %v %v, want %v", n, got, err, want)
				}
			}
		})
	}
}

func TestPeriodAtFindsThePeriodOfAnInstant(t *testing.T) {
	c := Cycle{day(2027, 1, 31), IntervalMonth, 1}
	cases := []struct {
		at         time.Time
		n          int
		start, end time.Time
	}{
		{day(2027, 1, 31), 0, day(2027, 1, 31), day(2027, 2, 28)},
		{day(2027, 2, 28).Add(-time.Second), 0, day(2027, 1, 31), day(2027, 2, 28)},
		{day(2027, 2, 28), 1, day(2027, 2, 28), day(2027, 3, 31)},
		{day(2027, 3, 30), 1, day(2027, 2, 28), day(2027, 3, 31)},
		{day(2029, 2, 28).Add(time.Hour), 25, day(2029, 2, 28), day(2029, 3, 31)},
	}
	for _, w := range cases {
		n, start, end, err := c.PeriodAt(w.at)
		if err != nil || n != w.n || !start.Equal(w.start) || !end.Equal(w.end) {
			t.Errorf("at %v: %d %v–%v %v, want %d %v–%v", w.at, n, start, end, err, w.n, w.start, w.end)
		}
	}
	for _, bad := range []Cycle{{day(2027, 1, 1), "fortnight", 1}, {day(2027, 1, 1), IntervalMonth, 0}} {
		if _, err := bad.Boundary(1); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}
