package invoicing

import (
	"context"
	"errors"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/ports"
)

// PayInput is what the customer typed on the hosted page.
type PayInput struct {
	Method ports.PaymentMethodKind
	Card   *ports.CardDetails
	SEPA   *ports.SEPADetails
}

// PayStatus is where a payment left the invoice.
type PayStatus string

const (
	PaySucceeded      PayStatus = "succeeded"
	PayProcessing     PayStatus = "processing"
	PayRequiresAction PayStatus = "requires_action"
)

// PayResult is a payment that went through (a decline is a *DeclineError).
type PayResult struct {
	Status  PayStatus
	Invoice *Invoice
	Action  *ports.ChargeAction
}

// DeclineError is a declined payment (402 card_error): the invoice stays open.
type DeclineError struct {
	DeclineCode, Message, Param string
}

func (e *DeclineError) Error() string { return e.Message }

// CoreError is the documented 402 card_error / card_declined; the decline code travels
// beside it.
func (e *DeclineError) CoreError() *core.Error {
	return core.NewError(core.TypeCard, "card_declined", e.Param, e.Message)
}

// Pay charges the customer's card or bank account for the sent invoice of public token t,
// through the charge protocol of payments (the invoice is the payable; Payables its owner).
// The input is checked first (400 naming the field). A paid or void invoice takes no payment
// (422 invoice_not_open). On success the payment carries invoice_id, the fee and its receipt
// e-mail, with payment_intent.succeeded and invoice.paid; a decline writes
// payment_intent.payment_failed and invoice.payment_failed.
//
// Pay must not be called inside a unit of work.
func (s *Service) Pay(ctx context.Context, token string, in PayInput) (*PayResult, error) {
	h, err := s.Hosted(ctx, token)
	if err != nil {
		return nil, err
	}
	inv := h.Invoice
	if !inv.Payable() {
		return nil, ErrNotOpen
	}
	if _, ok := s.charger.Processor(inv.Scope().Env); !ok {
		return nil, ErrProcessorUnavailable
	}
	now, err := s.clocks.Now(ctx, inv.Scope())
	if err != nil {
		return nil, err
	}
	if err := payments.ValidateMethod(in.Method, in.Card, in.SEPA, inv.Currency(), "invoices", now); err != nil {
		return nil, err
	}
	req := payments.ChargeRequest{Kind: Kind.Name, Scope: inv.Scope(), PayableID: inv.ID(), Now: now,
		Method: in.Method, Source: payments.Source{Card: in.Card, SEPA: in.SEPA}}
	if sub := inv.Subscription(); sub != nil && s.methods != nil {
		// A subscription's invoice saves the method first (the processor is called with no
		// transaction open); the charge then uses the saved method, and the unit of work that
		// records the invoice paid makes it the subscription's default. A method the processor
		// refuses is charged as typed, so the decline goes through the charge as before, and
		// nothing becomes the default. One whose saving asks for 3-D Secure charges nothing yet:
		// the customer answers the challenge first (ResolveAction).
		saved, err := s.methods.SaveInvoiceMethod(ctx, inv.Scope(), *sub, inv.ID(), in, now)
		if err != nil {
			return nil, err
		}
		if saved != nil && saved.Action != nil {
			return &PayResult{Status: PayRequiresAction, Invoice: inv, Action: saved.Action}, nil
		}
		if saved != nil {
			req.Source = payments.Source{PaymentMethodRef: saved.ProcessorRef}
			req.SavedMethod = saved.ID
		}
	}
	return s.charge(ctx, req)
}

// SavedMethod is a payment method saved for a subscription's invoice: its id (pm_…) and its
// reference at the processor; or, when its saving waits for 3-D Secure, only Action.
type SavedMethod struct {
	ID, ProcessorRef string
	Action           *ports.ChargeAction
}

