package appapi

import (
	"context"
	"errors"
	"strings"

	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/catalog"
	"github.com/kassa-pay/kassa/modules/invoicing"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/openapi/gen/appapi"
)

// Refunds, single products and issued invoices: one shape in both environments (a sandbox
// token reads the test environment's refunds and invoices).

func (s *server) ListRefunds(ctx context.Context, r appapi.ListRefundsRequestObject) (appapi.ListRefundsResponseObject, error) {
	limit, offset, err := page(r.Params.Limit, r.Params.Offset)
	if err != nil {
		return nil, err
	}
	items, more, err := s.d.Reader.Refunds(ctx, callerOf(ctx).Scope, limit, offset)
	if err != nil {
		return nil, err
	}
	out := appapi.RefundList{Object: appapi.RefundListObjectList, HasMore: more, Data: make([]appapi.Refund, 0, len(items))}
	for _, rf := range items {
		out.Data = append(out.Data, presentRefund(rf))
	}
	return appapi.ListRefunds200JSONResponse{Body: out}, nil
}

func (s *server) GetProduct(ctx context.Context, r appapi.GetProductRequestObject) (appapi.GetProductResponseObject, error) {
	p, err := s.d.Reader.Product(ctx, callerOf(ctx).Scope, r.Id)
	if errors.Is(err, catalog.ErrNotFound) {
		return nil, core.NotFound("product", "id", r.Id)
	}
	if err != nil {
		return nil, err
	}
	return appapi.GetProduct200JSONResponse{Body: presentProduct(p)}, nil
}

func (s *server) ListInvoices(ctx context.Context, r appapi.ListInvoicesRequestObject) (appapi.ListInvoicesResponseObject, error) {
	limit, offset, err := page(r.Params.Limit, r.Params.Offset)
	if err != nil {
		return nil, err
	}
	items, more, err := s.d.Reader.Invoices(ctx, callerOf(ctx).Scope, limit, offset)
	if err != nil {
		return nil, err
	}
	out := appapi.InvoiceList{Object: appapi.InvoiceListObjectList, HasMore: more, Data: make([]appapi.Invoice, 0, len(items))}
	for _, inv := range items {
		out.Data = append(out.Data, presentInvoice(inv))
	}
	return appapi.ListInvoices200JSONResponse{Body: out}, nil
}

func (s *server) GetInvoice(ctx context.Context, r appapi.GetInvoiceRequestObject) (appapi.GetInvoiceResponseObject, error) {
	inv, err := s.d.Reader.Invoice(ctx, callerOf(ctx).Scope, r.Id)
	if errors.Is(err, invoicing.ErrNotFound) {
		return nil, core.NotFound("invoice", "id", r.Id)
	}
	if err != nil {
		return nil, err
	}
	return appapi.GetInvoice200JSONResponse{Body: presentInvoice(inv)}, nil
}

func presentRefund(r *payments.Refund) appapi.Refund {
	out := appapi.Refund{Id: r.ID(), Object: appapi.RefundObjectRefund, Payment: r.PaymentID(),
		Amount: appapi.Money{Amount: r.Amount(), Currency: strings.ToLower(string(r.Currency()))},
		Status: appapi.RefundStatus(r.Status()), Reason: appapi.RefundReason(r.Reason()), Created: r.Created().UTC()}
	if c := r.FailureCode(); c != "" {
		out.FailureCode = &c
	}
	if m := r.FailureMessage(); m != "" {
		out.FailureMessage = &m
	}
	return out
}

func presentInvoice(inv *invoicing.Invoice) appapi.Invoice {
	cur := strings.ToLower(string(inv.Currency()))
	m := func(v int64) appapi.Money { return appapi.Money{Amount: v, Currency: cur} }
	t := inv.Totals()
	out := appapi.Invoice{Id: inv.ID(), Object: appapi.InvoiceObjectInvoice, Number: inv.Number(),
		Status: appapi.InvoiceStatus(inv.Status()), CustomerName: inv.CustomerName(), CustomerEmail: inv.CustomerEmail(),
		Subtotal: m(t.Subtotal), VatAmount: m(t.VAT), Total: m(t.Total), AmountDue: m(inv.AmountDue()),
		AmountPaid: m(inv.AmountPaid()), AttemptCount: inv.AttemptCount(), PaymentId: inv.PaymentID(),
		Metadata: inv.Metadata(), Created: inv.Created().UTC(), LineItems: make([]appapi.InvoiceLine, 0, len(inv.Lines()))}
	if out.Metadata == nil {
		out.Metadata = map[string]string{}
	}
	if d := inv.IssueDate(); d != nil {
		out.IssueDate = &openapi_types.Date{Time: d.UTC()}
	}
	if d := inv.DueDate(); d != nil {
		out.DueDate = &openapi_types.Date{Time: d.UTC()}
	}
	for _, l := range inv.Lines() {
		out.LineItems = append(out.LineItems, appapi.InvoiceLine{Description: l.Description, Quantity: l.Quantity,
			UnitAmount: m(l.UnitAmount), VatRate: l.VATRate.String(), Amount: m(l.Amount()), VatAmount: m(l.VATAmount()),
			PriceId: l.PriceID, ProductId: l.ProductID})
	}
	return out
}
