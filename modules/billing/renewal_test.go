package billing_test

import (
	"testing"
	"time"

	"github.com/kassa-pay/kassa/modules/billing"
)

// active is an active monthly subscription whose period ends at end.
func active(start, end time.Time) *billing.Subscription {
	return billing.RehydrateSubscription(billing.SubscriptionSnapshot{ID: "sub_1", Scope: scope, Status: billing.StatusActive,
		Interval: billing.IntervalMonth, IntervalCount: 1, UnitAmount: 900, Quantity: 1, Anchor: start, PeriodStart: start,
		PeriodEnd: end, Created: start, Metadata: map[string]string{},
		DefaultMethod: &billing.DefaultMethod{ID: "pm_1"}})
}

func TestRenewalAdvancesThePeriodAndChargesAtOnce(t *testing.T) {
	start := time.Date(2027, 1, 31, 9, 0, 0, 0, time.UTC)
	end := time.Date(2027, 2, 28, 9, 0, 0, 0, time.UTC)
	s := active(start, end)
	if at, ok := s.DueAt(); !ok || !at.Equal(end) || s.RenewalDue(end.Add(-time.Second)) || !s.RenewalDue(end) {
		t.Fatalf("renewal due at %v %v", at, ok)
	}
	if err := s.StartRenewal("in_2"); err != nil {
		t.Fatal(err)
	}
	snap := s.Snapshot()
	if !snap.PeriodStart.Equal(end) || !snap.PeriodEnd.Equal(time.Date(2027, 3, 31, 9, 0, 0, 0, time.UTC)) || *snap.LatestInvoice != "in_2" {
		t.Fatalf("after the renewal %+v", snap)
	}
	if inv, at, ok := s.ChargeDue(end); !ok || inv != "in_2" || !at.Equal(end) {
		t.Fatalf("charge due %v %v %v", inv, at, ok)
	}
	ch, err := s.InvoicePaid("in_2", nil, end)
	if err != nil || !ch.Updated || s.Status() != billing.StatusActive || s.Collecting() != "" {
		t.Fatalf("paid %+v %v", ch, err)
	}
	if at, _ := s.DueAt(); !at.Equal(snap.PeriodEnd) {
		t.Fatalf("next due %v", at)
	}
}

func TestDunningSchedule(t *testing.T) {
	start := time.Date(2027, 1, 10, 9, 0, 0, 0, time.UTC)
	end := start.AddDate(0, 1, 0)
	s := active(start, end)
	if err := s.StartRenewal("in_2"); err != nil {
		t.Fatal(err)
	}
	day := 24 * time.Hour
	want := []struct {
		stage string
		next  time.Duration
	}{{billing.StageNotice, 3 * day}, {billing.StageWarning, 7 * day}, {billing.StageFinal, 14 * day}}
	at := end
	for i, w := range want {
		ch, d := s.ChargeFailed("in_2", "generic_decline", at)
		if d.Stage != w.stage || d.NextAttempt == nil || !d.NextAttempt.Equal(end.Add(w.next)) || s.Status() != billing.StatusPastDue {
			t.Fatalf("failure %d: %+v %+v %s", i+1, ch, d, s.Status())
		}
		if ch.Updated != (i == 0) {
			t.Fatalf("failure %d: updated %v", i+1, ch.Updated)
		}
		if due, _ := s.DueAt(); !due.Equal(*d.NextAttempt) {
			t.Fatalf("failure %d: due %v", i+1, due)
		}
		at = *d.NextAttempt
	}
	ch, d := s.ChargeFailed("in_2", "generic_decline", at)
	if d.Stage != billing.StageExhausted || d.NextAttempt != nil || s.Status() != billing.StatusUnpaid || !ch.Updated {
		t.Fatalf("last failure %+v %+v %s", ch, d, s.Status())
	}
	if _, ok := s.DueAt(); ok {
		t.Fatal("an unpaid subscription is due")
	}
	// Paid 40 days later: active again from the period that holds the payment, no back-billing.
	paid := at.Add(40 * day)
	if ch, err := s.InvoicePaid("in_2", nil, paid); err != nil || !ch.Updated || s.Status() != billing.StatusActive {
		t.Fatalf("recovered %+v %v", ch, err)
	}
	snap := s.Snapshot()
	if snap.PeriodStart.After(paid) || !snap.PeriodEnd.After(paid) || snap.PeriodEnd.Sub(snap.PeriodStart) > 31*day {
		t.Fatalf("period after recovery %v – %v (paid %v)", snap.PeriodStart, snap.PeriodEnd, paid)
	}
}

