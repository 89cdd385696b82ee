package dashboardapi

import (
	"context"
	"strings"

	"github.com/kassa-pay/kassa/adapters/http/kit"
	"github.com/kassa-pay/kassa/adapters/http/present"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/testclock"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

// The test clock and the declined charges: what the dashboard shows beside the payments.

func (a *dashboardAPI) GetDashboardTestClock(ctx context.Context, _ dash.GetDashboardTestClockRequestObject) (dash.GetDashboardTestClockResponseObject, error) {
	scope := core.Scope{MerchantID: kit.CallerFrom(ctx).Scope.MerchantID, Env: core.EnvTest}
	c, err := a.d.Clocks.Get(ctx, scope)
	if err != nil {
		return nil, err
	}
	return dash.GetDashboardTestClock200JSONResponse{Body: present.TestClock(c)}, nil
}

// AdvanceDashboardTestClock moves the test clock from the dashboard's header, as the merchant
// API's advance does (the same use case: due work in time order, then the clock frozen at the
// target); 202 while the work goes on in the background.
func (a *dashboardAPI) AdvanceDashboardTestClock(ctx context.Context, r dash.AdvanceDashboardTestClockRequestObject) (dash.AdvanceDashboardTestClockResponseObject, error) {
	scope := core.Scope{MerchantID: kit.CallerFrom(ctx).Scope.MerchantID, Env: core.EnvTest}
	var seconds, to *int64
	if r.Body != nil {
		seconds, to = r.Body.Seconds, r.Body.To
	}
	c, err := a.d.Clocks.Advance(ctx, scope, seconds, to)
	if err != nil {
		return nil, err
	}
	if c.Status == testclock.StatusAdvancing {
		return dash.AdvanceDashboardTestClock202JSONResponse{Body: present.TestClock(c)}, nil
	}
	return dash.AdvanceDashboardTestClock200JSONResponse{Body: present.TestClock(c)}, nil
}

// defaultDeclines is how many declines a list shows without a limit (as every list).
const defaultDeclines = 10

func (a *dashboardAPI) ListDeclinedCharges(ctx context.Context, r dash.ListDeclinedChargesRequestObject) (dash.ListDeclinedChargesResponseObject, error) {
	limit := defaultDeclines
	if r.Params.Limit != nil {
		limit = int(*r.Params.Limit) // 1..100, checked by the contract gate
	}
	session := ""
	if r.Params.Session != nil {
		session = *r.Params.Session // cs_…, checked by the contract gate
	}
	rows, more, err := a.d.Declines.DeclinedCharges(ctx, kit.CallerFrom(ctx).Scope, session, limit)
	if err != nil {
		return nil, err
	}
	out := dash.DeclinedChargeList{Object: wire.ListObjectList, HasMore: more,
		Url: "/api/v1/" + string(r.Env) + "/declined_charges", Data: make([]dash.DeclinedCharge, 0, len(rows))}
	for _, d := range rows {
		dc := dash.DeclinedCharge{Object: dash.DeclinedChargeObjectDeclinedCharge, Attempt: int32(d.Attempt), //nolint:gosec // G115: attempt numbers are small positive integers (CHECK number > 0)
			Kind: dash.DeclinedChargeKindCharge, Amount: d.Amount, Currency: d.Currency,
			PaymentMethod: dash.DeclinedChargePaymentMethod(d.Method), Created: d.At.Unix()}
		if d.Authentication {
			dc.Kind = dash.DeclinedChargeKindAuthentication
		}
		if strings.HasPrefix(d.PayableID, core.PrefixSession) {
			id := d.PayableID
			dc.SessionId = &id
		}
		out.Data = append(out.Data, dc)
	}
	return dash.ListDeclinedCharges200JSONResponse{Body: out}, nil
}
