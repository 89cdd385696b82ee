package billing

import (
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
)

func TestMRRChartShowsUnrecordedDaysAsNoDataAndMissingCurrenciesAsZero(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2026, 11, d, 0, 0, 0, 0, time.UTC) }
	days := []MRRDay{
		{Day: day(2), MRR: []core.Money{core.NewMoney(900, "EUR")}},
		{Day: day(3)}, // recorded, nothing recurring
		{Day: day(4), MRR: []core.Money{core.NewMoney(900, "EUR"), core.NewMoney(500, "USD")}},
	}
	c := chartOf(day(1), day(5), days)
	if len(c.Series) != 2 || c.Series[0].Currency != "EUR" || c.Series[1].Currency != "USD" {
		t.Fatalf("series %+v", c.Series)
	}
	want := map[core.Currency][]*int64{}
	n := func(v int64) *int64 { return &v }
	want["EUR"] = []*int64{nil, n(900), n(0), n(900), nil}
	want["USD"] = []*int64{nil, n(0), n(0), n(500), nil}
	for _, s := range c.Series {
		if len(s.Points) != 5 {
			t.Fatalf("%s: %d points", s.Currency, len(s.Points))
		}
		for i, p := range s.Points {
			w := want[s.Currency][i]
			if !p.Day.Equal(day(1+i)) || (w == nil) != (p.Amount == nil) || (w != nil && *w != *p.Amount) {
				t.Fatalf("%s day %d: %v %v, want %v", s.Currency, i, p.Day, p.Amount, w)
			}
		}
	}
}

func TestNextMidnightIsStrictlyAfter(t *testing.T) {
	at := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	if got := NextMidnight(at); !got.Equal(at.Add(24 * time.Hour)) {
		t.Fatalf("NextMidnight(midnight) = %v", got)
	}
	if got := NextMidnight(at.Add(23 * time.Hour)); !got.Equal(at.Add(24 * time.Hour)) {
		t.Fatalf("NextMidnight(23:00) = %v", got)
	}
}
