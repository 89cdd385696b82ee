package dashboardapi

import (
	"bytes"
	"context"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/kassa-pay/kassa/adapters/http/kit"
	"github.com/kassa-pay/kassa/adapters/http/present"
	render "github.com/kassa-pay/kassa/adapters/wire"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/modules/webhooks"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
	openapi_types "github.com/oapi-codegen/runtime/types"
)

// The read routes of the dashboard: overview, payments, checkout sessions, event types, test
// mailbox. Payments, sessions, products, prices and events are the merchant API's schemas
// (dashboard.yaml refers to them), generated once in the shared schemas package, so the shared
// presenters render them directly.

// rawJSON is a response written as it is (the served OpenAPI document).
type rawJSON []byte

func (b rawJSON) VisitGetDashboardSpecResponse(w http.ResponseWriter) error {
	return kit.WriteRaw(w, b)
}

func (a *dashboardAPI) GetDashboardSpec(context.Context, dash.GetDashboardSpecRequestObject) (dash.GetDashboardSpecResponseObject, error) {
	return rawJSON(a.spec), nil
}

func (a *dashboardAPI) ListEventTypes(context.Context, dash.ListEventTypesRequestObject) (dash.ListEventTypesResponseObject, error) {
	return dash.ListEventTypes200JSONResponse{Body: dash.EventTypeList{Data: append([]string(nil), webhooks.MerchantEvents...)}}, nil
}

// recentPayments is how many payments the overview shows.
const recentPayments = 5

func (a *dashboardAPI) GetOverview(ctx context.Context, r dash.GetOverviewRequestObject) (dash.GetOverviewResponseObject, error) {
	scope := kit.CallerFrom(ctx).Scope
	sum, err := a.d.Payments.Summary(ctx, scope)
	if err != nil {
		return nil, err
	}
	recent, err := a.d.Payments.List(ctx, scope, core.ListQuery{Limit: recentPayments}, "")
	if err != nil {
		return nil, err
	}
	open, err := a.d.Checkout.CountOpen(ctx, scope)
	if err != nil {
		return nil, err
	}
	var endpoints int64
	if a.d.Webhooks != nil {
		eps, err := a.d.Webhooks.ListEndpoints(ctx, scope)
		if err != nil {
			return nil, err
		}
		endpoints = int64(len(eps))
	}
	out := dash.Overview{
		Environment: dash.DashboardEnvironment(scope.Env),
		Payments: dash.OverviewPayments{Count: sum.Count, SucceededCount: sum.SucceededCount,
			Gross: make([]dash.Money, 0, len(sum.Gross)), DisputedCount: sum.DisputedCount,
			Disputed: make([]dash.Money, 0, len(sum.Disputed))},
		RecentPayments:        make([]dash.Payment, 0, len(recent.Items)),
		OpenSessionsCount:     open,
		WebhookEndpointsCount: endpoints,
	}
	for _, g := range sum.Gross {
		out.Payments.Gross = append(out.Payments.Gross, dash.Money{Currency: string(g.Currency()), Amount: g.Amount()})
	}
	for _, d := range sum.Disputed {
		out.Payments.Disputed = append(out.Payments.Disputed, dash.Money{Currency: string(d.Currency()), Amount: d.Amount()})
	}
	for _, p := range recent.Items {
		out.RecentPayments = append(out.RecentPayments, render.Payment(p))
	}
	return dash.GetOverview200JSONResponse{Body: out}, nil
}

