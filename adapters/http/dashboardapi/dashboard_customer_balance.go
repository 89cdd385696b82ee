package dashboardapi

import (
	"context"

	"github.com/kassa-pay/kassa/adapters/http/kit"
	"github.com/kassa-pay/kassa/adapters/http/present"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/billing"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

// ListCustomerBalanceTransactions pages a customer's balance transactions, newest first.
func (a *dashboardAPI) ListCustomerBalanceTransactions(ctx context.Context, r dash.ListCustomerBalanceTransactionsRequestObject) (dash.ListCustomerBalanceTransactionsResponseObject, error) {
	if err := a.billingReady(); err != nil {
		return nil, err
	}
	p := r.Params
	page, err := a.d.BillingQueries.BalanceTransactions(ctx, kit.CallerFrom(ctx).Scope, r.Id, present.ListQuery(p.Limit, p.StartingAfter, p.EndingBefore))
	if err != nil {
		return nil, err
	}
	out := dash.CustomerBalanceTransactionList{Object: wire.ListObjectList, HasMore: page.HasMore,
		Url:  "/api/v1/" + string(r.Env) + "/customers/" + r.Id + "/balance_transactions",
		Data: make([]dash.CustomerBalanceTransaction, 0, len(page.Items))}
	for _, t := range page.Items {
		out.Data = append(out.Data, balanceTxnOf(t))
	}
	return dash.ListCustomerBalanceTransactions200JSONResponse{Body: out}, nil
}

// CreateCustomerBalanceTransaction adjusts a customer's balance by hand
// (billing.Service.AdjustBalance) and answers the transaction with the balance after it.
func (a *dashboardAPI) CreateCustomerBalanceTransaction(ctx context.Context, r dash.CreateCustomerBalanceTransactionRequestObject) (dash.CreateCustomerBalanceTransactionResponseObject, error) {
	if err := a.billingReady(); err != nil {
		return nil, err
	}
	if r.Body == nil {
		return nil, core.MissingField("amount")
	}
	adj := billing.Adjustment{Amount: r.Body.Amount, Currency: r.Body.Currency}
	if r.Body.Description != nil {
		adj.Description = *r.Body.Description
	}
	t, ending, err := a.d.Billing.AdjustBalance(ctx, kit.CallerFrom(ctx).Scope, r.Id, adj)
	if err != nil {
		return nil, err
	}
	out := balanceTxnOf(t)
	out.EndingBalance = &ending
	return dash.CreateCustomerBalanceTransaction201JSONResponse{Body: out}, nil
}

// balanceTxnOf renders a balance transaction; empty references and notes are null.
func balanceTxnOf(t *billing.BalanceTransaction) dash.CustomerBalanceTransaction {
	null := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	return dash.CustomerBalanceTransaction{Id: t.ID, Object: dash.CustomerBalanceTransactionObjectCustomerBalanceTransaction,
		Customer: t.Customer, Type: dash.CustomerBalanceTransactionType(t.Reason), Amount: t.Amount, Currency: string(t.Currency),
		Description: null(t.Description), Invoice: null(t.Invoice), Subscription: null(t.Subscription), Created: t.Created.Unix()}
}
