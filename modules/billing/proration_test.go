package billing

import (
	"testing"
	"time"
)

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// The figures below are computed by hand: unused/total seconds of the period, times the
// amount, rounded half-up.
func TestProrate(t *testing.T) {
	cases := []struct {
		name                string
		start, end, at      string
		old, new            int64
		restart             bool
		unused, total       int64
		credit, charge, net int64
	}{
		// Leap February: 31 Jan → 29 Feb 2024 is 29 days (2,505,600 s); at 15 Feb 12:00, 13.5
		// days (1,166,400 s) remain. A price of 900 changed to one of 1900:
		// 900 × 13.5/29 = 418.97 → 419; 1900 × 13.5/29 = 884.48 → 884.
		{"leap February, upgrade", "2024-01-31T00:00:00Z", "2024-02-29T00:00:00Z", "2024-02-15T12:00:00Z",
			900, 1900, false, 1_166_400, 2_505_600, 419, 884, 465},
		// Common February: 31 Jan → 28 Feb 2023, 28 days; at 14 Feb, 14 days remain: exactly half.
		{"common February, half", "2023-01-31T00:00:00Z", "2023-02-28T00:00:00Z", "2023-02-14T00:00:00Z",
			900, 1900, false, 1_209_600, 2_419_200, 450, 950, 500},
		// 31 Mar → 30 Apr 2025 (30 days, 2,592,000 s); at 10 Apr 08:30:15, 1,697,385 s remain.
		// Quantity 3 → 1 of 1000: 3000 × 1697385/2592000 = 1964.57 → 1965; 1000 × … = 654.86 → 655.
		// The credit is larger than the charge: net −1310.
		{"quantity down, credit larger", "2025-03-31T00:00:00Z", "2025-04-30T00:00:00Z", "2025-04-10T08:30:15Z",
			3000, 1000, false, 1_697_385, 2_592_000, 1965, 655, -1310},
		// Leap year 2024 (366 days, 31,622,400 s); at 1 Mar, 306 days (26,438,400 s) remain.
		// 10000 × 306/366 = 8360.66 → 8361; 20000 × 306/366 = 16721.31 → 16721.
		{"leap year", "2024-01-01T00:00:00Z", "2025-01-01T00:00:00Z", "2024-03-01T00:00:00Z",
			10000, 20000, false, 26_438_400, 31_622_400, 8361, 16721, 8360},
		// Exactly half of an odd amount rounds up: 1001 / 2 = 500.5 → 501 (and 3 / 2 → 2).
		{"half rounds up", "2025-06-01T00:00:00Z", "2025-06-03T00:00:00Z", "2025-06-02T00:00:00Z",
			1001, 3, false, 86_400, 172_800, 501, 2, -499},
		// By the second: one second left of a 30-day month of 2,592,000: 1000 × 1/2592000 → 0.
		{"last second", "2025-04-01T00:00:00Z", "2025-05-01T00:00:00Z", "2025-04-30T23:59:59Z",
			1000, 99_999_999, false, 1, 2_592_000, 0, 39, 39},
		// At the period's first second the whole period is unused.
		{"first second", "2025-04-01T00:00:00Z", "2025-05-01T00:00:00Z", "2025-04-01T00:00:00Z",
			1000, 2500, false, 2_592_000, 2_592_000, 1000, 2500, 1500},
		// A change of interval: credit for the unused month, the new yearly amount in full.
		// 30-day April, 20 days left: 1000 × 20/30 = 666.67 → 667; charge 10000.
		{"interval change restarts", "2025-04-01T00:00:00Z", "2025-05-01T00:00:00Z", "2025-04-11T00:00:00Z",
			1000, 10000, true, 1_728_000, 2_592_000, 667, 10000, 9333},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Prorate(ProrationInput{PeriodStart: utc(c.start), PeriodEnd: utc(c.end), At: utc(c.at),
				OldAmount: c.old, NewAmount: c.new, IntervalChanged: c.restart})
			if err != nil {
				t.Fatal(err)
			}
			want := Proration{Credit: c.credit, Charge: c.charge, Net: c.net, Unused: c.unused, Total: c.total, Restart: c.restart}
			if p != want {
				t.Fatalf("got %+v, want %+v", p, want)
			}
		})
	}
}

func TestProrateOutsideThePeriod(t *testing.T) {
	start, end := utc("2025-04-01T00:00:00Z"), utc("2025-05-01T00:00:00Z")
	for _, at := range []time.Time{end, end.Add(time.Hour), start.Add(-time.Second)} {
		if _, err := Prorate(ProrationInput{PeriodStart: start, PeriodEnd: end, At: at, OldAmount: 1, NewAmount: 1}); err == nil {
			t.Errorf("at %s: no error", at)
		}
	}
	if _, err := Prorate(ProrationInput{PeriodStart: start, PeriodEnd: end, At: start, OldAmount: -1, NewAmount: 1}); err == nil {
		t.Error("negative amount: no error")
	}
}