// GetDailyVolume answers the overview's chart: gross volume per currency and UTC day, the
// last day being today by the environment's clock (the test clock in test mode).
func (a *dashboardAPI) GetDailyVolume(ctx context.Context, r dash.GetDailyVolumeRequestObject) (dash.GetDailyVolumeResponseObject, error) {
	scope := kit.CallerFrom(ctx).Scope
	days := payments.DefaultVolumeDays
	if r.Params.Days != nil {
		days = *r.Params.Days
	}
	now := core.SystemClock{}.Now()
	if a.d.Clocks != nil {
		var err error
		if now, err = a.d.Clocks.Now(ctx, scope); err != nil {
			return nil, err
		}
	}
	v, err := a.d.Payments.DailyVolume(ctx, scope, now, days)
	if err != nil {
		return nil, err
	}
	out := dash.DailyVolume{
		Object: dash.DailyVolumeObjectDailyVolume, Environment: dash.DashboardEnvironment(scope.Env), Days: v.Days,
		StartDate: openapi_types.Date{Time: v.From}, EndDate: openapi_types.Date{Time: v.To},
		Currencies: make([]dash.DailyVolumeCurrency, 0, len(v.Series)),
	}
	for _, c := range v.Series {
		cur := dash.DailyVolumeCurrency{Currency: string(c.Currency), Amount: c.Amount, Count: c.Count,
			Days: make([]dash.DailyVolumeDay, 0, len(c.Days))}
		for _, d := range c.Days {
			cur.Days = append(cur.Days, dash.DailyVolumeDay{Date: openapi_types.Date{Time: d.Day}, Amount: d.Amount, Count: d.Count})
		}
		out.Currencies = append(out.Currencies, cur)
	}
	return dash.GetDailyVolume200JSONResponse{Body: out}, nil
}

func (a *dashboardAPI) ListPayments(ctx context.Context, r dash.ListPaymentsRequestObject) (dash.ListPaymentsResponseObject, error) {
	status := ""
	if r.Params.Status != nil {
		status = string(*r.Params.Status)
	}
	p := r.Params
	page, err := a.d.Payments.List(ctx, kit.CallerFrom(ctx).Scope, present.ListQuery(p.Limit, p.StartingAfter, p.EndingBefore), status)
	if err != nil {
		return nil, err
	}
	out := dash.PaymentList{Object: wire.ListObjectList, HasMore: page.HasMore, Url: "/api/v1/" + string(r.Env) + "/payments",
		Data: make([]dash.Payment, 0, len(page.Items))}
	for _, p := range page.Items {
		out.Data = append(out.Data, render.Payment(p))
	}
	return dash.ListPayments200JSONResponse{Body: out}, nil
}

func (a *dashboardAPI) GetPayment(ctx context.Context, r dash.GetPaymentRequestObject) (dash.GetPaymentResponseObject, error) {
	scope := kit.CallerFrom(ctx).Scope
	p, err := a.d.Payments.Get(ctx, scope, r.Id)
	if err != nil {
		return nil, err
	}
	// A failed payment moved no money: it has no fee and no net amount to show.
	var breakdown *dash.FeeBreakdown
	if p.Status() != payments.StatusFailed {
		fb, err := a.d.Payments.Breakdown(ctx, p)
		if err != nil {
			return nil, err
		}
		breakdown = &dash.FeeBreakdown{
			ServiceEur: fb.ServiceEUR, PspEur: fb.PSPEUR, TotalEur: fb.TotalEUR,
			ChargeCurrency: string(fb.ChargeCurrency), ServiceChargeCurrency: fb.TotalChargeCurrency,
			NetAmount: fb.Net, Rate: fb.Rate, RateDate: dateOf(fb.RateDate),
		}
	}
	sessionID := ""
	if s := p.SessionID(); s != nil {
		sessionID = *s
	}
	refunds, err := a.paymentRefunds(ctx, scope, p.ID())
	if err != nil {
		return nil, err
	}
	dispute, err := a.paymentDispute(ctx, scope, p.ID())
	if err != nil {
		return nil, err
	}
	entries, err := a.paymentBalanceTransactions(ctx, scope, p.ID())
	if err != nil {
		return nil, err
	}
	// The events about the payment, its session, its refunds (charge.refunded is about the
	// refund) and its dispute (charge.dispute.* are about the dispute).
	about := []string{p.ID(), sessionID}
	for _, r := range refunds {
		about = append(about, r.Id)
	}
	if dispute != nil {
		about = append(about, dispute.Id)
	}
	evs, err := a.d.Events.About(ctx, scope, about...)
	if err != nil {
		return nil, err
	}
	out := dash.PaymentDetail{
		Payment:             render.Payment(p),
		FeeBreakdown:        breakdown,
		Events:              make([]dash.Event, 0, len(evs)),
		Refunds:             refunds,
		Dispute:             dispute,
		BalanceTransactions: entries,
	}
	for _, e := range evs {
		de, err := present.Event(e)
		if err != nil {
			return nil, err
		}
		out.Events = append(out.Events, de)
	}
	return dash.GetPayment200JSONResponse{Body: out}, nil
}

