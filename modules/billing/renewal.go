package billing

import (
	"time"

	"github.com/kassa-pay/kassa/ports"
)

// Collection is the renewal invoice a subscription is collecting: made at RenewedAt, charged
// off-session by the sweep at NextCharge; Failures counts the failed charges. After a hard
// decline no charge is scheduled and the subscription goes unpaid at UnpaidAt unless paid.
type Collection struct {
	Invoice    string // in_…, "" when nothing is being collected
	RenewedAt  *time.Time
	NextCharge *time.Time
	Failures   int
	UnpaidAt   *time.Time
}

// Dunning stages of a failed renewal (the invoice's dunning_stage).
const (
	StageNotice    = "notice"
	StageWarning   = "warning"
	StageFinal     = "final"
	StageExhausted = "exhausted"
)

// RetrySchedule is when a failed renewal is charged again, counted from the renewal: the
// second attempt (warning), the third (final), the fourth (exhausted when it fails).
var RetrySchedule = []time.Duration{3 * 24 * time.Hour, 7 * 24 * time.Hour, 14 * 24 * time.Hour}

// Dunning is where a failed charge left the invoice: its stage and the next attempt (nil:
// none is scheduled).
type Dunning struct {
	Stage       string
	NextAttempt *time.Time
}

// declineStolenCard is the processor's decline code for a card reported stolen.
const declineStolenCard = "stolen_card"

// HardDecline reports whether a decline is not worth retrying on the schedule: the card is
// lost, stolen or expired, and only another method will pay.
func HardDecline(code string) bool {
	switch code {
	case ports.DeclineLostCard, declineStolenCard, ports.DeclineExpiredCard:
		return true
	}
	return false
}

func earliest(ts ...*time.Time) (time.Time, bool) {
	var out time.Time
	ok := false
	for _, t := range ts {
		if t != nil && (!ok || t.Before(out)) {
			out, ok = *t, true
		}
	}
	return out, ok
}

// RenewalDue reports whether the subscription's period ends at or before now with nothing
// else due first: a trialing or active subscription renews (the trial's end is its first
// charge).
func (s *Subscription) RenewalDue(now time.Time) bool {
	if (s.s.Status != StatusTrialing && s.s.Status != StatusActive) || s.s.Collection.Invoice != "" || s.s.CancelAtPeriodEnd || s.s.Pause != nil {
		return false
	}
	at, ok := s.DueAt()
	return ok && at.Equal(s.s.PeriodEnd) && !at.After(now)
}

// StartRenewal records the renewal invoice invoiceID made at the period end: the period
// advances (counted from the anchor), the invoice is the latest and is charged at once, and
// the proration lines kept for it are consumed (the invoice carries them).
func (s *Subscription) StartRenewal(invoiceID string) error {
	at := s.s.PeriodEnd
	_, start, end, err := Cycle{Anchor: s.s.Anchor, Interval: s.s.Interval, Count: s.s.IntervalCount}.PeriodAt(at)
	if err != nil {
		return err
	}
	id := invoiceID
	s.s.PeriodStart, s.s.PeriodEnd, s.s.LatestInvoice, s.s.Updated = start, end, &id, at
	s.s.Collection = Collection{Invoice: invoiceID, RenewedAt: &at, NextCharge: &at}
	s.s.PendingLines = nil
	return nil
}

// ChargeDue is the invoice to charge off-session and when, if a charge is due at or before now.
func (s *Subscription) ChargeDue(now time.Time) (invoiceID string, at time.Time, ok bool) {
	c := s.s.Collection
	if c.Invoice == "" || c.NextCharge == nil || c.NextCharge.After(now) || s.s.Status.ended() || s.s.Status == StatusUnpaid {
		return "", time.Time{}, false
	}
	if d, due := s.DueAt(); !due || d.Before(*c.NextCharge) {
		return "", time.Time{}, false // something else first (a cancellation at the period end)
	}
	return c.Invoice, *c.NextCharge, true
}

// InvoicePaid applies the paid invoice invoiceID at: the first invoice makes an incomplete
// subscription active with dm as its default; any other invoice makes dm (when not nil, the
// method saved paying it on its hosted page) the default of a subscription not ended; the
// invoice being collected ends its collection, and a past-due or unpaid subscription is
// active again. An unpaid one, or a past-due one whose period ended while it was collected
// (a daily or weekly price outlasts its period in dunning), resumes at the next period
// boundary after the payment, without billing the periods it missed.
func (s *Subscription) InvoicePaid(invoiceID string, dm *DefaultMethod, at time.Time) (Change, error) {
	at = at.UTC().Truncate(time.Second)
	if s.s.Status == StatusIncomplete {
		return s.FirstInvoicePaid(invoiceID, dm, at), nil
	}
	if s.s.Status.ended() {
		return Change{}, nil
	}
	var ch Change
	if dm != nil && (s.s.DefaultMethod == nil || s.s.DefaultMethod.ID != dm.ID) {
		s.s.DefaultMethod, s.s.Updated = dm, at
		ch.Updated = true
	}
	if s.s.Collection.Invoice != invoiceID {
		return ch, nil
	}
	if s.s.Status == StatusUnpaid || (s.s.Status == StatusPastDue && !s.s.PeriodEnd.After(at)) {
		_, start, end, err := Cycle{Anchor: s.s.Anchor, Interval: s.s.Interval, Count: s.s.IntervalCount}.PeriodAt(at)
		if err != nil {
			return Change{}, err
		}
		s.s.PeriodStart, s.s.PeriodEnd = start, end
	}
	s.s.Collection = Collection{}
	s.s.Status, s.s.Updated = StatusActive, at
	return Change{Updated: true}, nil
}

