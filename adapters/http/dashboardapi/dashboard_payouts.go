package dashboardapi

import (
	"context"
	"errors"

	"github.com/kassa-pay/kassa/adapters/http/kit"
	"github.com/kassa-pay/kassa/adapters/http/present"
	render "github.com/kassa-pay/kassa/adapters/wire"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/ledger"
	"github.com/kassa-pay/kassa/modules/payouts"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

// errNoPayouts answers a payouts request on a server wired without them.
var errNoPayouts = errors.New("dashboard: payouts are not wired")

// ListPayouts lists the environment's payouts.
func (a *dashboardAPI) ListPayouts(ctx context.Context, r dash.ListPayoutsRequestObject) (dash.ListPayoutsResponseObject, error) {
	if a.d.PayoutReads == nil {
		return nil, errNoPayouts
	}
	p := r.Params
	page, err := a.d.PayoutReads.Payouts(ctx, kit.CallerFrom(ctx).Scope, present.ListQuery(p.Limit, p.StartingAfter, p.EndingBefore))
	if err != nil {
		return nil, err
	}
	out := dash.PayoutList{Object: wire.ListObjectList, HasMore: page.HasMore, Url: "/api/v1/" + string(r.Env) + "/payouts",
		Data: make([]dash.Payout, 0, len(page.Items))}
	for _, po := range page.Items {
		out.Data = append(out.Data, render.Payout(po))
	}
	return dash.ListPayouts200JSONResponse{Body: out}, nil
}

// GetPayout reads a payout with the balance transactions it settles.
func (a *dashboardAPI) GetPayout(ctx context.Context, r dash.GetPayoutRequestObject) (dash.GetPayoutResponseObject, error) {
	if a.d.PayoutReads == nil || a.d.Ledger == nil {
		return nil, errNoPayouts
	}
	scope := kit.CallerFrom(ctx).Scope
	po, err := a.d.PayoutReads.Payout(ctx, scope, r.Id)
	if err != nil {
		return nil, err
	}
	page, err := a.d.Ledger.Transactions(ctx, scope, core.ListQuery{Limit: core.MaxListLimit}, ledger.Filter{PayoutID: po.ID()})
	if err != nil {
		return nil, err
	}
	out := dash.PayoutDetail{Payout: render.Payout(po), HasMoreTransactions: page.HasMore,
		BalanceTransactions: make([]dash.BalanceTransaction, 0, len(page.Items))}
	for _, t := range page.Items {
		out.BalanceTransactions = append(out.BalanceTransactions, balanceTransactionOf(t))
	}
	return dash.GetPayout200JSONResponse{Body: out}, nil
}

var _ PayoutSchedule = (*payouts.Service)(nil)