func (a *dashboardAPI) ListCheckoutSessions(ctx context.Context, r dash.ListCheckoutSessionsRequestObject) (dash.ListCheckoutSessionsResponseObject, error) {
	status := ""
	if r.Params.Status != nil {
		status = string(*r.Params.Status)
	}
	p := r.Params
	page, err := a.d.Checkout.List(ctx, kit.CallerFrom(ctx).Scope, present.ListQuery(p.Limit, p.StartingAfter, p.EndingBefore), status)
	if err != nil {
		return nil, err
	}
	out := dash.CheckoutSessionList{Object: wire.ListObjectList, HasMore: page.HasMore, Url: "/api/v1/" + string(r.Env) + "/checkout_sessions",
		Data: make([]dash.CheckoutSession, 0, len(page.Items))}
	for _, s := range page.Items {
		out.Data = append(out.Data, render.Session(s))
	}
	return dash.ListCheckoutSessions200JSONResponse{Body: out}, nil
}

func (a *dashboardAPI) ListMailbox(ctx context.Context, r dash.ListMailboxRequestObject) (dash.ListMailboxResponseObject, error) {
	out := dash.MailboxMessageList{Object: wire.ListObjectList, Url: "/api/v1/test/mailbox", Data: []dash.MailboxMessage{}}
	scope := core.Scope{MerchantID: kit.CallerFrom(ctx).Scope.MerchantID, Env: core.EnvTest}
	q, err := present.ListQuery(r.Params.Limit, r.Params.StartingAfter, r.Params.EndingBefore).Normalize()
	if err != nil {
		return nil, err
	}
	if a.d.Mailbox == nil {
		return dash.ListMailbox200JSONResponse{Body: out}, nil
	}
	page, err := a.d.Mailbox.ListMailbox(ctx, scope, q)
	if err != nil {
		return nil, err
	}
	out.HasMore = page.HasMore
	for _, m := range page.Items {
		files := make([]dash.MailboxAttachment, 0, len(m.Attachments))
		for _, f := range m.Attachments {
			files = append(files, dash.MailboxAttachment{Index: f.Index, Filename: f.Filename, ContentType: f.ContentType,
				Size: f.Size, Url: "/api/v1/test/mailbox/" + url.PathEscape(m.ID) + "/attachments/" + strconv.Itoa(f.Index)})
		}
		out.Data = append(out.Data, dash.MailboxMessage{Id: m.ID, To: m.To, From: m.From, Subject: m.Subject,
			Text: m.Text, Html: m.HTML, Attachments: files, Created: m.Created.Unix()})
	}
	return dash.ListMailbox200JSONResponse{Body: out}, nil
}

// GetMailboxAttachment serves one file of a test mailbox message as a download, always as
// application/octet-stream so that no file (an HTML one, say) renders in the dashboard.
func (a *dashboardAPI) GetMailboxAttachment(ctx context.Context, r dash.GetMailboxAttachmentRequestObject) (dash.GetMailboxAttachmentResponseObject, error) {
	scope := core.Scope{MerchantID: kit.CallerFrom(ctx).Scope.MerchantID, Env: core.EnvTest}
	if a.d.Mailbox == nil || r.Index < 0 {
		return nil, core.NotFound("mailbox_attachment", "id", r.Id)
	}
	f, err := a.d.Mailbox.GetMailboxAttachment(ctx, scope, r.Id, r.Index)
	if err != nil {
		return nil, err
	}
	cd := mime.FormatMediaType("attachment", map[string]string{"filename": f.Filename})
	if cd == "" {
		cd = "attachment"
	}
	return dash.GetMailboxAttachment200ApplicationoctetStreamResponse{Body: bytes.NewReader(f.Data), ContentLength: int64(len(f.Data)),
		Headers: dash.GetMailboxAttachment200ResponseHeaders{ContentDisposition: &cd}}, nil
}

// dateOf is a calendar date of the wire (YYYY-MM-DD).
func dateOf(t time.Time) openapi_types.Date {
	return openapi_types.Date{Time: t.UTC()}
}
