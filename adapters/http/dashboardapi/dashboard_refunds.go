package dashboardapi

import (
	"context"
	"errors"

	"github.com/kassa-pay/kassa/adapters/http/kit"
	"github.com/kassa-pay/kassa/adapters/http/present"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

// errNoRefunds answers a refund request on a server wired without the refunder.
var errNoRefunds = errors.New("dashboard: refunds are not wired")

// CreateRefund refunds a payment (payments.Refunder). The operation is of the gate's phased
// shape: with an Idempotency-Key a double submit makes one refund, and a retry after a crash
// resumes the refund the first request recorded.
func (a *dashboardAPI) CreateRefund(ctx context.Context, r dash.CreateRefundRequestObject) (dash.CreateRefundResponseObject, error) {
	if a.d.Refunds == nil {
		return nil, errNoRefunds
	}
	reason := payments.ReasonRequestedByCustomer
	var amount *int64
	if r.Body != nil {
		amount = r.Body.Amount
		if r.Body.Reason != nil {
			reason = payments.RefundReason(*r.Body.Reason)
		}
	}
	rf, err := a.d.Refunds.Refund(ctx, payments.RefundRequest{Scope: kit.CallerFrom(ctx).Scope, PaymentID: r.Id,
		Amount: amount, Reason: reason})
	if err != nil {
		return nil, err
	}
	return dash.CreateRefund201JSONResponse{Body: refundOf(rf)}, nil
}

// ListRefunds lists the environment's refunds.
func (a *dashboardAPI) ListRefunds(ctx context.Context, r dash.ListRefundsRequestObject) (dash.ListRefundsResponseObject, error) {
	if a.d.Refunds == nil {
		return nil, errNoRefunds
	}
	p := r.Params
	page, err := a.d.Refunds.Refunds(ctx, kit.CallerFrom(ctx).Scope, present.ListQuery(p.Limit, p.StartingAfter, p.EndingBefore), "")
	if err != nil {
		return nil, err
	}
	out := dash.RefundList{Object: wire.ListObjectList, HasMore: page.HasMore, Url: "/api/v1/" + string(r.Env) + "/refunds",
		Data: make([]dash.Refund, 0, len(page.Items))}
	for _, rf := range page.Items {
		out.Data = append(out.Data, refundOf(rf))
	}
	return dash.ListRefunds200JSONResponse{Body: out}, nil
}

// paymentRefunds lists the refunds of one payment for its detail (at most 100, newest first).
func (a *dashboardAPI) paymentRefunds(ctx context.Context, scope core.Scope, paymentID string) ([]dash.Refund, error) {
	out := []dash.Refund{}
	if a.d.Refunds == nil {
		return out, nil
	}
	page, err := a.d.Refunds.Refunds(ctx, scope, core.ListQuery{Limit: 100}, paymentID)
	if err != nil {
		return nil, err
	}
	for _, rf := range page.Items {
		out = append(out, refundOf(rf))
	}
	return out, nil
}

func refundOf(rf *payments.Refund) dash.Refund {
	out := dash.Refund{Id: rf.ID(), Object: "refund", Payment: rf.PaymentID(), Amount: rf.Amount(),
		Currency: string(rf.Currency()), Reason: dash.RefundReason(rf.Reason()), Status: dash.RefundStatus(rf.Status()),
		Created: rf.Created().Unix()}
	f := rf.FeeReversed()
	out.FeeReversed.ServiceFeeEur, out.FeeReversed.PspFeeEur = f.ServiceFeeEUR, f.PSPFeeEUR
	out.FeeReversed.ServiceFeeChargeCurrency, out.FeeReversed.Currency = f.ServiceFeeChargeCurrency, string(rf.Currency())
	return out
}
