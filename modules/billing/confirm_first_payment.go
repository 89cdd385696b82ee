package billing

import (
	"context"
	"errors"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/ports"
)

// FirstPayment is what the customer's browser sees of a subscription's first payment.
type FirstPayment struct {
	Subscription *Subscription
	// Amount is what confirming charges now: 0 for a trial, which only saves the method.
	Amount int64
	// Processing: the first invoice's payment is in flight (a SEPA debit settling); the
	// subscription stays incomplete until it settles.
	Processing bool
	// Action is what the first payment waits for (3-D Secure) before it can go on: the setup
	// of the method, or the first invoice's charge. The customer answers it with
	// ResolveFirstPayment.
	Action *ports.ChargeAction
}

// openFirstPayment reads the subscription of first payment piID and checks the client
// secret in constant time. An unknown id and a wrong secret answer the same 422, which never
// tells whether the payment exists.
func (s *Service) openFirstPayment(ctx context.Context, piID, secret string) (*Subscription, error) {
	sub, err := s.store.SubscriptionByPaymentIntent(ctx, piID)
	if errors.Is(err, ErrSubscriptionMissing) {
		return nil, ErrPaymentIntentState
	}
	if err != nil {
		return nil, err
	}
	if !sub.ClientSecretMatches(secret) {
		return nil, ErrPaymentIntentState
	}
	return sub, nil
}

// FirstPaymentView reads the first payment piID for the browser that holds its secret.
func (s *Service) FirstPaymentView(ctx context.Context, piID, secret string) (*FirstPayment, error) {
	sub, err := s.openFirstPayment(ctx, piID, secret)
	if err != nil {
		return nil, err
	}
	return s.firstPayment(ctx, sub)
}

// firstPayment is the first payment of sub as its customer's browser sees it: what confirming
// charges (nothing with a trial) and, while the subscription is incomplete, whether a debit of
// its first invoice is settling.
func (s *Service) firstPayment(ctx context.Context, sub *Subscription) (*FirstPayment, error) {
	fp := &FirstPayment{Subscription: sub}
	if sub.s.TrialEnd == nil {
		fp.Amount = sub.Amount() // charged when confirmed
	}
	if sub.s.Status != StatusIncomplete {
		return fp, nil
	}
	if inv := sub.s.LatestInvoice; inv != nil && s.invoices != nil {
		processing, err := s.invoices.InvoiceProcessing(ctx, sub.Scope(), *inv)
		if err != nil {
			return nil, err
		}
		fp.Processing = processing
		waits, err := s.invoices.InvoiceAwaitsAction(ctx, sub.Scope(), *inv)
		if err != nil {
			return nil, err
		}
		if waits {
			act := threeDSAction
			fp.Action = &act
		}
	}
	if _, err := s.store.PendingSetup(ctx, sub.Scope(), sub.ID()); err == nil {
		act := threeDSAction
		fp.Action = &act
	} else if !errors.Is(err, ErrNoPendingSetup) {
		return nil, err
	}
	return fp, nil
}

// ConfirmFirstPayment confirms the first payment piID of a subscription with a trial: the
// payment method is checked as a checkout confirmation checks it (400 naming the field),
// saved by the processor with no transaction open (nothing is charged), then, in one unit of
// work, recorded as the customer's default and the subscription's, and the subscription is
// trialing (customer.subscription.updated). A refusal is a *DeclineError (402) and the
// subscription stays incomplete. A card whose saving asks for 3-D Secure is kept as the
// subscription's pending setup and answered with its Action (ResolveFirstPayment goes on).
// A payment already confirmed, expired or unknown, or a wrong secret, is 422
// payment_intent_unexpected_state.
func (s *Service) ConfirmFirstPayment(ctx context.Context, piID, secret string, in MethodInput) (*FirstPayment, error) {
	sub, err := s.openFirstPayment(ctx, piID, secret)
	if err != nil {
		return nil, err
	}
	scope := sub.Scope()
	now, err := s.clocks.Now(ctx, scope)
	if err != nil {
		return nil, err
	}
	if err := sub.CheckConfirmable(now); err != nil {
		return nil, err
	}
	saver, ok := s.savers[scope.Env]
	if !ok {
		return nil, ErrProcessorUnavailable
	}
	snap := sub.Snapshot()
	if err := payments.ValidateMethod(in.Method, in.Card, in.SEPA, snap.Currency, "subscriptions", now); err != nil {
		return nil, err
	}
	c, err := s.Customer(ctx, scope, sub.Customer())
	if err != nil {
		return nil, err
	}
	if snap.TrialEnd == nil {
		return s.confirmFirstCharge(ctx, sub, c, saver, in, now)
	}
	// Each confirmation is a setup of its own (a declined card is followed by another), so the
	// key is new each time; a crash after the setup leaves a method saved at the processor
	// that Kassa never charges.
	res, act, err := s.setupMethod(ctx, saver, scope, sub.ID(), "", piID, c, in, now)
	if err != nil {
		return nil, err
	}
	if act != nil {
		return &FirstPayment{Subscription: sub, Action: act}, nil
	}
	return s.startTrial(ctx, sub, now, func(ctx context.Context, tx Tx) (*PaymentMethod, error) {
		// This card replaces one still waiting for 3-D Secure: that answer saves nothing now.
		if err := tx.PendingSetups().Delete(ctx, scope, sub.ID()); err != nil {
			return nil, err
		}
		_, pm, err := RecordSavedMethod(ctx, tx, scope, c.ID(), Saved{Type: in.Method, ProcessorRef: res.PaymentMethodRef,
			Card: res.Card, SEPA: res.SEPA}, res.CustomerRef, true, now)
		return pm, err
	})
}

