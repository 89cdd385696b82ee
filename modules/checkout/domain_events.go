package checkout

import (
	"context"
	"fmt"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
)

// SessionEvent reports a change of a checkout session (completed, expired, canceled, the
// async_payment_* events); data.object is the session with its payment. The charge events
// without a payment (a declined charge, one waiting on the shopper) are payments' own
// (payments.ChargeDeclined, payments.ChargeRequiresAction).
type SessionEvent struct{ Session *Session }

// EventObjectID is the session's id.
func (e SessionEvent) EventObjectID() string { return e.Session.ID() }

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
