package present

import (
	"context"
	"fmt"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/checkout"
	"github.com/kassa-pay/kassa/modules/payments"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

// AnyDispute renders a dispute: the data.object of charge.dispute.created.
func AnyDispute(d *payments.Dispute) any {
	return wire.Dispute{
		Id: d.ID(), Object: wire.DisputeObjectDispute, PaymentId: d.PaymentID(), Amount: d.Amount(),
		Currency: string(d.Currency()), Reason: d.Reason(), Status: wire.DisputeStatus(d.Status()),
		EvidenceDueBy: d.EvidenceDueBy().Unix(), Created: d.Created().Unix(),
	}
}

// SessionReader reads one checkout session (checkout.Service and its store implement it).
type SessionReader interface {
	Get(ctx context.Context, scope core.Scope, id string) (*checkout.Session, error)
}

// SessionRenderer renders a session with a given payment embedded (payments.SessionRenderer):
// the payments sweep changes a payment after its session completed, and the
// checkout.session.async_payment_* events carry the session as it is after that change.
type SessionRenderer struct{ Sessions SessionReader }

var _ payments.SessionRenderer = SessionRenderer{}

// RenderSession reads the session and renders it with p in place of its stored payment.
func (r SessionRenderer) RenderSession(ctx context.Context, scope core.Scope, id string, p *payments.Payment) (any, error) {
	s, err := r.Sessions.Get(ctx, scope, id)
	if err != nil {
		return nil, err
	}
	snap := s.Snapshot()
	if sid := p.SessionID(); sid == nil || *sid != snap.ID {
		return nil, fmt.Errorf("render session %s: the payment belongs to another session", snap.ID)
	}
	snap.Payment = p
	return Session(checkout.RehydrateSession(snap)), nil
}

// AsyncPresenters are the presenters of the payments sweep's events.
func AsyncPresenters(sessions SessionReader) payments.Presenters {
	return payments.Presenters{Payment: AnyPayment, Dispute: AnyDispute, Session: SessionRenderer{Sessions: sessions}}
}
