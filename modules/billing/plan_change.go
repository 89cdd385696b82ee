package billing

import (
	"context"
	"errors"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// How a plan change is billed (proration_behavior).
const (
	// ProrateAlwaysInvoice (the default): the proration is invoiced and charged now.
	ProrateAlwaysInvoice = "always_invoice"
	// ProrateCreate: the proration becomes lines of the next renewal invoice.
	ProrateCreate = "create_prorations"
	// ProrateNone: nothing is billed for the change; the new amount applies from the next
	// renewal.
	ProrateNone = "none"
)

// Errors of a plan change.
var (
	// ErrPlanCurrencyMismatch: the new price is in another currency than the subscription.
	ErrPlanCurrencyMismatch = core.NewError(core.TypeInvalidRequest, "currency_mismatch", "price_id",
		"The new price must be in the subscription's currency.")
	// ErrProrationBehavior: an unknown proration_behavior.
	ErrProrationBehavior = core.NewError(core.TypeInvalidRequest, "proration_behavior_invalid", "proration_behavior",
		"proration_behavior must be one of always_invoice, create_prorations, none.")
	// ErrProrationUnsupported: a billed proration this server does not perform yet.
	ErrProrationUnsupported = core.NewError(core.TypeInvalidRequest, "proration_behavior_unsupported", "proration_behavior",
		"Only proration_behavior none is supported for a plan change on this server.")
	// ErrPlanNotChangeable: an incomplete subscription has no period to change; cancel it and
	// create another.
	ErrPlanNotChangeable = core.NewError(core.TypeResourceConflict, "subscription_incomplete", "",
		"An incomplete subscription's plan cannot change; cancel it and create another.")
)

// PlanChange is the plan part of POST /v1/subscriptions/{id}: a new price and/or quantity
// (nil keeps the current one) and how the change is billed ("" is always_invoice).
type PlanChange struct {
	PriceID           *string
	Quantity          *int64
	ProrationBehavior string
}

// Empty reports whether c changes nothing of the plan.
func (c PlanChange) Empty() bool { return c.PriceID == nil && c.Quantity == nil }

func (c PlanChange) behavior() (string, error) {
	switch c.ProrationBehavior {
	case "":
		return ProrateAlwaysInvoice, nil
	case ProrateAlwaysInvoice, ProrateCreate, ProrateNone:
		return c.ProrationBehavior, nil
	}
	return "", ErrProrationBehavior
}

// checkPlanChange checks the fields of c that need no catalog.
func checkPlanChange(c PlanChange) error {
	if c.PriceID != nil && *c.PriceID == "" {
		return core.MissingField("price_id")
	}
	if c.Quantity != nil && (*c.Quantity < 1 || *c.Quantity > MaxQuantity) {
		return core.InvalidField("quantity", "quantity must be between 1 and %d.", MaxQuantity)
	}
	return nil
}

// ChangePlan moves the subscription to price p (nil keeps its price) and quantity (0 keeps
// it) at now, and answers the proration of the change over the rest of the current period
// (zero while trialing: the trial bills nothing). The price must be recurring, active,
// licensed and in the subscription's currency. A change of interval restarts the period at
// now. Nothing is billed here; the caller bills the proration as its behaviour says.
func (s *Subscription) ChangePlan(p *Price, quantity int64, now time.Time) (Change, Proration, error) {
	if s.s.Status.ended() {
		return Change{}, Proration{}, ErrSubscriptionEnded
	}
	if s.s.Status == StatusIncomplete {
		return Change{}, Proration{}, ErrPlanNotChangeable
	}
	now = now.UTC().Truncate(time.Second)
	if quantity == 0 {
		quantity = s.s.Quantity
	}
	np := Price{ID: s.s.PriceID, Active: true, Recurring: true, Interval: s.s.Interval,
		IntervalCount: s.s.IntervalCount, UnitAmount: s.s.UnitAmount, Currency: s.s.Currency}
	if p != nil {
		if p.Currency != s.s.Currency {
			return Change{}, Proration{}, ErrPlanCurrencyMismatch.Msg(
				"Price '%s' is in %s; the subscription is in %s.", p.ID, p.Currency, s.s.Currency)
		}
		np = *p
	}
	newAmount, err := checkPrice(&np, quantity)
	if err != nil {
		return Change{}, Proration{}, err
	}
	if np.ID == s.s.PriceID && quantity == s.s.Quantity && np.UnitAmount == s.s.UnitAmount {
		return Change{}, Proration{}, nil
	}
	restart := np.Interval != s.s.Interval || np.IntervalCount != s.s.IntervalCount
	var pr Proration
	if s.s.Status != StatusTrialing && now.Before(s.s.PeriodEnd) && !now.Before(s.s.PeriodStart) {
		if pr, err = Prorate(ProrationInput{PeriodStart: s.s.PeriodStart, PeriodEnd: s.s.PeriodEnd, At: now,
			OldAmount: s.Amount(), NewAmount: newAmount, IntervalChanged: restart}); err != nil {
			return Change{}, Proration{}, err
		}
	}
	s.s.PriceID, s.s.UnitAmount, s.s.Quantity = np.ID, np.UnitAmount, quantity
	if restart && s.s.Status != StatusTrialing {
		s.s.Interval, s.s.IntervalCount = np.Interval, np.IntervalCount
		c := Cycle{Anchor: now, Interval: np.Interval, Count: np.IntervalCount}
		end, err := c.Boundary(1)
		if err != nil {
			return Change{}, Proration{}, err
		}
		s.s.Anchor, s.s.PeriodStart, s.s.PeriodEnd = now, now, end
	} else if restart {
		// While trialing the trial end stays the anchor; the new cycle runs from it.
		s.s.Interval, s.s.IntervalCount = np.Interval, np.IntervalCount
	}
	s.s.Updated = now
	return Change{Updated: true}, pr, nil
}

// ChangeSubscriptionPlan applies a plan change with the rest of an update (POST
// /v1/subscriptions/{id} with price_id and/or quantity): the fields are checked, then the new
// price, then the change is made in one unit of work with customer.subscription.updated.
// With proration_behavior none nothing is billed: the new amount is charged from the next
// renewal. A change that restarts the period (a new interval) is billed, so it needs a billed
// behaviour.
func (s *Service) ChangeSubscriptionPlan(ctx context.Context, scope core.Scope, id string, c PlanChange, patch Patch) (*Subscription, error) {
	if err := checkPlanChange(c); err != nil {
		return nil, err
	}
	behavior, err := c.behavior()
	if err != nil {
		return nil, err
	}
	var p *Price
	if c.PriceID != nil {
		if p, err = s.prices.LookupSubscriptionPrice(ctx, scope, *c.PriceID); err != nil {
			var ce *core.Error
			if errors.As(err, &ce) && ce.Type == core.TypeNotFound {
				return nil, ce.At("price_id")
			}
			return nil, err
		}
	}
	var qty int64
	if c.Quantity != nil {
		qty = *c.Quantity
	}
	if behavior != ProrateNone {
		// Billing the proration (now, or on the next renewal invoice) is not built yet: the
		// change is refused before anything moves.
		return nil, ErrProrationUnsupported
	}
	return s.change(ctx, scope, id, func(sub *Subscription, now time.Time) (Change, error) {
		ch, err := sub.Apply(patch, now)
		if err != nil {
			return Change{}, err
		}
		pc, pr, err := sub.ChangePlan(p, qty, now)
		if err != nil {
			return Change{}, err
		}
		if pr.Restart {
			return Change{}, ErrProrationUnsupported.Msg("A change of interval restarts the period and is billed now; proration_behavior none cannot change the interval.")
		}
		ch.Updated = ch.Updated || pc.Updated
		return ch, nil
	})
}
