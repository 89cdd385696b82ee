package checkout

import (
	"context"
	"fmt"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/ports"
)

// SessionEvent reports a change of a checkout session (completed, expired, canceled, the
// async_payment_* events); data.object is the session with its payment.
type SessionEvent struct{ Session *Session }

// EventObjectID is the session's id.
func (e SessionEvent) EventObjectID() string { return e.Session.ID() }

// ChargeDeclined reports a declined charge of a session (payment_intent.payment_failed; no
// payment exists for it, so the event names no object): data.object is {object:
// "payment_intent", session_id, amount, currency, payment_method, failure_code, decline_code,
// failure_message, card or null, created}.
type ChargeDeclined struct {
	SessionID      string
	Amount         int64
	Currency       core.Currency
	Method         ports.PaymentMethodKind
	FailureCode    string // FailureCardDeclined or FailurePaymentMethodDeclined
	DeclineCode    string // ports.Decline*
	FailureMessage string
	Card           *ports.CardInfo // a card charge whose number was readable; nil otherwise
	At             time.Time
}

// EventObjectID is "": a declined charge has no payment.
func (ChargeDeclined) EventObjectID() string { return "" }

// ChargeRequiresAction reports a charge waiting on the shopper (payment_intent.requires_action):
// data.object is {object: "payment_intent", session_id, amount, currency, status:
// "requires_action", payment_method, next_action {type, redirect_url}, card or null, created}.
type ChargeRequiresAction struct {
	SessionID string
	Amount    int64
	Currency  core.Currency
	Method    ports.PaymentMethodKind
	Card      *ports.CardInfo
	Action    PendingAction
	At        time.Time
}

// EventObjectID is "": no payment exists yet.
func (ChargeRequiresAction) EventObjectID() string { return "" }

var _ payments.SessionEvents = (*Service)(nil)

// SessionEventWithPayment implements payments.SessionEvents: the session sessionID with p in
// place of its stored payment (the payments sweep changes a payment after its session
// completed; the checkout.session.async_payment_* events carry the session as it is after
// that change).
func (svc *Service) SessionEventWithPayment(ctx context.Context, scope core.Scope, sessionID string, p *payments.Payment) (core.DomainEvent, error) {
	s, err := svc.store.Get(ctx, scope, sessionID)
	if err != nil {
		return nil, err
	}
	snap := s.Snapshot()
	if sid := p.SessionID(); sid == nil || *sid != snap.ID {
		return nil, fmt.Errorf("checkout: session %s: the payment belongs to another session", snap.ID)
	}
	snap.Payment = p
	return SessionEvent{Session: RehydrateSession(snap)}, nil
}
