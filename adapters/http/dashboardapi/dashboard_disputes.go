package dashboardapi

import (
	"context"
	"errors"
	"time"

	"github.com/kassa-pay/kassa/adapters/http/kit"
	render "github.com/kassa-pay/kassa/adapters/wire"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

// errNoDisputes answers a dispute request on a server wired without the dispute lifecycle.
var errNoDisputes = errors.New("dashboard: disputes are not wired")

// ListDisputes lists the environment's disputes, those that need a response first.
func (a *dashboardAPI) ListDisputes(ctx context.Context, r dash.ListDisputesRequestObject) (dash.ListDisputesResponseObject, error) {
	if a.d.Disputes == nil {
		return nil, errNoDisputes
	}
	scope := kit.CallerFrom(ctx).Scope
	limit := 10
	if r.Params.Limit != nil {
		limit = *r.Params.Limit
	}
	after := ""
	if r.Params.StartingAfter != nil {
		after = *r.Params.StartingAfter
	}
	ds, more, err := a.d.Disputes.List(ctx, scope, after, limit)
	if err != nil {
		return nil, err
	}
	now, err := a.d.Disputes.Now(ctx, scope)
	if err != nil {
		return nil, err
	}
	out := dash.DisputeList{Object: wire.ListObjectList, HasMore: more, Url: "/api/v1/" + string(r.Env) + "/disputes",
		Data: make([]dash.DashboardDispute, 0, len(ds))}
	for _, d := range ds {
		out.Data = append(out.Data, disputeOf(d, now))
	}
	return dash.ListDisputes200JSONResponse{Body: out}, nil
}

// GetDispute reads one dispute.
func (a *dashboardAPI) GetDispute(ctx context.Context, r dash.GetDisputeRequestObject) (dash.GetDisputeResponseObject, error) {
	if a.d.Disputes == nil {
		return nil, errNoDisputes
	}
	scope := kit.CallerFrom(ctx).Scope
	d, err := a.d.Disputes.Get(ctx, scope, r.Id)
	if err != nil {
		return nil, err
	}
	now, err := a.d.Disputes.Now(ctx, scope)
	if err != nil {
		return nil, err
	}
	return dash.GetDispute200JSONResponse{Body: disputeOf(d, now)}, nil
}

// SubmitDisputeEvidence saves or submits evidence (payments.Disputes.SaveEvidence). It only
// writes the database, so with an Idempotency-Key it runs in the gate's one transaction.
func (a *dashboardAPI) SubmitDisputeEvidence(ctx context.Context, r dash.SubmitDisputeEvidenceRequestObject) (dash.SubmitDisputeEvidenceResponseObject, error) {
	if a.d.Disputes == nil {
		return nil, errNoDisputes
	}
	scope := kit.CallerFrom(ctx).Scope
	submit := r.Body.Submit != nil && *r.Body.Submit
	d, err := a.d.Disputes.SaveEvidence(ctx, payments.EvidenceRequest{Scope: scope, DisputeID: r.Id, Text: r.Body.Text, Submit: submit})
	if err != nil {
		return nil, err
	}
	now, err := a.d.Disputes.Now(ctx, scope)
	if err != nil {
		return nil, err
	}
	return dash.SubmitDisputeEvidence200JSONResponse{Body: disputeOf(d, now)}, nil
}

// paymentDispute is the dispute of a payment for its detail; nil when it has none.
func (a *dashboardAPI) paymentDispute(ctx context.Context, scope core.Scope, paymentID string) (*dash.DashboardDispute, error) {
	if a.d.Disputes == nil {
		return nil, nil
	}
	d, err := a.d.Disputes.OfPayment(ctx, scope, paymentID)
	if err != nil || d == nil {
		return nil, err
	}
	now, err := a.d.Disputes.Now(ctx, scope)
	if err != nil {
		return nil, err
	}
	out := disputeOf(d, now)
	return &out, nil
}

// disputeOf renders a dispute for the dashboard at the scope's time now: the merchant API's
// dispute with its evidence and the seconds left to respond.
func disputeOf(d *payments.Dispute, now time.Time) dash.DashboardDispute {
	w := render.Dispute(d)
	out := dash.DashboardDispute{
		Id: w.Id, Object: dash.DashboardDisputeObjectDispute, PaymentId: w.PaymentId, Amount: w.Amount,
		Currency: w.Currency, Reason: w.Reason, Status: dash.DashboardDisputeStatus(w.Status),
		EvidenceDueBy: w.EvidenceDueBy, Created: w.Created, PastDue: d.PastDue(now),
		EvidenceSubmittedAt: w.EvidenceSubmittedAt, ClosedAt: w.ClosedAt, Fee: w.Fee, FeeEur: w.FeeEur,
		FeeRate: w.FeeRate, Evidence: d.Evidence(),
	}
	if d.Status() == payments.DisputeNeedsResponse {
		left := int64(d.EvidenceDueBy().Sub(now) / time.Second)
		out.SecondsLeft = &left
		if left < 0 {
			*out.SecondsLeft = 0
		}
	}
	return out
}
