package dashboardapi

import (
	"context"
	"errors"
	"time"

	"github.com/kassa-pay/kassa/adapters/http/kit"
	render "github.com/kassa-pay/kassa/adapters/wire"
	"github.com/kassa-pay/kassa/modules/billing"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
	openapi_types "github.com/oapi-codegen/runtime/types"
)

// errNoMRRHistory answers the MRR history on a server wired without it.
var errNoMRRHistory = errors.New("dashboard: the MRR history is not wired")

// PauseDashboardSubscription pauses as the merchant API does (billing.PauseSubscription).
func (a *dashboardAPI) PauseDashboardSubscription(ctx context.Context, r dash.PauseDashboardSubscriptionRequestObject) (dash.PauseDashboardSubscriptionResponseObject, error) {
	if err := a.billingReady(); err != nil {
		return nil, err
	}
	var resumesAt *time.Time
	if r.Body != nil && r.Body.ResumesAt != nil {
		t := time.Unix(*r.Body.ResumesAt, 0).UTC()
		resumesAt = &t
	}
	s, err := a.d.Billing.PauseSubscription(ctx, kit.CallerFrom(ctx).Scope, r.Id, resumesAt)
	if err != nil {
		return nil, err
	}
	return dash.PauseDashboardSubscription200JSONResponse{Body: render.Subscription(s)}, nil
}

// UnpauseDashboardSubscription ends a pause as the merchant API's resume does
// (billing.ResumeSubscription).
func (a *dashboardAPI) UnpauseDashboardSubscription(ctx context.Context, r dash.UnpauseDashboardSubscriptionRequestObject) (dash.UnpauseDashboardSubscriptionResponseObject, error) {
	if err := a.billingReady(); err != nil {
		return nil, err
	}
	s, err := a.d.Billing.ResumeSubscription(ctx, kit.CallerFrom(ctx).Scope, r.Id)
	if err != nil {
		return nil, err
	}
	return dash.UnpauseDashboardSubscription200JSONResponse{Body: render.Subscription(s)}, nil
}

// GetMrrHistory answers the overview's MRR chart: the last 90 days, null where a day was not
// recorded.
func (a *dashboardAPI) GetMrrHistory(ctx context.Context, r dash.GetMrrHistoryRequestObject) (dash.GetMrrHistoryResponseObject, error) {
	if a.d.MRRHistory == nil {
		return nil, errNoMRRHistory
	}
	scope := kit.CallerFrom(ctx).Scope
	h, err := a.d.MRRHistory.History(ctx, scope)
	if err != nil {
		return nil, err
	}
	out := dash.MrrHistory{Object: dash.MrrHistoryObjectMrrHistory, Environment: dash.DashboardEnvironment(scope.Env),
		Days: billing.MRRHistoryDays, StartDate: openapi_types.Date{Time: h.Start}, EndDate: openapi_types.Date{Time: h.End},
		Currencies: make([]dash.MrrHistoryCurrency, 0, len(h.Series))}
	for _, s := range h.Series {
		c := dash.MrrHistoryCurrency{Currency: string(s.Currency), Days: make([]dash.MrrHistoryDay, 0, len(s.Points))}
		for _, p := range s.Points {
			c.Days = append(c.Days, dash.MrrHistoryDay{Date: openapi_types.Date{Time: p.Day}, Amount: p.Amount})
		}
		out.Currencies = append(out.Currencies, c)
	}
	return dash.GetMrrHistory200JSONResponse{Body: out}, nil
}
