package billing

import (
	"errors"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
)

func monthlySub(start time.Time, unit, qty int64) *Subscription {
	return RehydrateSubscription(SubscriptionSnapshot{ID: "sub_1", Status: StatusActive, PriceID: "price_monthly", Quantity: qty,
		UnitAmount: unit, Currency: "EUR", Interval: IntervalMonth, IntervalCount: 1, Anchor: start, PeriodStart: start,
		PeriodEnd: start.AddDate(0, 1, 0), Created: start, Metadata: map[string]string{}})
}

var testCustomer = &Customer{s: CustomerSnapshot{ID: "cus_1", Name: "Ada", Email: "ada@example.com"}}

// A change scheduled for the period end is shown with the period end, replaced by a newer
// one, cleared by a change back to the current plan, and made at the boundary: the renewal
// invoice bills the new plan.
func TestScheduleChangeIsMadeAtTheBoundary(t *testing.T) {
	start := time.Date(2028, 1, 31, 0, 0, 0, 0, time.UTC)
	s := monthlySub(start, 900, 3)
	s.s.PeriodEnd = time.Date(2028, 2, 29, 0, 0, 0, 0, time.UTC) // Jan 31 + a month, leap year
	now := start.AddDate(0, 0, 5)
	if ch, err := s.ScheduleChange(nil, 1, now); err != nil || !ch.Updated {
		t.Fatalf("%+v %v", ch, err)
	}
	if ch, _ := s.ScheduleChange(nil, 1, now); ch.Updated {
		t.Fatal("the same scheduled change again changed something")
	}
	sc := s.Scheduled()
	if sc == nil || sc.Quantity != 1 || !sc.EffectiveAt.Equal(time.Date(2028, 2, 29, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("scheduled %+v", sc)
	}
	if ch, _ := s.ScheduleChange(nil, 3, now); !ch.Updated || s.Scheduled() != nil {
		t.Fatal("a change back to the current plan did not clear the scheduled one")
	}
	yearly := &Price{ID: "price_yearly", Active: true, Recurring: true, Interval: IntervalYear, IntervalCount: 1, UnitAmount: 9000, Currency: "EUR"}
	if _, err := s.ScheduleChange(yearly, 2, now); err != nil {
		t.Fatal(err)
	}
	in, ch, carried, err := s.renewalInvoice(testCustomer)
	if err != nil || !ch.Updated || carried != 0 {
		t.Fatalf("%+v %v", ch, err)
	}
	if len(in.Lines) != 1 || in.Lines[0].PriceID != "price_yearly" || in.Lines[0].Quantity != 2 || in.Lines[0].UnitAmount != 9000 {
		t.Fatalf("lines %+v", in.Lines)
	}
	if err := s.StartRenewal("in_1"); err != nil {
		t.Fatal(err)
	}
	snap := s.Snapshot()
	boundary := time.Date(2028, 2, 29, 0, 0, 0, 0, time.UTC)
	if snap.PendingUpdate != nil || !snap.Anchor.Equal(boundary) || !snap.PeriodEnd.Equal(time.Date(2029, 2, 28, 0, 0, 0, 0, time.UTC)) ||
		snap.Interval != IntervalYear || s.Amount() != 18000 {
		t.Fatalf("after renewal %+v", snap)
	}
}

// create_prorations keeps the credit and the charge as two lines; the renewal invoice has
// them beside the period line, and StartRenewal consumes them. 1 → 3 of 900 with 20 of 30
// days left: −600 and +1800.
func TestKeptProrationsGoOnTheRenewal(t *testing.T) {
	start := time.Date(2027, 4, 1, 0, 0, 0, 0, time.UTC)
	s := monthlySub(start, 900, 1)
	at := start.AddDate(0, 0, 10)
	_, pr, err := s.ChangePlan(nil, 3, at)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.keepProration(pr, "price_monthly", 1, at); err != nil {
		t.Fatal(err)
	}
	in, ch, carried, err := s.renewalInvoice(testCustomer)
	if err != nil || ch.Updated || carried != 0 {
		t.Fatalf("%+v %v", ch, err)
	}
	var total int64
	for _, l := range in.Lines {
		total += l.Quantity * l.UnitAmount
	}
	if len(in.Lines) != 3 || in.Lines[1].UnitAmount != -600 || in.Lines[2].UnitAmount != 1800 || total != 2700+1200 {
		t.Fatalf("lines %+v", in.Lines)
	}
	if err := s.StartRenewal("in_1"); err != nil || len(s.PendingLines()) != 0 {
		t.Fatalf("not consumed: %v %+v", err, s.PendingLines())
	}
}

// A kept credit larger than the renewal is accepted, and the renewal carries the kept lines'
// net to the customer's balance instead of billing them: 10 → 1 of 900 an hour into a 30-day
// April keeps a credit of 9000 × 719/720 = 8987.5 → 8988 and a charge of 900 × 719/720 =
// 898.75 → 899, net −8089 against a 900 period.
func TestKeptCreditLargerThanTheRenewalIsCarried(t *testing.T) {
	start := time.Date(2027, 4, 1, 0, 0, 0, 0, time.UTC)
	s := monthlySub(start, 900, 10)
	at := start.Add(time.Hour)
	_, pr, err := s.ChangePlan(nil, 1, at)
	if err != nil || pr.Credit != 8988 || pr.Charge != 899 {
		t.Fatalf("proration %+v %v", pr, err)
	}
	if err := s.keepProration(pr, "price_monthly", 10, at); err != nil {
		t.Fatal(err)
	}
	if err := s.checkNextInvoice(); err != nil {
		t.Fatalf("a large kept credit is refused: %v", err)
	}
	in, _, carried, err := s.renewalInvoice(testCustomer)
	if err != nil || carried != -8089 || len(in.Lines) != 1 || in.Total() != 900 {
		t.Fatalf("carried %d, lines %+v, %v", carried, in.Lines, err)
	}
	// Kept lines that leave a chargeable renewal are billed on it as before: 10 → 9 keeps
	// −8988 + 8089 = −899 against a 8100 period.
	s = monthlySub(start, 900, 10)
	_, pr, _ = s.ChangePlan(nil, 9, at)
	if err := s.keepProration(pr, "price_monthly", 10, at); err != nil {
		t.Fatal(err)
	}
	if in, _, carried, err := s.renewalInvoice(testCustomer); err != nil || carried != 0 || len(in.Lines) != 3 || in.Total() != 8100-899 {
		t.Fatalf("carried %d, lines %+v, %v", carried, in.Lines, err)
	}
}

// Kept charges may not bring the next renewal invoice above the maximum amount.
func TestKeptProrationsKeepTheRenewalBelowTheMaximum(t *testing.T) {
	start := time.Date(2027, 4, 1, 0, 0, 0, 0, time.UTC)
	s := monthlySub(start, 9_000_000, 10)
	at := start.Add(time.Hour)
	_, pr, err := s.ChangePlan(nil, 11, at)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.keepProration(pr, "price_monthly", 10, at); err != nil {
		t.Fatal(err)
	}
	var ce *core.Error
	if err := s.checkNextInvoice(); !errors.As(err, &ce) || ce.Code != "renewal_amount_invalid" || ce.Param != "proration_behavior" {
		t.Fatalf("got %v", err)
	}
}

// Ending the subscription drops what was waiting for a renewal that will not come.
func TestEndDropsScheduledChangeAndKeptLines(t *testing.T) {
	start := time.Date(2027, 4, 1, 0, 0, 0, 0, time.UTC)
	s := monthlySub(start, 900, 1)
	s.s.PendingUpdate = &PendingUpdate{PriceID: "price_monthly", UnitAmount: 900, Quantity: 2, Interval: IntervalMonth, IntervalCount: 1}
	s.s.PendingLines = []InvoiceLine{{Description: "x", Quantity: 1, UnitAmount: 100}}
	if _, err := s.Cancel(false, start.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if s.Scheduled() != nil || len(s.PendingLines()) != 0 {
		t.Fatal("kept after the end")
	}
}

// The kept lines of a subscription that ends, now or at its period end, net to a credit or a
// charge the change answers (Kept, for the customer's balance), and every kept line ends with
// the subscription.
func TestEndAnswersTheKeptNet(t *testing.T) {
	start := time.Date(2027, 4, 1, 0, 0, 0, 0, time.UTC)
	lines := func(amounts ...int64) []InvoiceLine {
		var out []InvoiceLine
		for _, a := range amounts {
			out = append(out, InvoiceLine{Description: "x", Quantity: 1, UnitAmount: a})
		}
		return out
	}
	for _, c := range []struct {
		name    string
		amounts []int64
		want    int64
	}{
		{"a net charge", []int64{-600, 1800}, 1200},
		{"lines that cancel out", []int64{-857, 857}, 0},
		{"a net credit", []int64{-600, 1800, -1800, 400}, -200},
		{"a credit alone", []int64{-1200, 400}, -800},
		{"nothing kept", nil, 0},
	} {
		now := monthlySub(start, 900, 1)
		now.s.PendingLines = lines(c.amounts...)
		ch, err := now.Cancel(false, start.AddDate(0, 0, 20))
		if err != nil || !ch.Deleted || ch.Kept != c.want || len(now.PendingLines()) != 0 {
			t.Fatalf("%s, canceled now: %+v %v", c.name, ch, err)
		}
		atEnd := monthlySub(start, 900, 1)
		atEnd.s.PendingLines = lines(c.amounts...)
		if _, err := atEnd.Cancel(true, start.AddDate(0, 0, 20)); err != nil {
			t.Fatal(err)
		}
		ch, st, err := atEnd.ProcessDue(atEnd.s.PeriodEnd)
		if err != nil || st != StatusCanceled || !ch.Deleted || ch.Kept != c.want {
			t.Fatalf("%s, canceled at the period end: %+v %s %v", c.name, ch, st, err)
		}
	}
}
