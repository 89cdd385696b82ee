package billing

import (
	"testing"

	"github.com/kassa-pay/kassa/core"
)

func TestSummarizeRecurringNormalisesToAMonth(t *testing.T) {
	gs := []RecurringGroup{
		{Status: StatusActive, Currency: "EUR", Interval: IntervalMonth, IntervalCount: 1, Count: 2, Amount: 1800},
		{Status: StatusPastDue, Currency: "EUR", Interval: IntervalYear, IntervalCount: 1, Count: 1, Amount: 12000},
		// every 3 months: 1000 / 3 = 333.33…
		{Status: StatusActive, Currency: "EUR", Interval: IntervalMonth, IntervalCount: 3, Count: 1, Amount: 1000},
		// weekly 100 → 100 × 52 / 12 = 433.33…; daily 10 → 10 × 365 / 12 = 304.1666…
		{Status: StatusActive, Currency: "USD", Interval: IntervalWeek, IntervalCount: 1, Count: 1, Amount: 100},
		{Status: StatusActive, Currency: "USD", Interval: IntervalDay, IntervalCount: 1, Count: 1, Amount: 10},
		// every 2 weeks 3: 3 × 52 / 24 = 6.5 (exact half, alone it would round up)
		{Status: StatusActive, Currency: "GBP", Interval: IntervalWeek, IntervalCount: 2, Count: 1, Amount: 3},
		// ignored statuses
		{Status: StatusTrialing, Currency: "EUR", Interval: IntervalMonth, IntervalCount: 1, Count: 5, Amount: 9999},
	}
	got, err := SummarizeRecurring(gs)
	if err != nil {
		t.Fatal(err)
	}
	if got.ActiveCount != 6 || got.PastDueCount != 1 {
		t.Fatalf("counts %d/%d, want 6/1", got.ActiveCount, got.PastDueCount)
	}
	// EUR: 1800 + 1000 + 333.33… = 3133.33… → 3133; GBP 6.5 → 7; USD 433.33… + 304.1666… = 737.5 → 738.
	want := []core.Money{core.NewMoney(3133, "EUR"), core.NewMoney(7, "GBP"), core.NewMoney(738, "USD")}
	if len(got.MRR) != len(want) {
		t.Fatalf("mrr %v, want %v", got.MRR, want)
	}
	for i := range want {
		if got.MRR[i] != want[i] {
			t.Fatalf("mrr[%d] = %v, want %v", i, got.MRR[i], want[i])
		}
	}
}

func TestSummarizeRecurringRefusesAnUnknownCycle(t *testing.T) {
	if _, err := SummarizeRecurring([]RecurringGroup{{Status: StatusActive, Currency: "EUR", Interval: "fortnight", IntervalCount: 1}}); err == nil {
		t.Fatal("an unknown interval was summed")
	}
}

func TestSummarizeRecurringCountsPausedButAddsNoRevenue(t *testing.T) {
	gs := []RecurringGroup{
		{Status: StatusActive, Currency: "EUR", Interval: IntervalMonth, IntervalCount: 1, Count: 1, Amount: 900},
		{Status: StatusActive, Currency: "EUR", Interval: IntervalMonth, IntervalCount: 1, Paused: true, Count: 2, Amount: 5000},
		{Status: StatusPastDue, Currency: "USD", Interval: IntervalMonth, IntervalCount: 1, Paused: true, Count: 1, Amount: 700},
	}
	got, err := SummarizeRecurring(gs)
	if err != nil {
		t.Fatal(err)
	}
	if got.ActiveCount != 3 || got.PastDueCount != 1 {
		t.Fatalf("counts %d/%d, want 3/1", got.ActiveCount, got.PastDueCount)
	}
	if len(got.MRR) != 1 || got.MRR[0] != core.NewMoney(900, "EUR") {
		t.Fatalf("mrr %v, want only EUR 900", got.MRR)
	}
}
