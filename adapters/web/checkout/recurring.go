package checkoutweb

import (
	"fmt"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/checkout"
)

// recurringTerms words a subscription session's terms for its page: trial ("7-day free
// trial", empty without one) and recurring ("then 9.00 € every month"; "every 3 months" for
// a count above one).
func recurringTerms(t *checkout.RecurringTerms, amount int64, c core.Currency) (trial, recurring string) {
	if t == nil {
		return "", ""
	}
	every := "every " + t.Interval
	if t.IntervalCount > 1 {
		every = fmt.Sprintf("every %d %ss", t.IntervalCount, t.Interval)
	}
	recurring = "then " + FormatMoney(amount, c) + " " + every
	if t.TrialDays > 0 {
		trial = fmt.Sprintf("%d-day free trial", t.TrialDays)
	}
	return trial, recurring
}
