package dashboardapi

import (
	"context"
	"errors"
	"sort"

	"github.com/kassa-pay/kassa/adapters/http/kit"
	"github.com/kassa-pay/kassa/adapters/http/present"
	render "github.com/kassa-pay/kassa/adapters/wire"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/billing"
	"github.com/kassa-pay/kassa/modules/invoicing"
	"github.com/kassa-pay/kassa/modules/payments"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

// CustomerHistory reads the invoices made out to, and the payments made with, a customer's
// e-mail key (billing.EmailKey), newest first.
type CustomerHistory interface {
	InvoicesByEmail(ctx context.Context, scope core.Scope, emailKey string, limit int) ([]*invoicing.Invoice, error)
	PaymentsByEmail(ctx context.Context, scope core.Scope, emailKey string, limit int) ([]*payments.Payment, error)
}

// errNoBilling answers a billing request on a server wired without billing.
var errNoBilling = errors.New("dashboard: billing is not wired")

// customerHistoryLimit bounds the invoices and the payments of a customer's page.
const customerHistoryLimit = 20

func (a *dashboardAPI) billingReady() error {
	if a.d.Billing == nil || a.d.BillingQueries == nil || a.d.CustomerHistory == nil {
		return errNoBilling
	}
	return nil
}

// ListCustomers pages the environment's customers, optionally the one with an e-mail.
func (a *dashboardAPI) ListCustomers(ctx context.Context, r dash.ListCustomersRequestObject) (dash.ListCustomersResponseObject, error) {
	if err := a.billingReady(); err != nil {
		return nil, err
	}
	p := r.Params
	page, err := a.d.BillingQueries.Customers(ctx, kit.CallerFrom(ctx).Scope, present.ListQuery(p.Limit, p.StartingAfter, p.EndingBefore),
		billing.CustomerFilter{Email: p.Email})
	if err != nil {
		return nil, err
	}
	out := dash.CustomerList{Object: wire.ListObjectList, HasMore: page.HasMore, Url: "/api/v1/" + string(r.Env) + "/customers",
		Data: make([]dash.Customer, 0, len(page.Items))}
	for _, c := range page.Items {
		out.Data = append(out.Data, customerOf(c))
	}
	return dash.ListCustomers200JSONResponse{Body: out}, nil
}

// GetCustomer answers a customer with its subscriptions, saved methods, invoices and payments.
func (a *dashboardAPI) GetCustomer(ctx context.Context, r dash.GetCustomerRequestObject) (dash.GetCustomerResponseObject, error) {
	if err := a.billingReady(); err != nil {
		return nil, err
	}
	scope := kit.CallerFrom(ctx).Scope
	c, methods, err := a.d.BillingQueries.Customer(ctx, scope, r.Id)
	if err != nil {
		return nil, err
	}
	id := c.ID()
	subs, err := a.d.Billing.ListSubscriptions(ctx, scope, core.ListQuery{Limit: core.MaxListLimit}, billing.SubscriptionFilter{Customer: &id})
	if err != nil {
		return nil, err
	}
	key := billing.EmailKey(c.Email())
	invs, err := a.d.CustomerHistory.InvoicesByEmail(ctx, scope, key, customerHistoryLimit)
	if err != nil {
		return nil, err
	}
	pays, err := a.d.CustomerHistory.PaymentsByEmail(ctx, scope, key, customerHistoryLimit)
	if err != nil {
		return nil, err
	}
	bals, err := a.d.BillingQueries.Balances(ctx, scope, id)
	if err != nil {
		return nil, err
	}
	out := dash.CustomerDetail{Customer: customerOf(c), Balances: make(map[string]int64, len(bals)), Subscriptions: make([]dash.Subscription, 0, len(subs.Items)),
		PaymentMethods: make([]dash.CustomerPaymentMethod, 0, len(methods)), Invoices: make([]dash.Invoice, 0, len(invs)),
		Payments: make([]dash.Payment, 0, len(pays))}
	for cur, b := range bals {
		out.Balances[string(cur)] = b
	}
	for _, s := range subs.Items {
		out.Subscriptions = append(out.Subscriptions, render.Subscription(s))
	}
	def := c.DefaultPaymentMethod()
	for _, m := range methods {
		sm := m.Summary()
		out.PaymentMethods = append(out.PaymentMethods, dash.CustomerPaymentMethod{Id: m.ID(), Type: dash.CustomerPaymentMethodType(sm.Type),
			Brand: sm.Brand, Last4: sm.Last4, ExpMonth: sm.ExpMonth, ExpYear: sm.ExpYear,
			Default: def != nil && *def == m.ID(), Created: m.Created().Unix()})
	}
	for _, inv := range invs {
		out.Invoices = append(out.Invoices, a.invoice(inv))
	}
	for _, p := range pays {
		out.Payments = append(out.Payments, render.Payment(p))
	}
	return dash.GetCustomer200JSONResponse{Body: out}, nil
}

// ListDashboardSubscriptions pages the environment's subscriptions (the merchant API's list).
func (a *dashboardAPI) ListDashboardSubscriptions(ctx context.Context, r dash.ListDashboardSubscriptionsRequestObject) (dash.ListDashboardSubscriptionsResponseObject, error) {
	if err := a.billingReady(); err != nil {
		return nil, err
	}
	p := r.Params
	var f billing.SubscriptionFilter
	if p.Status != nil {
		st := billing.Status(*p.Status)
		f.Status = &st
	}
	page, err := a.d.Billing.ListSubscriptions(ctx, kit.CallerFrom(ctx).Scope, present.ListQuery(p.Limit, p.StartingAfter, p.EndingBefore), f)
	if err != nil {
		return nil, err
	}
	out := dash.SubscriptionList{Object: wire.ListObjectList, HasMore: page.HasMore, Url: "/api/v1/" + string(r.Env) + "/subscriptions",
		Data: make([]dash.Subscription, 0, len(page.Items))}
	for _, s := range page.Items {
		out.Data = append(out.Data, render.Subscription(s))
	}
	return dash.ListDashboardSubscriptions200JSONResponse{Body: out}, nil
}

// subscriptionInvoicesShown is how many of its newest invoices a subscription's detail
// carries; the invoice list with its subscription filter pages through the rest.
const subscriptionInvoicesShown = 10

// GetDashboardSubscription answers a subscription with its customer, newest invoices and events.
func (a *dashboardAPI) GetDashboardSubscription(ctx context.Context, r dash.GetDashboardSubscriptionRequestObject) (dash.GetDashboardSubscriptionResponseObject, error) {
	if err := a.billingReady(); err != nil {
		return nil, err
	}
	scope := kit.CallerFrom(ctx).Scope
	sub, err := a.d.Billing.Subscription(ctx, scope, r.Id)
	if err != nil {
		return nil, err
	}
	c, _, err := a.d.BillingQueries.Customer(ctx, scope, sub.Customer())
	if err != nil {
		return nil, err
	}
	w := render.Subscription(sub)
	out := dash.SubscriptionDetail{Subscription: w, Customer: customerOf(c), Invoices: []dash.Invoice{}, Events: []dash.Event{}}
	if a.d.Invoices != nil {
		page, err := a.d.Invoices.List(ctx, scope, core.ListQuery{Limit: subscriptionInvoicesShown},
			invoicing.ListFilter{Subscription: sub.ID()})
		if err != nil {
			return nil, err
		}
		for _, inv := range page.Items {
			out.Invoices = append(out.Invoices, a.invoice(inv))
		}
	}
	about := []string{sub.ID()}
	if w.LatestInvoice != nil {
		about = append(about, *w.LatestInvoice)
	}
	if a.d.Events != nil {
		evs, err := a.d.Events.About(ctx, scope, about...)
		if err != nil {
			return nil, err
		}
		for _, e := range evs {
			de, err := present.Event(e)
			if err != nil {
				return nil, err
			}
			out.Events = append(out.Events, de)
		}
	}
	return dash.GetDashboardSubscription200JSONResponse{Body: out}, nil
}

// CancelDashboardSubscription cancels as the merchant API does (billing.CancelSubscription).
func (a *dashboardAPI) CancelDashboardSubscription(ctx context.Context, r dash.CancelDashboardSubscriptionRequestObject) (dash.CancelDashboardSubscriptionResponseObject, error) {
	if err := a.billingReady(); err != nil {
		return nil, err
	}
	atPeriodEnd := true
	if r.Body != nil && r.Body.AtPeriodEnd != nil {
		atPeriodEnd = *r.Body.AtPeriodEnd
	}
	s, err := a.d.Billing.CancelSubscription(ctx, kit.CallerFrom(ctx).Scope, r.Id, atPeriodEnd)
	if err != nil {
		return nil, err
	}
	return dash.CancelDashboardSubscription200JSONResponse{Body: render.Subscription(s)}, nil
}

// ResumeDashboardSubscription takes back a pending cancellation (the merchant API's update
// with cancel_at_period_end false).
func (a *dashboardAPI) ResumeDashboardSubscription(ctx context.Context, r dash.ResumeDashboardSubscriptionRequestObject) (dash.ResumeDashboardSubscriptionResponseObject, error) {
	if err := a.billingReady(); err != nil {
		return nil, err
	}
	resume := false
	s, err := a.d.Billing.UpdateSubscription(ctx, kit.CallerFrom(ctx).Scope, r.Id, billing.Patch{CancelAtPeriodEnd: &resume})
	if err != nil {
		return nil, err
	}
	return dash.ResumeDashboardSubscription200JSONResponse{Body: render.Subscription(s)}, nil
}

// GetBillingSummary answers the overview's recurring figures.
func (a *dashboardAPI) GetBillingSummary(ctx context.Context, r dash.GetBillingSummaryRequestObject) (dash.GetBillingSummaryResponseObject, error) {
	if err := a.billingReady(); err != nil {
		return nil, err
	}
	scope := kit.CallerFrom(ctx).Scope
	s, err := a.d.BillingQueries.Summary(ctx, scope)
	if err != nil {
		return nil, err
	}
	out := dash.BillingSummary{Object: dash.BillingSummaryObjectBillingSummary, Environment: dash.DashboardEnvironment(scope.Env),
		ActiveCount: s.ActiveCount, PastDueCount: s.PastDueCount, Mrr: make([]dash.Money, 0, len(s.MRR))}
	for _, m := range s.MRR {
		out.Mrr = append(out.Mrr, dash.Money{Currency: string(m.Currency()), Amount: m.Amount()})
	}
	sort.Slice(out.Mrr, func(i, j int) bool { return out.Mrr[i].Currency < out.Mrr[j].Currency })
	return dash.GetBillingSummary200JSONResponse{Body: out}, nil
}

func customerOf(c *billing.Customer) dash.Customer {
	return dash.Customer{Id: c.ID(), Object: dash.CustomerObjectCustomer, Name: c.Name(), Email: c.Email(),
		DefaultPaymentMethod: c.DefaultPaymentMethod(), Created: c.Created().Unix()}
}
