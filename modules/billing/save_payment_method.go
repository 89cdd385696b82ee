package billing

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// MethodInput is a payment method to save: exactly one of Card (Method card) and SEPA
// (Method sepa_debit). It lives only for the call.
type MethodInput struct {
	Method ports.PaymentMethodKind
	Card   *ports.CardDetails
	SEPA   *ports.SEPADetails
	// Reference is the Kassa object the method is saved for (in_…); the customer's id when
	// empty.
	Reference string
	// IdempotencyKey is the setup's key at the processor (required): a retried save with the
	// same key saves one method.
	IdempotencyKey string
	// MakeDefault makes the saved method the customer's default (it is anyway when the
	// customer has none).
	MakeDefault bool
}

// SaveOutcome is what a save came to. Method is set when the processor saved it; otherwise
// Outcome is failed (DeclineCode, FailureMessage) or requires_action (Action, ProcessorRef:
// the customer authenticates, then CompleteSave).
type SaveOutcome struct {
	Customer       *Customer
	Method         *PaymentMethod
	Outcome        ports.ChargeOutcome
	ProcessorRef   string
	DeclineCode    string
	FailureMessage string
	Action         *ports.ChargeAction
}

// SavePaymentMethod saves a payment method for customerID without moving money: the
// processor's setup runs with no transaction open, then the method is recorded (and made the
// default) in one unit of work. A crash between the two leaves a method saved at the
// processor that Kassa never charges; the retried save with the same key records it.
func (s *Service) SavePaymentMethod(ctx context.Context, scope core.Scope, customerID string, in MethodInput) (*SaveOutcome, error) {
	if in.IdempotencyKey == "" || !in.Method.Valid() {
		return nil, fmt.Errorf("billing: save payment method: a key and a method are required")
	}
	saver, ok := s.savers[scope.Env]
	if !ok {
		return nil, ErrProcessorUnavailable
	}
	c, err := s.Customer(ctx, scope, customerID)
	if err != nil {
		return nil, err
	}
	now, err := s.clocks.Now(ctx, scope)
	if err != nil {
		return nil, err
	}
	ref := in.Reference
	if ref == "" {
		ref = c.ID()
	}
	res, err := saver.SetupPaymentMethod(ctx, ports.SetupRequest{Scope: scope, Reference: ref,
		Customer: ports.SetupCustomer{ID: c.ID(), Name: c.Name(), Email: c.Email(), ProcessorRef: c.ProcessorRef()},
		Method:   in.Method, Card: in.Card, SEPA: in.SEPA, IdempotencyKey: in.IdempotencyKey}, now)
	if err != nil {
		return nil, err
	}
	out := &SaveOutcome{Customer: c, Outcome: res.Outcome, ProcessorRef: res.ProcessorRef,
		DeclineCode: res.DeclineCode, FailureMessage: res.FailureMessage, Action: res.Action}
	if res.Outcome != ports.OutcomeSucceeded {
		return out, nil
	}
	err = s.uow.Do(ctx, func(ctx context.Context, tx Tx) error {
		cu, pm, err := RecordSavedMethod(ctx, tx, scope, customerID, Saved{Type: in.Method, ProcessorRef: res.PaymentMethodRef,
			Card: res.Card, SEPA: res.SEPA}, res.CustomerRef, in.MakeDefault, now)
		out.Customer, out.Method = cu, pm
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// RecordSavedMethod records, inside the caller's unit of work, a method the processor saved
// for customerID (by a setup, or by a charge that asked to save its method): the customer is
// locked, the method inserted (one already recorded with the same processor reference is
// answered instead) and attached, and the customer saved.
func RecordSavedMethod(ctx context.Context, tx Tx, scope core.Scope, customerID string, saved Saved, processorCustomer string,
	makeDefault bool, now time.Time) (*Customer, *PaymentMethod, error) {
	c, err := tx.Customers().Lock(ctx, scope, customerID)
	if err != nil {
		return nil, nil, customerNotFound(err)
	}
	pm, err := NewPaymentMethod(c, saved, now)
	if err != nil {
		return nil, nil, err
	}
	if err := tx.PaymentMethods().Insert(ctx, pm); errors.Is(err, ErrMethodExists) {
		if pm, err = tx.PaymentMethods().ByProcessorRef(ctx, scope, saved.ProcessorRef); err != nil {
			return nil, nil, err
		}
	} else if err != nil {
		return nil, nil, err
	}
	if err := c.AttachMethod(pm, processorCustomer, makeDefault, now); err != nil {
		return nil, nil, err
	}
	if err := tx.Customers().Save(ctx, c); err != nil {
		return nil, nil, err
	}
	return c, pm, nil
}

// SaveInvoiceMethod saves the method the customer pays invoice invoiceID of subscription
// subID with on the invoice's hosted page (what Stripe calls save_default_payment_method
// on_subscription): the processor's setup runs with no transaction open, then the method is
// recorded for the subscription's customer in one unit of work (the customer's default only
// when they have none). It becomes the subscription's default later, in the unit of work that
// records the invoice paid (InvoicePaid). A crash between the two leaves a method saved and
// recorded that nothing uses yet. A setup that asks for 3-D Secure is kept as the
// subscription's pending setup and its action answered (nothing is charged until the
// customer answers it: CompleteInvoiceSetup). It answers nil, and no error, when nothing was
// saved: the processor refused the method (the charge then uses the method as typed, and
// declines it), no processor saves methods in the environment, or the subscription is gone.
func (s *Service) SaveInvoiceMethod(ctx context.Context, scope core.Scope, subID, invoiceID string, in MethodInput, now time.Time) (*PaymentMethod, *ports.ChargeAction, error) {
	saver, ok := s.savers[scope.Env]
	if !ok {
		return nil, nil, nil
	}
	sub, err := s.store.Subscription(ctx, scope, subID)
	if errors.Is(err, ErrSubscriptionMissing) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	c, err := s.Customer(ctx, scope, sub.Customer())
	if err != nil {
		return nil, nil, err
	}
	res, act, err := s.setupMethod(ctx, saver, scope, subID, invoiceID, invoiceID, c, in, now)
	var de *DeclineError
	if errors.As(err, &de) {
		return nil, nil, nil
	}
	if err != nil || act != nil {
		return nil, act, err
	}
	var pm *PaymentMethod
	err = s.uow.Do(ctx, func(ctx context.Context, tx Tx) error {
		_, pm, err = RecordSavedMethod(ctx, tx, scope, c.ID(), Saved{Type: in.Method, ProcessorRef: res.PaymentMethodRef,
			Card: res.Card, SEPA: res.SEPA}, res.CustomerRef, false, now)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return pm, nil, nil
}

// CompleteInvoiceSetup answers, with the customer's 3-D Secure answer on the hosted page of
// invoice invoiceID of subscription subID, the setup that waits for it (SaveInvoiceMethod).
// Approved, the method is recorded for the subscription's customer (their default only when
// they have none) in the unit of work that deletes the pending setup, and answered: the
// invoice is then charged with it, and it becomes the subscription's default when that charge
// pays the invoice. Refused: a *DeclineError (authentication_failed). No setup of this invoice
// waiting: nil, and no error.
func (s *Service) CompleteInvoiceSetup(ctx context.Context, scope core.Scope, subID, invoiceID string, approve bool, now time.Time) (*PaymentMethod, error) {
	sub, err := s.store.Subscription(ctx, scope, subID)
	if errors.Is(err, ErrSubscriptionMissing) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	p, res, err := s.completeSetup(ctx, scope, subID, &invoiceID, approve, now)
	if errors.Is(err, ErrNoPendingSetup) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var pm *PaymentMethod
	err = s.uow.Do(ctx, func(ctx context.Context, tx Tx) error {
		pm, err = finishSetup(ctx, tx, p, sub.Customer(), res, false, now)
		return err
	})
	if errors.Is(err, ErrNoPendingSetup) {
		return nil, nil // answered by a concurrent request
	}
	if err != nil {
		return nil, err
	}
	return pm, nil
}
