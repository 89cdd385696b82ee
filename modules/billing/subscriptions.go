package billing

import (
	"context"
	"errors"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// PriceLookup reads a price of the scope's catalog; an unknown price answers a not_found
// core.Error (price_not_found).
type PriceLookup interface {
	LookupSubscriptionPrice(ctx context.Context, scope core.Scope, priceID string) (*Price, error)
}

func subscriptionNotFound(err error) error {
	if errors.Is(err, ErrSubscriptionMissing) {
		return ErrSubscriptionNotFound
	}
	return err
}

// CreateSubscription creates an incomplete subscription (POST /v1/subscriptions): a live
// caller that has not completed onboarding is refused first (409 merchant_not_ready), then
// the fields are checked in the order of the request table, then the price. The customer is
// found or created by e-mail in the same unit of work, with customer.subscription.created.
func (s *Service) CreateSubscription(ctx context.Context, caller core.Caller, in CreateInput) (*Subscription, error) {
	if caller.Scope.Env == core.EnvLive && !caller.Onboarded {
		return nil, core.ErrMerchantNotReady
	}
	scope := caller.Scope
	qty, err := checkCreate(in)
	if err != nil {
		return nil, err
	}
	p, err := s.prices.LookupSubscriptionPrice(ctx, scope, in.PriceID)
	if err != nil {
		var ce *core.Error
		if errors.As(err, &ce) && ce.Type == core.TypeNotFound {
			return nil, ce.At("price_id")
		}
		return nil, err
	}
	if _, err := checkPrice(p, qty); err != nil {
		return nil, err
	}
	now, err := s.clocks.Now(ctx, scope)
	if err != nil {
		return nil, err
	}
	var out *Subscription
	err = s.uow.Do(ctx, func(ctx context.Context, tx Tx) error {
		out = nil
		c, _, err := FindOrCreateIn(ctx, tx, scope, in.CustomerName, in.CustomerEmail, now)
		if err != nil {
			return err
		}
		sub, err := NewSubscription(scope, c, p, in, qty, now)
		if err != nil {
			return err
		}
		var invEvents []core.Event
		if sub.s.TrialEnd == nil && s.invoices != nil {
			// Without a trial the first period is billed now: its invoice is open, numbered,
			// and paid through the first payment the customer's browser confirms.
			in := sub.invoiceInput(c)
			in.Lines[0].ProductID = p.ProductID
			invID, evs, err := s.invoices.OpenInvoice(ctx, tx, scope, in, sub.s.Created)
			if err != nil {
				return err
			}
			sub.attachFirstInvoice(invID)
			invEvents = evs
		}
		if err := tx.Subscriptions().Insert(ctx, sub); err != nil {
			return err
		}
		// The scope's recurring revenue is recorded daily from the next midnight on.
		if err := tx.Subscriptions().MarkRecurring(ctx, scope, NextMidnight(now)); err != nil {
			return err
		}
		out = sub
		return tx.Outbox().Add(ctx, append([]core.Event{subscriptionEvent(EventSubscriptionCreated, sub, now)}, invEvents...)...)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Subscription reads subscription id of scope (404 subscription_not_found).
func (s *Service) Subscription(ctx context.Context, scope core.Scope, id string) (*Subscription, error) {
	sub, err := s.store.Subscription(ctx, scope, id)
	return sub, subscriptionNotFound(err)
}

// ListSubscriptions pages the scope's subscriptions newest first (D8), filtered by status,
// customer and price.
func (s *Service) ListSubscriptions(ctx context.Context, scope core.Scope, q core.ListQuery, f SubscriptionFilter) (core.Page[*Subscription], error) {
	q, err := q.Normalize()
	if err != nil {
		return core.Page[*Subscription]{}, err
	}
	if f.Status != nil && !f.Status.Valid() {
		return core.Page[*Subscription]{}, core.InvalidField("status", "status must be one of incomplete, incomplete_expired, trialing, active, past_due, unpaid, canceled.")
	}
	page, err := s.store.Subscriptions(ctx, scope, q, f)
	if errors.Is(err, ErrUnknownCursor) {
		return page, q.UnknownCursor()
	}
	return page, err
}

// change runs fn on subscription id locked in one unit of work, saves it and adds the events
// of its change.
func (s *Service) change(ctx context.Context, scope core.Scope, id string, fn func(sub *Subscription, now time.Time) (Change, error)) (*Subscription, error) {
	now, err := s.clocks.Now(ctx, scope)
	if err != nil {
		return nil, err
	}
	var out *Subscription
	err = s.uow.Do(ctx, func(ctx context.Context, tx Tx) error {
		sub, err := tx.Subscriptions().Lock(ctx, scope, id)
		if err != nil {
			return subscriptionNotFound(err)
		}
		// A change due before now (an expiry, a period-end cancellation the sweep has not run
		// yet) is applied first, as it happened.
		if _, _, err := s.applyDue(ctx, tx, sub, now); err != nil {
			return err
		}
		ch, err := fn(sub, now)
		if err != nil {
			return err
		}
		out = sub
		if ch == (Change{}) {
			return nil
		}
		if err := tx.Subscriptions().Save(ctx, sub); err != nil {
			return err
		}
		evs := changeEvents(ch, sub, now)
		if ch.Deleted {
			voided, err := s.clearEnded(ctx, tx, sub, ch, now)
			if err != nil {
				return err
			}
			evs = append(evs, voided...)
		}
		return tx.Outbox().Add(ctx, evs...)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// CancelSubscription cancels (POST /v1/subscriptions/{id}/cancel). Ending it now voids its
// open invoice (invoice.voided).
func (s *Service) CancelSubscription(ctx context.Context, scope core.Scope, id string, atPeriodEnd bool) (*Subscription, error) {
	return s.change(ctx, scope, id, func(sub *Subscription, now time.Time) (Change, error) {
		return sub.Cancel(atPeriodEnd, now)
	})
}

// UpdateSubscription applies p (POST /v1/subscriptions/{id}).
func (s *Service) UpdateSubscription(ctx context.Context, scope core.Scope, id string, p Patch) (*Subscription, error) {
	return s.change(ctx, scope, id, func(sub *Subscription, now time.Time) (Change, error) {
		return sub.Apply(p, now)
	})
}