// startTrial records, in one unit of work, the method of a trial's first payment (record)
// as the customer's default and the subscription's, and makes the subscription trialing
// (customer.subscription.updated).
func (s *Service) startTrial(ctx context.Context, sub *Subscription, now time.Time,
	record func(ctx context.Context, tx Tx) (*PaymentMethod, error)) (*FirstPayment, error) {
	scope := sub.Scope()
	var out *Subscription
	err := s.uow.Do(ctx, func(ctx context.Context, tx Tx) error {
		locked, err := tx.Subscriptions().Lock(ctx, scope, sub.ID())
		if err != nil {
			return subscriptionNotFound(err)
		}
		if err := locked.CheckConfirmable(now); err != nil {
			return err // confirmed by a concurrent request, or expired meanwhile
		}
		pm, err := record(ctx, tx)
		if err != nil {
			return err
		}
		ch, err := locked.StartTrial(DefaultMethod{ID: pm.ID(), Summary: pm.Summary()}, now)
		if err != nil {
			return err
		}
		if err := tx.Subscriptions().Save(ctx, locked); err != nil {
			return err
		}
		out = locked
		return tx.Outbox().Add(ctx, changeEvents(ch, locked, now)...)
	})
	if err != nil {
		return nil, err
	}
	return &FirstPayment{Subscription: out}, nil
}

// ResolveFirstPayment answers, with the customer's 3-D Secure answer, what first payment piID
// waits for (the secret and state checks are ConfirmFirstPayment's). A pending setup is
// answered at the processor with no transaction open; approved, the method is recorded as the
// customer's default (deleting the pending setup in the same unit of work), then, as after a
// setup that needed nothing, the trial starts or the first invoice is charged with it (which
// may ask for 3-D Secure in its turn: the answer is then requires_action again). Refused, the
// setup is over and the answer is a *DeclineError (authentication_failed); the customer may
// try again. Otherwise a first invoice's charge waiting for 3-D Secure is answered through the
// charge protocol. Nothing waiting: ErrNoPendingAction.
func (s *Service) ResolveFirstPayment(ctx context.Context, piID, secret string, approve bool) (*FirstPayment, error) {
	sub, err := s.openFirstPayment(ctx, piID, secret)
	if err != nil {
		return nil, err
	}
	scope := sub.Scope()
	now, err := s.clocks.Now(ctx, scope)
	if err != nil {
		return nil, err
	}
	if err := sub.CheckConfirmable(now); err != nil {
		return nil, err
	}
	p, res, err := s.completeSetup(ctx, scope, sub.ID(), nil, approve, now)
	if errors.Is(err, ErrNoPendingSetup) {
		return s.resolveFirstCharge(ctx, sub, approve, now)
	}
	if err != nil {
		return nil, err
	}
	c, err := s.Customer(ctx, scope, sub.Customer())
	if err != nil {
		return nil, err
	}
	record := func(ctx context.Context, tx Tx) (*PaymentMethod, error) {
		return finishSetup(ctx, tx, p, c.ID(), res, true, now)
	}
	var fp *FirstPayment
	if sub.s.TrialEnd != nil {
		fp, err = s.startTrial(ctx, sub, now, record)
	} else {
		fp, err = s.recordAndChargeFirst(ctx, sub, ports.MethodCard, record, now)
	}
	if errors.Is(err, ErrNoPendingSetup) {
		return nil, ErrNoPendingAction // answered by a concurrent request
	}
	return fp, err
}

// setupForFirstPayment saves the method of a subscription's first payment piID at the
// processor (no money moves; called outside any transaction) under a new idempotency key per
// confirmation, since a declined card is followed by another. A method the processor refuses
// answers a DeclineError; one that needs authentication answers its requires_action result.
func setupForFirstPayment(ctx context.Context, saver ports.MethodSaver, scope core.Scope, reference, piID string, c *Customer,
	in MethodInput, now time.Time) (ports.SetupResult, error) {
	res, err := saver.SetupPaymentMethod(ctx, ports.SetupRequest{Scope: scope, Reference: reference,
		Customer: ports.SetupCustomer{ID: c.ID(), Name: c.Name(), Email: c.Email(), ProcessorRef: c.ProcessorRef()},
		Method:   in.Method, Card: in.Card, SEPA: in.SEPA, IdempotencyKey: piID + ":" + core.RandomBase62(12)}, now)
	if err != nil {
		return res, err
	}
	switch res.Outcome {
	case ports.OutcomeSucceeded, ports.OutcomeRequiresAction:
		return res, nil
	default:
		return res, &DeclineError{DeclineCode: res.DeclineCode, Message: res.FailureMessage, Param: payments.DeclineParam(res.DeclineCode)}
	}
}
