package billing

import (
	"crypto/subtle"
	"fmt"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// Status is a subscription's state (interface 3.4).
type Status string

const (
	StatusIncomplete        Status = "incomplete"
	StatusIncompleteExpired Status = "incomplete_expired"
	StatusTrialing          Status = "trialing"
	StatusActive            Status = "active"
	StatusPastDue           Status = "past_due"
	StatusUnpaid            Status = "unpaid"
	StatusCanceled          Status = "canceled"
)

// Valid reports whether s is a known status.
func (s Status) Valid() bool {
	switch s {
	case StatusIncomplete, StatusIncompleteExpired, StatusTrialing, StatusActive, StatusPastDue, StatusUnpaid, StatusCanceled:
		return true
	}
	return false
}

// ended: no further change but reads.
func (s Status) ended() bool { return s == StatusCanceled || s == StatusIncompleteExpired }

// Limits of a subscription (D14).
const (
	MaxQuantity  = 10_000
	MaxTrialDays = 730
	// FirstPaymentWindow is how long an incomplete subscription waits for its first payment.
	FirstPaymentWindow = 23 * time.Hour
)

// Price is what a subscription needs of its catalog price.
type Price struct {
	ID              string
	Active          bool
	Recurring       bool
	Interval        string
	IntervalCount   int
	UsageType       string // licensed | metered
	TrialPeriodDays *int
	UnitAmount      int64
	Currency        core.Currency
	ProductID       string
}

// CreateInput is the body of POST /v1/subscriptions.
type CreateInput struct {
	PriceID       string
	CustomerName  string
	CustomerEmail string
	Quantity      *int64
	TrialDays     *int64
	Metadata      map[string]string
}

// Subscription is a customer's recurring purchase of a price (sub_…).
type Subscription struct {
	s SubscriptionSnapshot
}

// SubscriptionSnapshot is a subscription's full state, for storage.
type SubscriptionSnapshot struct {
	ID            string
	Scope         core.Scope
	Status        Status
	Customer      string
	PriceID       string
	Quantity      int64
	Currency      core.Currency
	UnitAmount    int64
	Interval      string
	IntervalCount int
	Anchor        time.Time // periods are counted from here: creation, or trial end
	PeriodStart   time.Time
	PeriodEnd     time.Time
	TrialStart    *time.Time
	TrialEnd      *time.Time
	LatestInvoice *string
	// PaymentIntent is the first payment's id (pi_…), "" when the subscription has none yet;
	// ClientSecret confirms it in the customer's browser.
	PaymentIntent string
	ClientSecret  *string
	// TrialNotified: customer.subscription.trial_will_end has been written.
	TrialNotified     bool
	DefaultMethod     *DefaultMethod // the saved method renewals charge, nil until the first payment
	CancelAtPeriodEnd bool
	CanceledAt        *time.Time
	EndedAt           *time.Time
	Metadata          map[string]string
	Created, Updated  time.Time
	// Collection is the renewal invoice being collected, and its dunning.
	Collection Collection
	// Pause is the subscription's paused collection, nil when it is not paused (pause.go).
	Pause *PauseCollection
	// PendingUpdate is the plan change scheduled for the period end, nil when none
	// (plan_schedule.go); PendingLines the proration lines kept for the next renewal invoice.
	PendingUpdate *PendingUpdate
	PendingLines  []InvoiceLine
}

// checkCreate checks the request fields that need no catalog, in the order of the table.
func checkCreate(in CreateInput) (quantity int64, err error) {
	if in.PriceID == "" {
		return 0, core.MissingField("price_id")
	}
	if in.CustomerName == "" {
		return 0, core.MissingField("customer_name")
	}
	if err := CheckName(in.CustomerName, "customer_name"); err != nil {
		return 0, err
	}
	if in.CustomerEmail == "" {
		return 0, core.MissingField("customer_email")
	}
	if err := CheckEmail(in.CustomerEmail, "customer_email"); err != nil {
		return 0, err
	}
	quantity = 1
	if in.Quantity != nil {
		quantity = *in.Quantity
		if quantity < 1 || quantity > MaxQuantity {
			return 0, core.InvalidField("quantity", "quantity must be between 1 and %d.", MaxQuantity)
		}
	}
	if in.TrialDays != nil && (*in.TrialDays < 0 || *in.TrialDays > MaxTrialDays) {
		return 0, core.InvalidField("trial_days", "trial_days must be between 0 and %d.", MaxTrialDays)
	}
	if err := core.CheckMetadata(in.Metadata, "metadata"); err != nil {
		return 0, err
	}
	return quantity, nil
}

// checkPrice checks the catalog price for a subscription of quantity and answers the amount.
func checkPrice(p *Price, quantity int64) (int64, error) {
	if !p.Recurring {
		return 0, ErrPriceNotRecurring.Msg("Price '%s' is not recurring; a subscription needs a recurring price.", p.ID)
	}
	if !p.Active {
		return 0, ErrPriceInactive.Msg("Price '%s' is not active.", p.ID)
	}
	if p.UsageType != "" && p.UsageType != "licensed" {
		return 0, ErrPriceMetered.Msg("Price '%s' is metered; subscriptions support licensed prices only.", p.ID)
	}
	if p.UnitAmount > 0 && quantity > core.MaxAmount/p.UnitAmount {
		return 0, core.ErrAmountTooLarge.At("quantity")
	}
	amount := p.UnitAmount * quantity
	if err := core.CheckAmountIn(amount, p.Currency, "quantity"); err != nil {
		return 0, err
	}
	return amount, nil
}

// NewSubscription opens the incomplete subscription of customer to price p (already checked
// by checkPrice) at now. Its periods are anchored at now; with a trial the first period ends
// at trial_end and later ones are counted from it.
func NewSubscription(scope core.Scope, customer *Customer, p *Price, in CreateInput, quantity int64, now time.Time) (*Subscription, error) {
	now = now.UTC().Truncate(time.Second)
	trial := 0
	if p.TrialPeriodDays != nil {
		trial = *p.TrialPeriodDays
	}
	if in.TrialDays != nil {
		trial = int(*in.TrialDays)
	}
	md := map[string]string{}
	for k, v := range in.Metadata {
		md[k] = v
	}
	s := SubscriptionSnapshot{ID: core.NewID("sub_"), Scope: scope, Status: StatusIncomplete, Customer: customer.ID(),
		PriceID: p.ID, Quantity: quantity, Currency: p.Currency, UnitAmount: p.UnitAmount, Interval: p.Interval,
		IntervalCount: p.IntervalCount, Anchor: now, PeriodStart: now, Metadata: md, Created: now, Updated: now}
	if s.IntervalCount < 1 {
		s.IntervalCount = 1
	}
	if trial > 0 {
		end := now.AddDate(0, 0, trial)
		s.TrialStart, s.TrialEnd, s.Anchor, s.PeriodEnd = &now, &end, end, end
		// The first payment of a trial only saves the payment method; the customer's browser
		// confirms it with the client secret.
		s.PaymentIntent = core.NewID("pi_")
		secret := s.PaymentIntent + "_secret_" + core.NewSecretPart()
		s.ClientSecret = &secret
	} else {
		end, err := Cycle{Anchor: now, Interval: s.Interval, Count: s.IntervalCount}.Boundary(1)
		if err != nil {
			return nil, fmt.Errorf("billing: price %s: %w", p.ID, err)
		}
		s.PeriodEnd = end
	}
	return &Subscription{s: s}, nil
}

// RehydrateSubscription rebuilds a stored subscription without re-validating it.
func RehydrateSubscription(s SubscriptionSnapshot) *Subscription {
	return &Subscription{s: cloneSnapshot(s)}
}

// Snapshot returns a copy of the subscription's state.
func (s *Subscription) Snapshot() SubscriptionSnapshot { return cloneSnapshot(s.s) }

func cloneSnapshot(s SubscriptionSnapshot) SubscriptionSnapshot {
	md := make(map[string]string, len(s.Metadata))
	for k, v := range s.Metadata {
		md[k] = v
	}
	s.Metadata = md
	s.TrialStart, s.TrialEnd, s.CanceledAt, s.EndedAt = copyTime(s.TrialStart), copyTime(s.TrialEnd), copyTime(s.CanceledAt), copyTime(s.EndedAt)
	s.LatestInvoice, s.ClientSecret = copyString(s.LatestInvoice), copyString(s.ClientSecret)
	c := &s.Collection
	c.RenewedAt, c.NextCharge, c.UnpaidAt = copyTime(c.RenewedAt), copyTime(c.NextCharge), copyTime(c.UnpaidAt)
	if s.DefaultMethod != nil {
		d := *s.DefaultMethod
		s.DefaultMethod = &d
	}
	if s.Pause != nil {
		s.Pause = &PauseCollection{ResumesAt: copyTime(s.Pause.ResumesAt)}
	}
	if s.PendingUpdate != nil {
		u := *s.PendingUpdate
		s.PendingUpdate = &u
	}
	s.PendingLines = append([]InvoiceLine(nil), s.PendingLines...)
	return s
}

func copyTime(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := *t
	return &v
}

func (s *Subscription) ID() string         { return s.s.ID }
func (s *Subscription) Scope() core.Scope  { return s.s.Scope }
func (s *Subscription) Status() Status     { return s.s.Status }
func (s *Subscription) Customer() string   { return s.s.Customer }
func (s *Subscription) Created() time.Time { return s.s.Created }

// Amount is unit_amount × quantity.
func (s *Subscription) Amount() int64 { return s.s.UnitAmount * s.s.Quantity }

// ExpiresAt is when an incomplete subscription becomes incomplete_expired.
func (s *Subscription) ExpiresAt() time.Time { return s.s.Created.Add(FirstPaymentWindow) }

// DefaultMethod is the saved method a subscription's renewals charge: its id and what the
// subscription shows of it.
type DefaultMethod struct {
	ID string
	Summary
}

// Change is what a transition did, for its events: Updated (customer.subscription.updated),
// Deleted (customer.subscription.deleted), TrialWillEnd (customer.subscription.trial_will_end);
// none when nothing changed.
type Change struct {
	Updated, Deleted, TrialWillEnd bool
	// Kept, with Deleted: the net of the proration lines kept for a renewal the ended
	// subscription will not make, a credit (negative) or a charge (positive); the unit of work
	// that ends it puts it on the customer's balance (proration_credit, or
	// proration_charge_at_cancel: owed, added to the customer's next invoice).
	Kept int64
}

// Cancel cancels the subscription (D14). atPeriodEnd on a running subscription sets
// cancel_at_period_end (unchanged when it is set already); otherwise, or for an incomplete
// one, it ends now. A canceled or expired one is ErrAlreadyCanceled.
func (s *Subscription) Cancel(atPeriodEnd bool, now time.Time) (Change, error) {
	if s.s.Status.ended() {
		return Change{}, ErrAlreadyCanceled
	}
	now = now.UTC().Truncate(time.Second)
	if atPeriodEnd && s.s.Status != StatusIncomplete {
		if s.s.CancelAtPeriodEnd {
			return Change{}, nil
		}
		s.s.CancelAtPeriodEnd, s.s.CanceledAt, s.s.Updated = true, &now, now
		return Change{Updated: true}, nil
	}
	return Change{Deleted: true, Kept: s.end(now)}, nil
}

// end ends the subscription at now; a scheduled change and kept proration lines end with it.
// It answers the net of the kept lines: a credit (negative), a charge (positive), or 0.
func (s *Subscription) end(now time.Time) int64 {
	var net int64
	for _, l := range s.s.PendingLines {
		net += l.Quantity * l.UnitAmount
	}
	s.s.Status, s.s.CancelAtPeriodEnd, s.s.Updated = StatusCanceled, false, now
	s.s.PendingUpdate, s.s.PendingLines = nil, nil
	if s.s.CanceledAt == nil {
		s.s.CanceledAt = &now
	}
	s.s.EndedAt = &now
	return net
}

// Patch is the body of POST /v1/subscriptions/{id}: metadata ("" deletes a key) and
// cancel_at_period_end (false resumes a pending cancellation; true schedules one).
type Patch struct {
	Metadata          map[string]string
	CancelAtPeriodEnd *bool
}

// Apply changes the subscription by p; an ended subscription takes no change.
func (s *Subscription) Apply(p Patch, now time.Time) (Change, error) {
	if s.s.Status.ended() {
		return Change{}, ErrSubscriptionEnded
	}
	now = now.UTC().Truncate(time.Second)
	var ch Change
	if p.Metadata != nil {
		md := make(map[string]string, len(s.s.Metadata)+len(p.Metadata))
		for k, v := range s.s.Metadata {
			md[k] = v
		}
		for k, v := range p.Metadata {
			if v == "" {
				delete(md, k)
			} else {
				md[k] = v
			}
		}
		if err := core.CheckMetadata(md, "metadata"); err != nil {
			return Change{}, err
		}
		s.s.Metadata, ch.Updated = md, true
	}
	if p.CancelAtPeriodEnd != nil && *p.CancelAtPeriodEnd != s.s.CancelAtPeriodEnd {
		if *p.CancelAtPeriodEnd && s.s.Status == StatusIncomplete {
			return Change{}, core.InvalidField("cancel_at_period_end", "An incomplete subscription has no period to end; cancel it instead.")
		}
		s.s.CancelAtPeriodEnd = *p.CancelAtPeriodEnd
		if *p.CancelAtPeriodEnd {
			s.s.CanceledAt = &now
		} else {
			s.s.CanceledAt = nil
		}
		ch.Updated = true
	}
	if ch.Updated {
		s.s.Updated = now
	}
	return ch, nil
}

// TrialNoticeLead is how long before the trial end customer.subscription.trial_will_end fires.
const TrialNoticeLead = 3 * 24 * time.Hour

// IsDue reports whether the subscription has work due at or before until.
func (s *Subscription) IsDue(until time.Time) bool {
	t, ok := s.DueAt()
	return ok && !t.After(until)
}

// trialNoticeAt is when the trial-ending notice falls due: three days before the trial end,
// or at the trial start for a shorter trial.
func (s *Subscription) trialNoticeAt() (time.Time, bool) {
	if s.s.Status != StatusTrialing || s.s.TrialNotified || s.s.TrialEnd == nil {
		return time.Time{}, false
	}
	at := s.s.TrialEnd.Add(-TrialNoticeLead)
	if s.s.TrialStart != nil && at.Before(*s.s.TrialStart) {
		at = *s.s.TrialStart
	}
	return at, true
}

// DueAt is when the subscription's next change falls due (the sweep's index), if any: an
// incomplete one's expiry, a trial's ending notice, the period end (a renewal, or a pending
// cancellation), and while an invoice is being collected its next charge or, after a hard
// decline, the end of its window; a paused one's resumption. An unpaid subscription has
// nothing due.
func (s *Subscription) DueAt() (time.Time, bool) {
	return s.pausedDueAt(s.dueAt())
}

func (s *Subscription) dueAt() (time.Time, bool) {
	if s.s.Status == StatusIncomplete {
		return s.ExpiresAt(), true
	}
	if s.s.Status.ended() || s.s.Status == StatusUnpaid {
		return time.Time{}, false
	}
	if c := s.s.Collection; c.Invoice != "" {
		at, ok := earliest(c.NextCharge, c.UnpaidAt)
		if s.s.CancelAtPeriodEnd && (!ok || s.s.PeriodEnd.Before(at)) {
			return s.s.PeriodEnd, true
		}
		return at, ok
	}
	at, ok := s.trialNoticeAt()
	if !ok || s.s.PeriodEnd.Before(at) {
		return s.s.PeriodEnd, true
	}
	return at, ok
}

// ProcessDue applies the one change due first, if it is due at now, dated when it fell due:
// an incomplete subscription expires; a trial's ending notice is given; a pending
// cancellation ends the subscription at its period end; a hard decline's window ends
// (unpaid). A renewal and a charge of the invoice being collected are the service's
// (RenewalDue, ChargeDue) and change nothing here.
func (s *Subscription) ProcessDue(now time.Time) (Change, Status, error) {
	at, ok := s.DueAt()
	if !ok || at.After(now) {
		return Change{}, s.s.Status, nil
	}
	if ch, ok, err := s.processPause(at); ok {
		return ch, s.s.Status, err
	}
	c := s.s.Collection
	switch {
	case s.s.Status == StatusIncomplete:
		s.s.Status, s.s.Updated = StatusIncompleteExpired, at
		s.s.EndedAt = &at
		return Change{Updated: true}, StatusIncompleteExpired, nil
	case s.s.CancelAtPeriodEnd && at.Equal(s.s.PeriodEnd):
		return Change{Deleted: true, Kept: s.end(at)}, StatusCanceled, nil
	case c.Invoice != "" && c.UnpaidAt != nil && !c.UnpaidAt.After(at) && (c.NextCharge == nil || c.UnpaidAt.Before(*c.NextCharge)):
		s.s.Status, s.s.Updated = StatusUnpaid, at
		s.s.Collection.UnpaidAt, s.s.Collection.NextCharge = nil, nil
		return Change{Updated: true}, StatusUnpaid, nil
	case c.Invoice != "" || at.Equal(s.s.PeriodEnd):
		return Change{}, s.s.Status, nil // a charge or a renewal: the service's
	default:
		s.s.TrialNotified, s.s.Updated = true, at
		return Change{TrialWillEnd: true}, s.s.Status, nil
	}
}

// CheckConfirmable reports whether the first payment can be confirmed at now: the
// subscription is incomplete, within its 23 hours, and has a first payment to confirm.
func (s *Subscription) CheckConfirmable(now time.Time) error {
	if s.s.PaymentIntent == "" || s.s.Status != StatusIncomplete || !now.Before(s.ExpiresAt()) {
		return ErrPaymentIntentState
	}
	return nil
}

// StartTrial is the confirmed first payment of a subscription with a trial: the payment
// method dm is saved and becomes the default, and the subscription is trialing.
func (s *Subscription) StartTrial(dm DefaultMethod, now time.Time) (Change, error) {
	if err := s.CheckConfirmable(now); err != nil {
		return Change{}, err
	}
	if s.s.TrialEnd == nil {
		return Change{}, ErrPaymentIntentState
	}
	now = now.UTC().Truncate(time.Second)
	s.s.Status, s.s.DefaultMethod, s.s.Updated = StatusTrialing, &dm, now
	return Change{Updated: true}, nil
}

// PaymentIntent is the first payment's id, "" when there is none.
func (s *Subscription) PaymentIntent() string { return s.s.PaymentIntent }

// ClientSecretMatches reports, in constant time, whether secret is the first payment's.
func (s *Subscription) ClientSecretMatches(secret string) bool {
	if s.s.ClientSecret == nil {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(*s.s.ClientSecret), []byte(secret)) == 1
}