// SubscriptionMethods saves, for the customer of subscription sub, the method its invoice is
// paid with on the hosted page: the processor's setup, with no transaction open, then the
// method recorded in a unit of work of its own. It answers nil, and no error, when the
// processor refuses it, and a SavedMethod with only Action when saving it asks for 3-D Secure;
// CompleteInvoiceSetup then answers that step (nil, and no error, when no setup of the
// invoice waits; a refused challenge is a *DeclineError).
type SubscriptionMethods interface {
	SaveInvoiceMethod(ctx context.Context, scope core.Scope, sub, invoiceID string, in PayInput, now time.Time) (*SavedMethod, error)
	CompleteInvoiceSetup(ctx context.Context, scope core.Scope, sub, invoiceID string, approve bool, now time.Time) (*SavedMethod, error)
}

// ResolveAction answers what the invoice waits for: the 3-D Secure step of saving the method
// of a subscription's invoice (then, approved, the invoice is charged with the saved method,
// as Pay does after a setup that needed nothing), or its charge waiting for 3-D Secure.
func (s *Service) ResolveAction(ctx context.Context, token string, approve bool) (*PayResult, error) {
	h, err := s.Hosted(ctx, token)
	if err != nil {
		return nil, err
	}
	inv := h.Invoice
	now, err := s.clocks.Now(ctx, inv.Scope())
	if err != nil {
		return nil, err
	}
	if sub := inv.Subscription(); sub != nil && s.methods != nil && inv.Payable() {
		saved, err := s.methods.CompleteInvoiceSetup(ctx, inv.Scope(), *sub, inv.ID(), approve, now)
		if err != nil {
			return nil, err
		}
		if saved != nil {
			return s.charge(ctx, payments.ChargeRequest{Kind: Kind.Name, Scope: inv.Scope(), PayableID: inv.ID(), Now: now,
				Method: ports.MethodCard, Source: payments.Source{PaymentMethodRef: saved.ProcessorRef}, SavedMethod: saved.ID})
		}
	}
	return s.charge(ctx, payments.ChargeRequest{Kind: Kind.Name, Scope: inv.Scope(), PayableID: inv.ID(), Now: now,
		Answer: &payments.ActionAnswer{Approve: approve}})
}

// ErrProcessorUnavailable: no processor charges the invoice's environment.
var ErrProcessorUnavailable = core.NewError(core.TypeAPI, "processor_unavailable", "",
	"Payments are not available right now. Nothing was charged; try again later.")

// ErrNoPendingAction: no charge of the invoice waits for authentication.
var ErrNoPendingAction = core.NewError(core.TypeInvalidState, "no_action_pending", "",
	"No payment of this invoice is waiting for authentication.")

func (s *Service) charge(ctx context.Context, req payments.ChargeRequest) (*PayResult, error) {
	r, err := s.charger.Charge(ctx, req)
	if errors.Is(err, payments.ErrNoCustomerAction) {
		return nil, ErrNoPendingAction
	}
	if err != nil {
		return nil, err
	}
	inv, err := invoiceOf(r.Payable)
	if err != nil {
		return nil, err
	}
	if !r.Applied { // someone else applied it first: answer from the invoice as it is
		switch {
		case inv.Status() == StatusPaid:
			return &PayResult{Status: PaySucceeded, Invoice: inv}, nil
		case inv.Processing():
			return &PayResult{Status: PayProcessing, Invoice: inv}, nil
		case inv.charge.Pending != nil:
			act := inv.charge.Pending.Action
			return &PayResult{Status: PayRequiresAction, Invoice: inv, Action: &act}, nil
		}
		return nil, ErrNotOpen
	}
	if d := r.Decline; d != nil {
		return nil, &DeclineError{DeclineCode: d.Code, Message: d.Message, Param: d.Param}
	}
	if r.Action != nil {
		return &PayResult{Status: PayRequiresAction, Invoice: inv, Action: r.Action}, nil
	}
	if inv.Processing() {
		return &PayResult{Status: PayProcessing, Invoice: inv}, nil
	}
	return &PayResult{Status: PaySucceeded, Invoice: inv}, nil
}
