package checkoutweb

import (
	"testing"

	"github.com/kassa-pay/kassa/modules/checkout"
)

func TestRecurringTerms(t *testing.T) {
	for _, c := range []struct {
		terms            *checkout.RecurringTerms
		trial, recurring string
	}{
		{nil, "", ""},
		{&checkout.RecurringTerms{Interval: "month", IntervalCount: 1, TrialDays: 7}, "7-day free trial", "then 9.00 € every month"},
		{&checkout.RecurringTerms{Interval: "month", IntervalCount: 3}, "", "then 9.00 € every 3 months"},
		{&checkout.RecurringTerms{Interval: "year", IntervalCount: 1}, "", "then 9.00 € every year"},
	} {
		trial, rec := recurringTerms(c.terms, 900, "EUR")
		if trial != c.trial || rec != c.recurring {
			t.Errorf("%+v: %q, %q; want %q, %q", c.terms, trial, rec, c.trial, c.recurring)
		}
	}
}
