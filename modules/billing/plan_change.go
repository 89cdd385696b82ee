package billing

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
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
	// ErrProrationUnsupported: a proration behaviour this change cannot be billed with.
	ErrProrationUnsupported = core.NewError(core.TypeInvalidRequest, "proration_behavior_unsupported", "proration_behavior",
		"This change cannot be billed with this proration_behavior.")
	// ErrCollectionPending: an invoice of the subscription is still being collected; a plan
	// change billed now waits until it is paid.
	ErrCollectionPending = core.NewError(core.TypeResourceConflict, "subscription_payment_pending", "",
		"An invoice of this subscription is still being collected; pay it before a plan change billed now.")
	// ErrPlanNotChangeable: an incomplete subscription has no period to change; cancel it and
	// create another.
	ErrPlanNotChangeable = core.NewError(core.TypeResourceConflict, "subscription_incomplete", "",
		"An incomplete subscription's plan cannot change; cancel it and create another.")
)

// PlanChange is the plan part of POST /v1/subscriptions/{id}: a new price and/or quantity
// (nil keeps the current one), how the change is billed ("" is always_invoice, or none with
// effective period_end) and when it takes effect ("" is now).
type PlanChange struct {
	PriceID           *string
	Quantity          *int64
	ProrationBehavior string
	Effective         string
}

// Empty reports whether c changes nothing of the plan.
func (c PlanChange) Empty() bool { return c.PriceID == nil && c.Quantity == nil }

func (c PlanChange) behavior() (string, error) {
	switch c.ProrationBehavior {
	case "":
		if c.Effective == EffectivePeriodEnd {
			return ProrateNone, nil
		}
		return ProrateAlwaysInvoice, nil
	case ProrateAlwaysInvoice, ProrateCreate, ProrateNone:
		return c.ProrationBehavior, nil
	}
	return "", ErrProrationBehavior
}

// checkPlanChange checks the fields of c that need no catalog.
func checkPlanChange(c PlanChange) error {
	switch c.Effective {
	case "", EffectiveNow:
	case EffectivePeriodEnd:
		if c.Empty() {
			return ErrScheduledNothing
		}
		if c.ProrationBehavior != "" && c.ProrationBehavior != ProrateNone {
			return ErrScheduledProration
		}
	default:
		return ErrEffective
	}
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
//
// effective period_end keeps the change as the subscription's pending_update, made with the
// renewal at the period end (scheduleChange); nothing is prorated. A change made now replaces
// a scheduled one.
//
// proration_behavior none bills nothing: the new amount is charged from the next renewal (it
// cannot change the interval, whose restarted period is billed now). create_prorations keeps
// the credit and the charge as two lines of the next renewal invoice, in the same unit of work
// (the renewal consumes them in its own). always_invoice bills the net proration now: an
// invoice of one line (the charge less the credit) is made, finalised (invoice.finalized) and
// recorded as the invoice the subscription collects, in the same unit of work; it is then
// charged off-session with the default method through the renewal's charge path with no
// transaction open, and a failure goes into dunning as a renewal's would. The customer's
// balance in the currency is applied to that invoice (ApplyBalance); a credit that covers it
// pays it with no charge, in the same unit of work. A net credit (a downgrade), or a net
// charge below the minimum charge (core.MinAmount, which no invoice may be finalised under),
// makes no invoice and no charge: it goes to the customer's balance in the same unit of work,
// for the next invoice to take. While trialing nothing is billed.
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
	if c.Effective == EffectivePeriodEnd {
		return s.scheduleChange(ctx, scope, id, p, qty, patch)
	}
	if behavior == ProrateAlwaysInvoice && (s.invoices == nil || s.charger == nil) {
		return nil, ErrProrationUnsupported.Msg("This server cannot invoice a proration now; use proration_behavior none.")
	}
	now, err := s.clocks.Now(ctx, scope)
	if err != nil {
		return nil, err
	}
	var out *Subscription
	var due *dueCharge
	err = s.uow.Do(ctx, func(ctx context.Context, tx Tx) error {
		out, due = nil, nil
		sub, err := tx.Subscriptions().Lock(ctx, scope, id)
		if err != nil {
			return subscriptionNotFound(err)
		}
		// A charge already due (a proration invoice whose charge a crash cut off before it
		// began: the retried change finds the plan changed) is made after this commits.
		_, owed, err := s.applyDue(ctx, tx, sub, now)
		if err != nil {
			return err
		}
		due = owed
		ch, err := sub.Apply(patch, now)
		if err != nil {
			return err
		}
		oldPrice, oldQty := sub.s.PriceID, sub.s.Quantity
		pc, pr, err := sub.ChangePlan(p, qty, now)
		if err != nil {
			return err
		}
		if pr.Restart && behavior != ProrateAlwaysInvoice {
			return ErrProrationUnsupported.Msg("A change of interval restarts the period and is billed now; use proration_behavior always_invoice, or effective period_end.")
		}
		if behavior == ProrateCreate {
			if err := sub.keepProration(pr, oldPrice, oldQty, now); err != nil {
				return err
			}
		}
		// A plan change made now replaces a change scheduled for the period end.
		dropped := sub.dropScheduledChange()
		if err := sub.checkNextInvoice(); err != nil {
			return err
		}
		ch.Updated = ch.Updated || pc.Updated || dropped
		out = sub
		if !ch.Updated {
			return nil
		}
		var evs []core.Event
		if behavior == ProrateAlwaysInvoice && pr.Net != 0 && pr.Net < core.MinAmount {
			// A net credit, or a charge below the minimum, goes to the customer's balance
			// (balance.go), taken by the customer's next invoice in this currency.
			if _, err := tx.Customers().Lock(ctx, scope, sub.Customer()); err != nil {
				return customerNotFound(err)
			}
			if err := carryProration(ctx, tx, sub, pr.Net, BalanceProrationTooSmall, now); err != nil {
				return err
			}
		}
		if behavior == ProrateAlwaysInvoice && pr.Net >= core.MinAmount {
			if sub.s.Collection.Invoice != "" {
				return ErrCollectionPending
			}
			at := now.UTC().Truncate(time.Second)
			cust, err := tx.Customers().Lock(ctx, scope, sub.Customer())
			if err != nil {
				return customerNotFound(err)
			}
			in := sub.prorationInvoiceInput(cust, pr, at)
			if err := withBalance(ctx, tx, cust, &in); err != nil {
				return err
			}
			invID, invEvs, err := s.invoices.OpenInvoice(ctx, tx, scope, in, at)
			if err != nil {
				return err
			}
			evs = invEvs
			sub.collectProration(invID, at)
			paid, err := recordApplied(ctx, tx, sub, in, invID, at)
			if err != nil {
				return err
			}
			if paid.Updated {
				// The customer's credit paid it: nothing to charge.
				ch.Updated = true
			} else if mid := sub.DefaultMethodID(); mid != "" {
				pm, err := tx.PaymentMethods().Get(ctx, scope, mid)
				if err != nil {
					return err
				}
				due = &dueCharge{scope: scope, sub: sub.ID(), invoice: invID, at: at, method: pm.Type(), ref: pm.ProcessorRef()}
			} else {
				// No method to charge: the attempt fails as a lost card would.
				due = nil
				fch, _ := sub.ChargeFailed(invID, ports.DeclineLostCard, at)
				ch.Updated = ch.Updated || fch.Updated
			}
		}
		if err := tx.Subscriptions().Save(ctx, sub); err != nil {
			return err
		}
		return tx.Outbox().Add(ctx, append(changeEvents(ch, sub, now), evs...)...)
	})
	if err != nil {
		return nil, err
	}
	if due == nil {
		return out, nil
	}
	// The proration invoice is charged now, with no transaction open; a processor failure
	// leaves the charge due for the sweep, as a renewal's.
	_ = s.charge(ctx, *due)
	if fresh, err := s.store.Subscription(ctx, scope, id); err == nil {
		return fresh, nil
	}
	return out, nil
}

