package billing

import (
	"context"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// PauseCollection is a paused subscription's pause: while it holds, the subscription makes
// no invoices. ResumesAt, when set, is when the billing sweep resumes it.
type PauseCollection struct {
	ResumesAt *time.Time
}

// MaxPauseYears is how far ahead resumes_at may be.
const MaxPauseYears = 5

// Documented errors of pause and resume.
var (
	// ErrNotPausable: only an active, trialing or past_due subscription can be paused (409).
	ErrNotPausable = core.NewError(core.TypeResourceConflict, "subscription_not_pausable", "",
		"Only an active, trialing or past_due subscription can be paused.")
	// ErrNotPaused: the subscription is not paused, so there is nothing to resume (409).
	ErrNotPaused = core.NewError(core.TypeResourceConflict, "subscription_not_paused", "",
		"This subscription is not paused.")
)

// Paused is the subscription's pause, nil when it is not paused.
func (s *Subscription) Paused() *PauseCollection {
	if s.s.Pause == nil {
		return nil
	}
	return &PauseCollection{ResumesAt: copyTime(s.s.Pause.ResumesAt)}
}

// Pause pauses the subscription's collection at now until resumesAt (nil: until resumed).
// Its status and period anchor stay; pausing a paused subscription replaces resumes_at. An
// ended subscription is ErrSubscriptionEnded; an incomplete or unpaid one ErrNotPausable;
// a resumesAt not after now is 400 with param resumes_at.
func (s *Subscription) Pause(resumesAt *time.Time, now time.Time) (Change, error) {
	if s.s.Status.ended() {
		return Change{}, ErrSubscriptionEnded
	}
	switch s.s.Status {
	case StatusActive, StatusTrialing, StatusPastDue:
	default:
		return Change{}, ErrNotPausable
	}
	now = now.UTC().Truncate(time.Second)
	if resumesAt != nil {
		r := resumesAt.UTC().Truncate(time.Second)
		if !r.After(now) {
			return Change{}, core.InvalidField("resumes_at", "resumes_at must be in the future.")
		}
		if r.After(now.AddDate(MaxPauseYears, 0, 0)) {
			return Change{}, core.InvalidField("resumes_at", "resumes_at must be within %d years.", MaxPauseYears)
		}
		resumesAt = &r
	}
	s.s.Pause, s.s.Updated = &PauseCollection{ResumesAt: resumesAt}, now
	return Change{Updated: true}, nil
}

// Resume ends the pause at now. Billing continues at the current period's end (the next
// boundary after now): the periods that passed while paused are not billed.
func (s *Subscription) Resume(now time.Time) (Change, error) {
	if s.s.Status.ended() {
		return Change{}, ErrSubscriptionEnded
	}
	if s.s.Pause == nil {
		return Change{}, ErrNotPaused
	}
	now = now.UTC().Truncate(time.Second)
	s.s.Pause, s.s.Updated = nil, now
	if !s.s.PeriodEnd.Before(now) {
		return Change{Updated: true}, nil // a period ending now is billed at its end
	}
	return Change{Updated: true}, s.skipPeriodsTo(now)
}

// skipPeriodsTo moves a period that ended at or before at to the period holding at, counted
// from the anchor, without an invoice.
func (s *Subscription) skipPeriodsTo(at time.Time) error {
	if s.s.PeriodEnd.After(at) {
		return nil
	}
	_, start, end, err := Cycle{Anchor: s.s.Anchor, Interval: s.s.Interval, Count: s.s.IntervalCount}.PeriodAt(at)
	if err != nil {
		return err
	}
	s.s.PeriodStart, s.s.PeriodEnd = start, end
	return nil
}

// pausedDueAt is what falls due first on a paused subscription: its resumption when it comes
// before (or with) at, the subscription's other due time.
func (s *Subscription) pausedDueAt(at time.Time, ok bool) (time.Time, bool) {
	if s.s.Pause == nil || s.s.Pause.ResumesAt == nil || s.s.Status.ended() || s.s.Status == StatusIncomplete {
		return at, ok
	}
	if r := *s.s.Pause.ResumesAt; !ok || !r.After(at) {
		return r, true
	}
	return at, ok
}

// processPause applies a paused subscription's due change at at, if it is one of the
// pause's: the resumption at resumes_at, or a period end that passes without an invoice (the
// period advances, the anchor stays; customer.subscription.updated). handled is false for
// anything else.
func (s *Subscription) processPause(at time.Time) (ch Change, handled bool, err error) {
	p := s.s.Pause
	if p == nil {
		return Change{}, false, nil
	}
	if p.ResumesAt != nil && at.Equal(*p.ResumesAt) {
		ch, err := s.Resume(at)
		return ch, true, err
	}
	if at.Equal(s.s.PeriodEnd) && !s.s.CancelAtPeriodEnd && s.s.Collection.Invoice == "" {
		// A change scheduled for the period end is made at the boundary the pause lets pass.
		s.TakeScheduledChange()
		if err := s.skipPeriodsTo(at); err != nil {
			return Change{}, true, err
		}
		s.s.Updated = at
		return Change{Updated: true}, true, nil
	}
	return Change{}, false, nil
}

// PauseSubscription pauses (POST /v1/subscriptions/{id}/pause), with
// customer.subscription.updated.
func (s *Service) PauseSubscription(ctx context.Context, scope core.Scope, id string, resumesAt *time.Time) (*Subscription, error) {
	return s.change(ctx, scope, id, func(sub *Subscription, now time.Time) (Change, error) {
		return sub.Pause(resumesAt, now)
	})
}

// ResumeSubscription resumes (POST /v1/subscriptions/{id}/resume), with
// customer.subscription.updated.
func (s *Service) ResumeSubscription(ctx context.Context, scope core.Scope, id string) (*Subscription, error) {
	return s.change(ctx, scope, id, func(sub *Subscription, now time.Time) (Change, error) {
		return sub.Resume(now)
	})
}
