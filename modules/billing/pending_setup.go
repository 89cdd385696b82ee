package billing

import (
	"context"
	"errors"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// PendingSetup is a payment method being saved for a subscription that waits for the
// customer's 3-D Secure challenge: the processor answered the setup requires_action. The
// customer's answer goes to the processor (CompleteAction with ProcessorRef, no transaction
// open), and the method is recorded in the unit of work that deletes the pending setup; only
// then is anything charged with it. One per subscription: a new setup replaces it. It is
// deleted too, in the unit of work of the event that makes it stale, so that an old answer
// saves and charges nothing: another card recorded for the first payment, the invoice it is
// for paid (by any method), the subscription ended (canceled, incomplete_expired).
type PendingSetup struct {
	Scope        core.Scope
	Subscription string
	// Invoice is the invoice the method is saved to pay ("" for a trial's first payment,
	// which charges nothing).
	Invoice      string
	ProcessorRef string
	CustomerRef  string
	Created      time.Time
}

// PendingSetupRepository keeps pending setups inside a unit of work.
type PendingSetupRepository interface {
	// Put writes p, replacing the subscription's pending setup if it has one.
	Put(ctx context.Context, p PendingSetup) error
	// Lock reads the subscription's pending setup FOR UPDATE; none is ErrNoPendingSetup.
	Lock(ctx context.Context, scope core.Scope, subscriptionID string) (PendingSetup, error)
	// Delete removes the subscription's pending setup; none is not an error.
	Delete(ctx context.Context, scope core.Scope, subscriptionID string) error
	// DeleteForInvoices removes, with one statement, the pending setup of each ref's
	// subscription if it was made for the ref's invoice (paid invoices ask for it every time,
	// a charge batch's together); none is not an error.
	DeleteForInvoices(ctx context.Context, refs []SetupRef) error
}

// SetupRef names a subscription's pending setup made for an invoice.
type SetupRef struct {
	Scope        core.Scope
	Subscription string
	Invoice      string
}

// ErrNoPendingSetup: no setup of the subscription waits for 3-D Secure (store sentinel).
var ErrNoPendingSetup = errors.New("billing: no setup waits for authentication")

// ErrNoPendingAction: nothing of the first payment waits for the customer's 3-D Secure answer
// (422, as the checkout session's answer).
var ErrNoPendingAction = core.NewError(core.TypeInvalidState, "no_action_pending", "",
	"No payment of this subscription is waiting for authentication.")

// threeDSAction is the action a pending setup waits for.
var threeDSAction = ports.ChargeAction{Kind: ports.ActionThreeDSecure}

// setupMethod saves in's method for customer c at the processor (no transaction open) under
// a new idempotency key per confirmation (a declined card is followed by another). It answers
// the succeeded setup; or, when the processor asks for 3-D Secure, records the pending setup
// of subscription subID for invoiceID and answers the action with an empty result; a refusal
// is a *DeclineError.
func (s *Service) setupMethod(ctx context.Context, saver ports.MethodSaver, scope core.Scope, subID, invoiceID, keyBase string,
	c *Customer, in MethodInput, now time.Time) (ports.SetupResult, *ports.ChargeAction, error) {
	reference := invoiceID
	if reference == "" {
		reference = keyBase
	}
	res, err := setupForFirstPayment(ctx, saver, scope, reference, keyBase, c, in, now)
	if err != nil {
		return res, nil, err
	}
	if res.Outcome != ports.OutcomeRequiresAction {
		return res, nil, nil
	}
	act := threeDSAction
	if res.Action != nil {
		act = *res.Action
	}
	p := PendingSetup{Scope: scope, Subscription: subID, Invoice: invoiceID, ProcessorRef: res.ProcessorRef,
		CustomerRef: res.CustomerRef, Created: now}
	if err := s.uow.Do(ctx, func(ctx context.Context, tx Tx) error { return tx.PendingSetups().Put(ctx, p) }); err != nil {
		return ports.SetupResult{}, nil, err
	}
	return ports.SetupResult{}, &act, nil
}

// completeSetup answers the pending setup of subscription subID with the customer's 3-D
// Secure answer, at the processor and with no transaction open (CompleteAction answers the
// same when asked again, so an answer repeated after a crash records the same method). It
// answers ErrNoPendingSetup when none waits (or one for another invoice than invoiceID, when
// invoiceID is given). A refused challenge deletes the pending setup and answers a
// *DeclineError (authentication_failed). An approved one answers the saved method, which the
// caller records with finishSetup in its unit of work.
func (s *Service) completeSetup(ctx context.Context, scope core.Scope, subID string, invoiceID *string, approve bool, now time.Time) (PendingSetup, ports.SetupResult, error) {
	p, err := s.store.PendingSetup(ctx, scope, subID)
	if err != nil {
		return p, ports.SetupResult{}, err
	}
	if invoiceID != nil && p.Invoice != *invoiceID {
		return p, ports.SetupResult{}, ErrNoPendingSetup
	}
	if s.charger == nil {
		return p, ports.SetupResult{}, ErrProcessorUnavailable
	}
	proc, ok := s.charger.Processor(scope.Env)
	if !ok {
		return p, ports.SetupResult{}, ErrProcessorUnavailable
	}
	r, err := proc.CompleteAction(ctx, p.ProcessorRef, approve, now)
	if err != nil {
		return p, ports.SetupResult{}, err
	}
	if r.Outcome == ports.OutcomeSucceeded && r.PaymentMethodRef != "" {
		return p, ports.SetupResult{Outcome: r.Outcome, ProcessorRef: r.ProcessorRef, CustomerRef: p.CustomerRef,
			PaymentMethodRef: r.PaymentMethodRef, Card: r.Card}, nil
	}
	// Refused (or an answer that saved nothing): the setup is over; the customer may try again.
	if err := s.uow.Do(ctx, func(ctx context.Context, tx Tx) error {
		return tx.PendingSetups().Delete(ctx, scope, subID)
	}); err != nil {
		return p, ports.SetupResult{}, err
	}
	code := r.DeclineCode
	if code == "" {
		code = ports.DeclineAuthenticationFailed
	}
	return p, ports.SetupResult{}, &DeclineError{DeclineCode: code, Message: authFailedMessage}
}

const authFailedMessage = "The authentication of your card failed. Try again or use another card."

// finishSetup records, in the caller's unit of work, the method saved by the completed setup
// res of pending setup p for customer customerID, and deletes p. The subscription's pending
// setup is locked first, so that of two answers only one records it; the other answers
// ErrNoPendingSetup.
func finishSetup(ctx context.Context, tx Tx, p PendingSetup, customerID string, res ports.SetupResult, makeDefault bool, now time.Time) (*PaymentMethod, error) {
	locked, err := tx.PendingSetups().Lock(ctx, p.Scope, p.Subscription)
	if err != nil {
		return nil, err
	}
	if locked.ProcessorRef != p.ProcessorRef {
		return nil, ErrNoPendingSetup // replaced by a newer setup meanwhile
	}
	if err := tx.PendingSetups().Delete(ctx, p.Scope, p.Subscription); err != nil {
		return nil, err
	}
	_, pm, err := RecordSavedMethod(ctx, tx, p.Scope, customerID, Saved{Type: ports.MethodCard, ProcessorRef: res.PaymentMethodRef,
		Card: res.Card}, res.CustomerRef, makeDefault, now)
	return pm, err
}