// scheduleChange keeps the change to price p (nil: the same) and quantity (0: the same) as the
// subscription's pending_update, with the rest of the update, in one unit of work with
// customer.subscription.updated.
func (s *Service) scheduleChange(ctx context.Context, scope core.Scope, id string, p *Price, qty int64, patch Patch) (*Subscription, error) {
	return s.change(ctx, scope, id, func(sub *Subscription, now time.Time) (Change, error) {
		ch, err := sub.Apply(patch, now)
		if err != nil {
			return Change{}, err
		}
		sc, err := sub.ScheduleChange(p, qty, now)
		if err != nil {
			return Change{}, err
		}
		return Change{Updated: ch.Updated || sc.Updated}, nil
	})
}

// prorationInvoiceInput is the invoice of a plan change billed now: one line of the net
// proration, naming the credit and the charge it nets.
func (s *Subscription) prorationInvoiceInput(customer *Customer, pr Proration, at time.Time) InvoiceInput {
	desc := fmt.Sprintf("Plan change to %s × %d on %s: remaining time %s, less unused time %s",
		s.s.PriceID, s.s.Quantity, at.Format("2 Jan 2006"),
		core.FormatAmount(pr.Charge, s.s.Currency), core.FormatAmount(pr.Credit, s.s.Currency))
	return InvoiceInput{Subscription: s.s.ID, CustomerName: customer.Name(), CustomerEmail: customer.Email(), Currency: s.s.Currency,
		Lines: []InvoiceLine{{Description: desc, PriceID: s.s.PriceID, Quantity: 1, UnitAmount: pr.Net}}}
}

// collectProration records the proration invoice invoiceID made at as the latest invoice and
// the one being collected, charged at once; its dunning counts from at.
func (s *Subscription) collectProration(invoiceID string, at time.Time) {
	id := invoiceID
	s.s.LatestInvoice = &id
	s.s.Collection = Collection{Invoice: invoiceID, RenewedAt: &at, NextCharge: &at}
}