func TestHardDeclineIsNotRetried(t *testing.T) {
	start := time.Date(2027, 1, 10, 9, 0, 0, 0, time.UTC)
	end := start.AddDate(0, 1, 0)
	for _, code := range []string{"lost_card", "stolen_card", "expired_card"} {
		s := active(start, end)
		if err := s.StartRenewal("in_2"); err != nil {
			t.Fatal(err)
		}
		_, d := s.ChargeFailed("in_2", code, end)
		if d.Stage != billing.StageFinal || d.NextAttempt != nil {
			t.Fatalf("%s: %+v", code, d)
		}
		window := end.Add(14 * 24 * time.Hour)
		if at, ok := s.DueAt(); !ok || !at.Equal(window) {
			t.Fatalf("%s: due %v", code, at)
		}
		if _, _, ok := s.ChargeDue(window); ok {
			t.Fatalf("%s: a hard decline is charged again", code)
		}
		ch, st, _ := s.ProcessDue(window)
		if st != billing.StatusUnpaid || !ch.Updated {
			t.Fatalf("%s: at the window's end %s", code, st)
		}
	}
}

func TestAFailureOfAnotherInvoiceChangesNothing(t *testing.T) {
	start := time.Date(2027, 1, 10, 9, 0, 0, 0, time.UTC)
	s := active(start, start.AddDate(0, 1, 0))
	if ch, d := s.ChargeFailed("in_other", "generic_decline", start); ch.Updated || d.Stage != "" {
		t.Fatalf("%+v %+v", ch, d)
	}
}

func TestDunningSubjects(t *testing.T) {
	subj := billing.DunningSubject("in_1", billing.StageFinal, true)
	id, stage, hard, ok := billing.ParseDunningSubject(subj)
	if !ok || id != "in_1" || stage != billing.StageFinal || !hard {
		t.Fatalf("%q: %v %v %v %v", subj, id, stage, hard, ok)
	}
	renewed := time.Date(2027, 1, 10, 9, 0, 0, 0, time.UTC)
	if next, ok := billing.NextAttemptAfter(billing.StageWarning, false, renewed); !ok || !next.Equal(renewed.AddDate(0, 0, 7)) {
		t.Fatalf("warning's next %v", next)
	}
	if _, ok := billing.NextAttemptAfter(billing.StageFinal, true, renewed); ok {
		t.Fatal("a hard decline announces a retry")
	}
}

// A failed debit the customer made on the hosted page is no dunning attempt: the schedule
// stays while the retry is still ahead; a retry that fell due while the debit settled (and
// waited for it) is made at once; after a hard decline nothing is rescheduled.
func TestCustomerAttemptKeepsTheDunningSchedule(t *testing.T) {
	start := time.Date(2027, 1, 10, 9, 0, 0, 0, time.UTC)
	end := start.AddDate(0, 1, 0)
	day := 24 * time.Hour
	s := active(start, end)
	if err := s.StartRenewal("in_2"); err != nil {
		t.Fatal(err)
	}
	s.ChargeFailed("in_2", "generic_decline", end)
	if d := s.CustomerAttemptFailed("in_2", end.Add(day)); d.Stage != "" {
		t.Fatalf("retry still scheduled, yet changed: %+v", d)
	}
	if inv, at, ok := s.ChargeDue(end.Add(3 * day)); !ok || inv != "in_2" || !at.Equal(end.Add(3*day)) {
		t.Fatalf("retry moved: %v %v %v", inv, at, ok)
	}
	// The retry falls due while the customer's debit settles: it waits, then runs at once.
	if !s.AwaitSettlement("in_2") {
		t.Fatal("the retry did not wait for the debit")
	}
	failed := end.Add(3*day + time.Hour)
	d := s.CustomerAttemptFailed("in_2", failed)
	if d.Stage != billing.StageNotice || d.NextAttempt == nil || !d.NextAttempt.Equal(failed) || s.Status() != billing.StatusPastDue {
		t.Fatalf("after the customer's failed debit: %+v %s", d, s.Status())
	}
	// After a hard decline the customer's failure schedules nothing.
	h := active(start, end)
	if err := h.StartRenewal("in_3"); err != nil {
		t.Fatal(err)
	}
	h.ChargeFailed("in_3", "expired_card", end)
	if d := h.CustomerAttemptFailed("in_3", end.Add(day)); d.Stage != "" {
		t.Fatalf("a hard decline rescheduled: %+v", d)
	}
}

