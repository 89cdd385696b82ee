package payments

import (
	"context"

	"github.com/kassa-pay/kassa/core"
)

// PaymentEvent reports a change of a payment (payment_intent.succeeded and
// payment_intent.payment_failed of a settled debit); data.object is the payment.
type PaymentEvent struct{ Payment *Payment }

// EventObjectID is the payment's id.
func (e PaymentEvent) EventObjectID() string { return e.Payment.ID() }

// DisputeEvent reports a dispute opened on a payment (charge.dispute.created); data.object is
// the dispute.
type DisputeEvent struct{ Dispute *Dispute }

// EventObjectID is the dispute's id.
func (e DisputeEvent) EventObjectID() string { return e.Dispute.ID() }

// SessionEvents gives the domain event of the checkout session a payment belongs to, as the
// session is with p in place of its stored payment: the subject of the
// checkout.session.async_payment_* events the sweep writes when a payment settles. The
// checkout module implements it (it depends on payments, so payments never imports it).
type SessionEvents interface {
	SessionEventWithPayment(ctx context.Context, scope core.Scope, sessionID string, p *Payment) (core.DomainEvent, error)
}
