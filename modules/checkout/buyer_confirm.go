package checkout

import (
	"context"
	"errors"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
)

// Confirm charges the buyer's card or bank account for an open session (the browser API's
// confirm, the hosted page's pay button). The input is validated first (400 invalid_request
// naming the field) and nothing is charged when it is bad. The charge itself is the charge
// protocol of payments (payments.Charger.Charge), with the session as the payable and
// checkout's Payables as its owner: the attempt is recorded and committed with the session
// marked in flight, the processor is called with no connection held, and the outcome is
// applied once in a second unit of work (succeeded and processing complete the session,
// failed counts a decline and answers *DeclineError, requires_action keeps the charge for
// ResolveAction). docs/composition.md walks through it.
//
// Confirm must not be called inside a unit of work: the attempt has to commit before the call.
//
// Exactly once: while an attempt is in flight the session takes no other; a second
// confirmation (a double submit, two tabs, a replayed post) waits for it (up to
// payments.ChargeWait, then 422 payment_in_progress) and then finds the session complete and
// answers ErrSessionExpired (its client secret is no longer valid, interface 5.2), so there is
// one charge, one payment and one checkout.session.completed. An attempt whose outcome never
// committed (the process died during the call) is resolved by lookup as soon as it is older
// than payments.AttemptGrace: by the next confirmation that meets it, or by the charge-attempt
// sweep.
//
// A session with MaxDeclines declined charges answers ErrConfirmLimit. An environment without
// a processor answers core.ErrMerchantNotReady or ErrProcessorUnavailable.
func (svc *Service) Confirm(ctx context.Context, sessionID, clientSecret string, in ConfirmInput) (*ConfirmResult, error) {
	b, err := svc.buyerSession(ctx, sessionID, clientSecret)
	if err != nil {
		return nil, err
	}
	s := b.session
	if _, err := svc.processorFor(s.Scope(), b.merchant); err != nil {
		return nil, err
	}
	if err := validateConfirm(in, s.Currency(), b.now); err != nil {
		return nil, err
	}
	if s.Mode() == ModeSubscription {
		return svc.confirmSubscription(b, in)
	}
	if s.Amount() <= 0 {
		return nil, ErrSessionNotPayable
	}
	if s.buyer.Declines >= MaxDeclines {
		return nil, ErrConfirmLimit
	}
	return svc.charge(b, payments.ChargeRequest{Kind: Kind.Name, Scope: s.Scope(), PayableID: s.ID(), Now: b.now,
		Method: in.Method, Source: payments.Source{Card: in.Card, SEPA: in.SEPA}})
}

// ErrSessionNotPayable: the session has nothing to charge (an amount of 0).
var ErrSessionNotPayable = core.NewError(core.TypeInvalidState, "session_not_payable", "",
	"This checkout session has no amount to pay.")

// charge runs the charge protocol for the buyer's request b and turns what it came to into the
// use case's answer, carrying the merchant read with the session.
func (svc *Service) charge(b buyerRequest, req payments.ChargeRequest) (*ConfirmResult, error) {
	r, err := svc.charger.Charge(b.ctx, req)
	if errors.Is(err, payments.ErrNoCustomerAction) {
		return nil, ErrNoPendingAction // answered by a concurrent request
	}
	if err != nil {
		return nil, err
	}
	out, err := answer(r)
	if out != nil {
		out.Merchant = b.merchant
	}
	return out, err
}

// answer turns a charge into the use case's answer. A charge that someone else applied first
// (the sweep) is answered from the session as it now is.
func answer(r *payments.Charged) (*ConfirmResult, error) {
	s, ok := r.Payable.(*Session)
	if !ok {
		return nil, errNotASession
	}
	if !r.Applied {
		switch {
		case s.Status() == StatusComplete:
			return &ConfirmResult{Status: confirmStatusOf(s), Session: s}, nil
		case s.buyer.Pending != nil:
			a := s.buyer.Pending.Action
			return &ConfirmResult{Status: ConfirmRequiresAction, Session: s, Action: &a}, nil
		}
		return nil, ErrSessionExpired
	}
	if d := r.Decline; d != nil {
		return nil, &DeclineError{DeclineCode: d.Code, Message: d.Message, Param: d.Param}
	}
	if r.Action != nil {
		a := PendingAction{Kind: r.Action.Kind, RedirectURL: r.Action.RedirectURL}
		return &ConfirmResult{Status: ConfirmRequiresAction, Session: s, Action: &a}, nil
	}
	return &ConfirmResult{Status: confirmStatusOf(s), Session: s}, nil
}

func confirmStatusOf(s *Session) ConfirmStatus {
	if p := s.payment; p != nil && p.Status() == payments.StatusProcessing {
		return ConfirmProcessing
	}
	return ConfirmSucceeded
}