// ChargeFailed applies a failed off-session charge of the invoice being collected at: the
// subscription is past_due and the next attempt is scheduled (+3, +7, +14 days from the
// renewal); the last failure is exhausted and makes it unpaid at once. A hard decline is not
// retried: stage final, unpaid at the end of the window unless paid. A failure of another
// invoice, or of a charge the customer made themselves, changes nothing.
func (s *Subscription) ChargeFailed(invoiceID, declineCode string, at time.Time) (Change, Dunning) {
	c := &s.s.Collection
	if c.Invoice != invoiceID || c.RenewedAt == nil || s.s.Status.ended() || s.s.Status == StatusUnpaid {
		return Change{}, Dunning{}
	}
	at = at.UTC().Truncate(time.Second)
	c.Failures++
	s.s.Updated = at
	ch := Change{Updated: s.s.Status != StatusPastDue}
	s.s.Status = StatusPastDue
	if HardDecline(declineCode) && c.Failures <= len(RetrySchedule) {
		end := c.RenewedAt.Add(RetrySchedule[len(RetrySchedule)-1])
		c.NextCharge, c.UnpaidAt = nil, &end
		return ch, Dunning{Stage: StageFinal}
	}
	if c.Failures > len(RetrySchedule) {
		c.NextCharge, c.UnpaidAt = nil, nil
		s.s.Status = StatusUnpaid
		return Change{Updated: true}, Dunning{Stage: StageExhausted}
	}
	next := c.RenewedAt.Add(RetrySchedule[c.Failures-1])
	c.NextCharge = &next
	stage := []string{StageNotice, StageWarning, StageFinal}[c.Failures-1]
	return ch, Dunning{Stage: stage, NextAttempt: &next}
}

// CustomerAttemptFailed is a failed payment the customer made of invoiceID on its hosted page:
// not a dunning attempt, so the failures, the stage and the retry schedule stay. Only a retry
// that fell due while the customer's debit settled (and so waited for it) is scheduled again,
// at its time or now if that has passed; the answer is then the stage and that retry, else a
// zero Dunning (nothing changed).
func (s *Subscription) CustomerAttemptFailed(invoiceID string, at time.Time) Dunning {
	c := &s.s.Collection
	if c.Invoice != invoiceID || c.RenewedAt == nil || c.NextCharge != nil || c.UnpaidAt != nil ||
		s.s.Status != StatusPastDue || c.Failures < 1 || c.Failures > len(RetrySchedule) {
		return Dunning{}
	}
	at = at.UTC().Truncate(time.Second)
	next := c.RenewedAt.Add(RetrySchedule[c.Failures-1])
	if next.Before(at) {
		next = at
	}
	c.NextCharge, s.s.Updated = &next, at
	return Dunning{Stage: []string{StageNotice, StageWarning, StageFinal}[c.Failures-1], NextAttempt: &next}
}

// Collecting is the invoice being collected, "" when none.
func (s *Subscription) Collecting() string { return s.s.Collection.Invoice }

// DefaultMethodID is the saved method renewals charge, "" when none.
func (s *Subscription) DefaultMethodID() string {
	if s.s.DefaultMethod == nil {
		return ""
	}
	return s.s.DefaultMethod.ID
}

// DropCollection ends the collection of invoiceID, which is no longer open (voided or paid
// elsewhere): nothing is charged any more. It reports whether anything changed.
func (s *Subscription) DropCollection(invoiceID string, at time.Time) bool {
	if s.s.Collection.Invoice != invoiceID {
		return false
	}
	s.s.Collection, s.s.Updated = Collection{}, at.UTC().Truncate(time.Second)
	return true
}

// AwaitSettlement stops charging invoiceID while its debit settles (SEPA): the settlement
// pays it or counts as a failed attempt. It reports whether anything changed.
func (s *Subscription) AwaitSettlement(invoiceID string) bool {
	if s.s.Collection.Invoice != invoiceID || s.s.Collection.NextCharge == nil {
		return false
	}
	s.s.Collection.NextCharge = nil
	return true
}