// A weekly subscription whose period ends while it is past due resumes, once paid, at the
// next boundary after the payment: the weeks it missed are not billed.
func TestPastDueWeeklyPaidLateResumesWithoutCatchUp(t *testing.T) {
	start := time.Date(2027, 1, 4, 9, 0, 0, 0, time.UTC)
	end := start.AddDate(0, 0, 7)
	snap := active(start, end).Snapshot()
	snap.Interval = billing.IntervalWeek
	s := billing.RehydrateSubscription(snap)
	if err := s.StartRenewal("in_2"); err != nil {
		t.Fatal(err)
	}
	s.ChargeFailed("in_2", "generic_decline", end) // renewal: period end+0 … end+7d
	paid := end.AddDate(0, 0, 10)
	if _, err := s.InvoicePaid("in_2", nil, paid); err != nil {
		t.Fatal(err)
	}
	got := s.Snapshot()
	if s.Status() != billing.StatusActive || !got.PeriodStart.Equal(end.AddDate(0, 0, 7)) || !got.PeriodEnd.Equal(end.AddDate(0, 0, 14)) {
		t.Fatalf("after paying late: %s %v – %v", s.Status(), got.PeriodStart, got.PeriodEnd)
	}
	if s.RenewalDue(paid) {
		t.Fatal("a missed week is billed")
	}
}

func TestInvoicePaidWithASavedMethodMakesItTheDefault(t *testing.T) {
	start := time.Date(2027, 1, 10, 9, 0, 0, 0, time.UTC)
	end := start.AddDate(0, 1, 0)
	s := active(start, end)
	if err := s.StartRenewal("in_2"); err != nil {
		t.Fatal(err)
	}
	if _, d := s.ChargeFailed("in_2", "expired_card", end); d.Stage == "" {
		t.Fatal("the failed renewal left no dunning stage")
	}
	// Paid on the hosted page with another card: active, the card is the default.
	ch, err := s.InvoicePaid("in_2", &billing.DefaultMethod{ID: "pm_2"}, end.Add(time.Hour))
	if err != nil || !ch.Updated || s.Status() != billing.StatusActive || s.DefaultMethodID() != "pm_2" || s.Collecting() != "" {
		t.Fatalf("paid %+v %v: %s %s", ch, err, s.Status(), s.DefaultMethodID())
	}
	// Another invoice paid with the same method changes nothing; with a new one, the default.
	if ch, _ := s.InvoicePaid("in_1", &billing.DefaultMethod{ID: "pm_2"}, end.Add(2*time.Hour)); ch.Updated {
		t.Fatal("the same default again is a change")
	}
	if ch, _ := s.InvoicePaid("in_1", &billing.DefaultMethod{ID: "pm_3"}, end.Add(2*time.Hour)); !ch.Updated || s.DefaultMethodID() != "pm_3" {
		t.Fatalf("a new default %+v %s", ch, s.DefaultMethodID())
	}
	// Without a saved method an old invoice changes nothing.
	if ch, _ := s.InvoicePaid("in_1", nil, end.Add(3*time.Hour)); ch.Updated || s.DefaultMethodID() != "pm_3" {
		t.Fatalf("no method %+v %s", ch, s.DefaultMethodID())
	}
}
