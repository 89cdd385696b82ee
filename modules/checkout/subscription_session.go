package checkout

import (
	"context"
	"errors"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// SubscriptionStart is what a subscription-mode session asks billing to start.
type SubscriptionStart struct {
	Scope         core.Scope
	SessionID     string
	PriceID       string
	Quantity      int64
	CustomerName  string
	CustomerEmail string
	Metadata      map[string]string
}

// SubscriptionStatus is where a subscription's first payment left it: "active" (the first
// period was charged) or "trialing" (the method was saved, nothing charged).
type SubscriptionStatus string

// FirstPayment is what a subscription's first payment came to: its status, or the 3-D
// Secure step it waits for (Action; the subscription is still incomplete).
type FirstPayment struct {
	Status SubscriptionStatus
	Action *PendingAction
}

// Subscriptions is billing, as a subscription-mode session needs it (the composition root
// adapts billing to it, so that checkout does not depend on billing).
type Subscriptions interface {
	// Start creates the incomplete subscription of the session: the customer is found or
	// created by e-mail, the first invoice opened, customer.subscription.created written.
	Start(ctx context.Context, in SubscriptionStart) (subscriptionID string, err error)
	// ConfirmFirst confirms the subscription's first payment with the buyer's method: with a
	// trial the method is saved (nothing is charged) and the subscription is trialing;
	// without, the first invoice is charged through the charge protocol (the invoice is the
	// payable) and the subscription is active. Either way the method becomes the default. A
	// refusal is a *DeclineError. A first payment already confirmed answers its status. A
	// method that asks for 3-D Secure answers the Action the buyer must answer (ResolveFirst).
	ConfirmFirst(ctx context.Context, scope core.Scope, subscriptionID string, in ConfirmInput) (FirstPayment, error)
	// ResolveFirst answers the 3-D Secure step the first payment waits for: approved, the
	// method is saved (and the first invoice charged, which may ask for a step of its own);
	// refused, a *DeclineError (authentication_failed). Nothing waiting: ErrNoPendingAction.
	ResolveFirst(ctx context.Context, scope core.Scope, subscriptionID string, approve bool) (FirstPayment, error)
	// PendingFirst is the 3-D Secure step the first payment waits for, nil when none.
	PendingFirst(ctx context.Context, scope core.Scope, subscriptionID string) (*PendingAction, error)
}

// confirmSubscription pays a subscription-mode session. The first payment is billing's, not
// the session's: the subscription is started (once per session, its id kept on the session),
// its first invoice charged through payments.Charger.Charge with the invoice as the payable
// (or, with a trial, the method saved), and then the session completes with `subscription`
// set and checkout.session.completed.
//
// Why not one unit of work for the charge's outcome, the subscription and the session: the
// first payment of a subscription is the first invoice's payment (invoice_id, the fee, the
// invoice events, the receipt), exactly as for a subscription created through the API, so the
// invoice is the payable and billing's owner applies the outcome; the session cannot be that
// payable too. The session's completion is a second unit of work after it; a crash between
// the two leaves a paid subscription and an open session, and the buyer's retried
// confirmation (or the page reloaded and paid again) finds the first payment already made and
// only completes the session: no second charge, since the invoice takes one payment.
func (svc *Service) confirmSubscription(b buyerRequest, in ConfirmInput) (*ConfirmResult, error) {
	ctx, s := b.ctx, b.session
	if svc.subs == nil {
		return nil, ErrSubscriptionModeUnavailable
	}
	subID := s.Subscription()
	if subID == nil {
		item := s.lineItems[0]
		id, err := svc.subs.Start(ctx, SubscriptionStart{Scope: s.Scope(), SessionID: s.ID(), PriceID: *item.PriceID,
			Quantity: int64(item.Quantity), CustomerName: s.CustomerName(), CustomerEmail: s.CustomerEmail(), Metadata: s.Metadata()})
		if err != nil {
			return nil, err
		}
		// A concurrent confirmation may have started one first: the session keeps the first;
		// the other stays incomplete and expires unpaid.
		err = svc.uow.Do(ctx, func(ctx context.Context, tx Tx) error {
			locked, err := tx.Sessions().Lock(ctx, s.Scope(), s.ID())
			if err != nil {
				return err
			}
			if locked.subscription != nil {
				subID = locked.subscription
				return nil
			}
			if err := locked.checkOpen(b.now); err != nil {
				return err
			}
			locked.subscription = &id
			locked.changed |= ChangedSubscription
			subID = &id
			return tx.Sessions().Save(ctx, locked)
		})
		if err != nil {
			return nil, err
		}
	}
	if s.buyer.Declines >= MaxDeclines {
		return nil, ErrConfirmLimit // the card-testing guard holds for subscriptions too
	}
	fp, err := svc.subs.ConfirmFirst(ctx, s.Scope(), *subID, in)
	return svc.firstPaymentAnswer(b, fp, err)
}

// resolveSubscription answers the 3-D Secure step of a subscription-mode session's first
// payment (billing's), then completes the session as confirmSubscription does.
func (svc *Service) resolveSubscription(b buyerRequest, approve bool) (*ConfirmResult, error) {
	s := b.session
	if svc.subs == nil {
		return nil, ErrSubscriptionModeUnavailable
	}
	subID := s.Subscription()
	if subID == nil {
		return nil, ErrNoPendingAction
	}
	fp, err := svc.subs.ResolveFirst(b.ctx, s.Scope(), *subID, approve)
	return svc.firstPaymentAnswer(b, fp, err)
}

// firstPaymentAnswer turns what billing answered about the session's first payment into the
// confirmation's answer: a decline is counted against the session's limit, a 3-D Secure step
// keeps the session open, and a first payment made completes the session
// (checkout.session.completed).
func (svc *Service) firstPaymentAnswer(b buyerRequest, fp FirstPayment, err error) (*ConfirmResult, error) {
	ctx, s := b.ctx, b.session
	if err != nil {
		var d *DeclineError
		if errors.As(err, &d) {
			if rerr := svc.countDecline(ctx, s); rerr != nil {
				return nil, rerr
			}
		}
		return nil, err
	}
	if fp.Action != nil {
		return &ConfirmResult{Status: ConfirmRequiresAction, Session: s, Action: fp.Action, Merchant: b.merchant}, nil
	}
	now, err := svc.clocks.Now(ctx, s.Scope())
	if err != nil {
		return nil, err
	}
	var out *Session
	err = svc.uow.Do(ctx, func(ctx context.Context, tx Tx) error {
		locked, err := tx.Sessions().Lock(ctx, s.Scope(), s.ID())
		if err != nil {
			return err
		}
		out = locked
		if locked.status == StatusComplete {
			return nil // completed by a concurrent confirmation
		}
		if err := locked.completeSubscription(now); err != nil {
			return err
		}
		if err := tx.Sessions().Save(ctx, locked); err != nil {
			return err
		}
		return tx.Outbox().Add(ctx, core.NewEvent(EventCompleted, locked.Scope(), now, SessionEvent{Session: locked}))
	})
	if err != nil {
		return nil, err
	}
	return &ConfirmResult{Status: ConfirmSucceeded, Session: out, Merchant: b.merchant}, nil
}

// completeSubscription completes an open subscription-mode session whose subscription's
// first payment was made. It completes even when the session's lifetime ran out meanwhile:
// the subscription was paid (or its trial started) while the session was open.
func (s *Session) completeSubscription(now time.Time) error {
	if s.subscription == nil {
		return errors.New("checkout: complete: the session has no subscription")
	}
	switch s.status {
	case StatusOpen:
	case StatusComplete:
		return ErrSessionAlreadyCompleted
	default:
		return ErrSessionExpired
	}
	_ = now
	s.status = StatusComplete
	s.changed |= ChangedStatus
	return nil
}

func isNotFound(err error) bool {
	var ce *core.Error
	return errors.As(err, &ce) && ce.Type == core.TypeNotFound
}

// countDecline counts a declined first payment of subscription session s against the
// card-testing guard (MaxDeclines), as a declined charge of a payment session is counted.
func (svc *Service) countDecline(ctx context.Context, s *Session) error {
	return svc.uow.Do(ctx, func(ctx context.Context, tx Tx) error {
		locked, err := tx.Sessions().Lock(ctx, s.Scope(), s.ID())
		if err != nil {
			return err
		}
		locked.recordDecline()
		return tx.Sessions().Save(ctx, locked)
	})
}
