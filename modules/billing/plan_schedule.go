package billing

import (
	"context"
	"fmt"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// When a plan change takes effect (effective).
const (
	// EffectiveNow (the default): the change is made now, billed as proration_behavior says.
	EffectiveNow = "now"
	// EffectivePeriodEnd: the change is kept as the subscription's pending_update and made at
	// the end of the current period, with the renewal; nothing is prorated.
	EffectivePeriodEnd = "period_end"
)

// MaxPendingLines is how many proration lines a subscription keeps for its next renewal
// invoice (two per change billed with create_prorations).
const MaxPendingLines = 50

// Errors of scheduled changes and kept prorations.
var (
	// ErrEffective: an unknown effective.
	ErrEffective = core.NewError(core.TypeInvalidRequest, "effective_invalid", "effective",
		"effective must be one of now, period_end.")
	// ErrScheduledProration: a change at the period end is not prorated.
	ErrScheduledProration = core.NewError(core.TypeInvalidRequest, "proration_behavior_invalid", "proration_behavior",
		"A change with effective period_end is made at the period end and is not prorated; use proration_behavior none or leave it out.")
	// ErrScheduledNothing: effective period_end without a price_id or quantity to change.
	ErrScheduledNothing = core.NewError(core.TypeInvalidRequest, "parameter_missing", "price_id",
		"effective period_end schedules a plan change: give price_id and/or quantity.")
	// ErrPendingLinesFull: too many proration lines are waiting for the next renewal invoice.
	ErrPendingLinesFull = core.NewError(core.TypeInvalidRequest, "proration_lines_limit", "proration_behavior",
		"This subscription already keeps the most proration lines its next invoice may carry; use always_invoice.")
	// ErrRenewalAboveMaximum: the kept proration lines would bring the next renewal invoice
	// above the maximum amount. (A kept credit larger than the renewal is carried to the
	// customer's balance by the renewal: renewalInvoice.)
	ErrRenewalAboveMaximum = core.NewError(core.TypeInvalidRequest, "renewal_amount_invalid", "proration_behavior",
		"The proration lines kept for the next renewal would bring its invoice above the maximum amount; use always_invoice.")
)

// PendingUpdate is a plan change scheduled for the end of the current period: the price (with
// the unit amount and interval it had when scheduled) and the quantity.
type PendingUpdate struct {
	PriceID       string
	UnitAmount    int64
	Quantity      int64
	Interval      string
	IntervalCount int
}

// ScheduledChange is what the subscription shows of its pending_update: the change and when it
// takes effect (the end of the current period).
type ScheduledChange struct {
	PendingUpdate
	EffectiveAt time.Time
}

// Scheduled is the subscription's pending_update, nil when no change is scheduled.
func (s *Subscription) Scheduled() *ScheduledChange {
	if s.s.PendingUpdate == nil {
		return nil
	}
	return &ScheduledChange{PendingUpdate: *s.s.PendingUpdate, EffectiveAt: s.s.PeriodEnd}
}

// PendingLines are the proration lines kept for the next renewal invoice.
func (s *Subscription) PendingLines() []InvoiceLine {
	return append([]InvoiceLine(nil), s.s.PendingLines...)
}

// ScheduleChange keeps a change to price p (nil keeps the price) and quantity (0 keeps it) as
// the subscription's pending_update, made at the end of the current period with the renewal.
// It replaces a change scheduled before; a change back to the current plan clears it. An
// incomplete subscription has no period (ErrPlanNotChangeable).
func (s *Subscription) ScheduleChange(p *Price, quantity int64, now time.Time) (Change, error) {
	if s.s.Status.ended() {
		return Change{}, ErrSubscriptionEnded
	}
	if s.s.Status == StatusIncomplete {
		return Change{}, ErrPlanNotChangeable
	}
	if quantity == 0 {
		quantity = s.s.Quantity
	}
	u := PendingUpdate{PriceID: s.s.PriceID, UnitAmount: s.s.UnitAmount, Quantity: quantity, Interval: s.s.Interval,
		IntervalCount: s.s.IntervalCount}
	if p != nil {
		if p.Currency != s.s.Currency {
			return Change{}, ErrPlanCurrencyMismatch.Msg(
				"Price '%s' is in %s; the subscription is in %s.", p.ID, p.Currency, s.s.Currency)
		}
		q := *p
		if _, err := checkPrice(&q, quantity); err != nil {
			return Change{}, err
		}
		u = PendingUpdate{PriceID: p.ID, UnitAmount: p.UnitAmount, Quantity: quantity,
			Interval: p.Interval, IntervalCount: max(p.IntervalCount, 1)}
	} else if _, err := checkPrice(&Price{ID: s.s.PriceID, Active: true, Recurring: true, UnitAmount: s.s.UnitAmount,
		Currency: s.s.Currency}, quantity); err != nil {
		return Change{}, err
	}
	var next *PendingUpdate
	if u.PriceID != s.s.PriceID || u.UnitAmount != s.s.UnitAmount || u.Quantity != s.s.Quantity ||
		u.Interval != s.s.Interval || u.IntervalCount != s.s.IntervalCount {
		next = &u
	}
	if samePending(next, s.s.PendingUpdate) {
		return Change{}, nil
	}
	prev := s.s.PendingUpdate
	s.s.PendingUpdate = next
	if err := s.checkNextInvoice(); err != nil {
		s.s.PendingUpdate = prev
		return Change{}, err
	}
	s.s.Updated = now.UTC().Truncate(time.Second)
	return Change{Updated: true}, nil
}

func samePending(a, b *PendingUpdate) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// CancelScheduledChange drops the pending_update (DELETE /v1/subscriptions/{id}/pending_update);
// without one nothing changes.
func (s *Subscription) CancelScheduledChange(now time.Time) (Change, error) {
	if s.s.Status.ended() {
		return Change{}, ErrSubscriptionEnded
	}
	if s.s.PendingUpdate == nil {
		return Change{}, nil
	}
	s.s.PendingUpdate, s.s.Updated = nil, now.UTC().Truncate(time.Second)
	return Change{Updated: true}, nil
}

// dropScheduledChange clears the pending_update (a plan change made now replaces it) and
// reports whether there was one.
func (s *Subscription) dropScheduledChange() bool {
	had := s.s.PendingUpdate != nil
	s.s.PendingUpdate = nil
	return had
}

// TakeScheduledChange makes the pending_update at the period boundary (the renewal, or a
// period a pause lets pass): the subscription moves to its price and quantity, and a new
// interval starts its cycle at the boundary. It reports whether a change was made.
func (s *Subscription) TakeScheduledChange() bool {
	u := s.s.PendingUpdate
	if u == nil {
		return false
	}
	if u.Interval != s.s.Interval || u.IntervalCount != s.s.IntervalCount {
		s.s.Interval, s.s.IntervalCount, s.s.Anchor = u.Interval, u.IntervalCount, s.s.PeriodEnd
	}
	s.s.PriceID, s.s.UnitAmount, s.s.Quantity = u.PriceID, u.UnitAmount, u.Quantity
	s.s.PendingUpdate, s.s.Updated = nil, s.s.PeriodEnd
	return true
}

// keepProration keeps the proration pr of the change just made at (from oldPrice × oldQty to
// the subscription's current plan) as two lines of the next renewal invoice: the credit for
// the unused time on the old plan and the charge for the remaining time on the new one.
func (s *Subscription) keepProration(pr Proration, oldPrice string, oldQty int64, at time.Time) error {
	day := at.UTC().Format("2 Jan 2006")
	var lines []InvoiceLine
	if pr.Credit != 0 {
		lines = append(lines, InvoiceLine{Description: fmt.Sprintf("Unused time on %s × %d after %s", oldPrice, oldQty, day),
			PriceID: oldPrice, Quantity: 1, UnitAmount: -pr.Credit})
	}
	if pr.Charge != 0 {
		lines = append(lines, InvoiceLine{Description: fmt.Sprintf("Remaining time on %s × %d after %s", s.s.PriceID, s.s.Quantity, day),
			PriceID: s.s.PriceID, Quantity: 1, UnitAmount: pr.Charge})
	}
	if len(s.s.PendingLines)+len(lines) > MaxPendingLines {
		return ErrPendingLinesFull
	}
	s.s.PendingLines = append(s.s.PendingLines, lines...)
	return nil
}

// checkNextInvoice checks that the next renewal invoice (the period line at the plan it will
// bill, the scheduled one if any, and the kept proration lines) stays at most the maximum
// amount, so the renewal can always be made. One below the minimum charge is made all the
// same: the renewal carries the kept lines to the customer's balance (renewalInvoice).
func (s *Subscription) checkNextInvoice() error {
	if len(s.s.PendingLines) == 0 {
		return nil
	}
	total := s.Amount()
	if u := s.s.PendingUpdate; u != nil {
		total = u.UnitAmount * u.Quantity
	}
	for _, l := range s.s.PendingLines {
		total += l.Quantity * l.UnitAmount
	}
	if total > core.MaxAmount {
		return ErrRenewalAboveMaximum.Msg("The proration lines kept for the next renewal would make its invoice %s, above the maximum amount; use always_invoice.",
			core.FormatAmount(total, s.s.Currency))
	}
	return nil
}

// renewalInvoice is the content of the renewal invoice made at the period end: the change
// scheduled for it is made first (updated: customer.subscription.updated), then the invoice
// has the line of the period that starts, at the plan it now has, and the proration lines kept
// for it, which StartRenewal consumes in the same unit of work.
//
// Kept lines whose net credit would bring the invoice below the minimum charge (a large
// create_prorations downgrade: the credit exceeds the renewal, or leaves less than can be
// charged) are not put on the invoice: their net (negative) is answered as carried, for the
// caller to add to the customer's balance in the same unit of work before the invoice takes
// the balance. The invoice then bills the period alone and takes the credit as any invoice
// does (ApplyBalance): paid from it when it covers the period, the rest kept.
func (s *Subscription) renewalInvoice(customer *Customer) (in InvoiceInput, ch Change, carried int64, err error) {
	ch = Change{Updated: s.TakeScheduledChange()}
	next := RehydrateSubscription(s.Snapshot())
	if err := next.StartRenewal("pending"); err != nil {
		return InvoiceInput{}, Change{}, 0, err
	}
	in = next.invoiceInput(customer)
	var kept int64
	for _, l := range s.s.PendingLines {
		kept += l.Quantity * l.UnitAmount
	}
	if kept < 0 && in.Total()+kept < core.MinAmount {
		return in, ch, kept, nil
	}
	in.Lines = append(in.Lines, s.s.PendingLines...)
	return in, ch, 0, nil
}

// CancelScheduledChange drops the subscription's pending_update, with
// customer.subscription.updated (DELETE /v1/subscriptions/{id}/pending_update).
func (s *Service) CancelScheduledChange(ctx context.Context, scope core.Scope, id string) (*Subscription, error) {
	return s.change(ctx, scope, id, func(sub *Subscription, now time.Time) (Change, error) {
		return sub.CancelScheduledChange(now)
	})
}
