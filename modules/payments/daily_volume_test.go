package payments

import (
	"testing"
	"time"
)

func day(s string) time.Time {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return t
}

// Every currency gets one entry per day of the range, oldest first, zero where it had no
// payment; currencies sort by code; sums outside the range are dropped.
func TestDensify(t *testing.T) {
	from := day("2026-02-27")
	v := densify(from, 3, []DayTotal{
		{Day: day("2026-02-26"), Currency: "EUR", Amount: 999, Count: 9}, // before the range
		{Day: day("2026-02-27"), Currency: "USD", Amount: 500, Count: 1},
		{Day: day("2026-03-01"), Currency: "EUR", Amount: 1200, Count: 2},
		{Day: day("2026-02-28"), Currency: "EUR", Amount: 300, Count: 1},
		{Day: day("2026-03-02"), Currency: "EUR", Amount: 999, Count: 9}, // after it
	})
	if v.Days != 3 || !v.From.Equal(from) || !v.To.Equal(day("2026-03-01")) || len(v.Series) != 2 {
		t.Fatalf("range %+v", v)
	}
	eur, usd := v.Series[0], v.Series[1]
	if eur.Currency != "EUR" || usd.Currency != "USD" {
		t.Fatalf("order %s %s", eur.Currency, usd.Currency)
	}
	want := []int64{0, 300, 1200}
	for i, d := range eur.Days {
		if d.Amount != want[i] || !d.Day.Equal(from.AddDate(0, 0, i)) {
			t.Errorf("EUR day %d: %+v", i, d)
		}
	}
	if eur.Amount != 1500 || eur.Count != 3 || usd.Amount != 500 || usd.Days[0].Amount != 500 || usd.Days[2].Amount != 0 {
		t.Errorf("totals %+v %+v", eur, usd)
	}
	if empty := densify(from, 90, nil); len(empty.Series) != 0 || empty.Days != 90 {
		t.Errorf("empty %+v", empty)
	}
}

// The last day is the UTC day of the clock's time, whatever its zone.
func TestUTCDay(t *testing.T) {
	berlin := time.FixedZone("CET", 3600)
	if got := utcDay(time.Date(2026, 3, 1, 0, 30, 0, 0, berlin)); !got.Equal(day("2026-02-28")) {
		t.Errorf("utcDay = %s", got)
	}
}
