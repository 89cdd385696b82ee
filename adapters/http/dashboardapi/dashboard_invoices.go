package dashboardapi

import (
	"bytes"
	"context"

	"github.com/kassa-pay/kassa/adapters/http/kit"
	"github.com/kassa-pay/kassa/adapters/web/invoicepdf"
	"github.com/kassa-pay/kassa/adapters/wire"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/invoicing"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
	api "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

// Invoices of the path's environment, through invoicing's use cases.

func (a *dashboardAPI) invoice(inv *invoicing.Invoice) api.Invoice {
	return wire.Invoice(inv, a.d.Invoices.HostedURL(inv))
}

func invoiceInput(b *dash.DashboardInvoiceCreate) invoicing.Input {
	if b == nil {
		return invoicing.Input{}
	}
	in := invoicing.Input{Currency: b.Currency, CustomerName: b.CustomerName, CustomerEmail: b.CustomerEmail,
		DaysUntilDue: b.DaysUntilDue, Memo: b.Memo}
	if b.Metadata != nil {
		md := map[string]string(*b.Metadata)
		in.Metadata = &md
	}
	if b.LineItems != nil {
		ls := make([]invoicing.LineInput, 0, len(*b.LineItems))
		for _, l := range *b.LineItems {
			ls = append(ls, invoicing.LineInput{Description: l.Description, Quantity: l.Quantity, UnitAmount: l.UnitAmount,
				VATRate: l.VatRate, PriceID: l.PriceId})
		}
		in.LineItems = &ls
	}
	return in
}

func (a *dashboardAPI) ListInvoices(ctx context.Context, r dash.ListInvoicesRequestObject) (dash.ListInvoicesResponseObject, error) {
	p := r.Params
	var st *invoicing.Status
	if p.Status != nil {
		s, err := invoicing.ParseStatus(string(*p.Status), "status")
		if err != nil {
			return nil, err
		}
		st = &s
	}
	q := core.ListQuery{}
	if p.Limit != nil {
		q.Limit = *p.Limit
	}
	if p.StartingAfter != nil {
		q.StartingAfter = *p.StartingAfter
	}
	if p.EndingBefore != nil {
		q.EndingBefore = *p.EndingBefore
	}
	f := invoicing.ListFilter{Status: st}
	if p.Subscription != nil {
		f.Subscription = *p.Subscription
	}
	page, err := a.d.Invoices.List(ctx, kit.CallerFrom(ctx).Scope, q, f)
	if err != nil {
		return nil, err
	}
	out := dash.InvoiceList{Object: api.ListObjectList, HasMore: page.HasMore, Url: "/api/v1/" + string(r.Env) + "/invoices",
		Data: make([]api.Invoice, 0, len(page.Items))}
	for _, inv := range page.Items {
		out.Data = append(out.Data, a.invoice(inv))
	}
	return dash.ListInvoices200JSONResponse{Body: out}, nil
}

func (a *dashboardAPI) CreateInvoice(ctx context.Context, r dash.CreateInvoiceRequestObject) (dash.CreateInvoiceResponseObject, error) {
	inv, err := a.d.Invoices.Create(ctx, kit.CallerFrom(ctx).Scope, invoiceInput(r.Body))
	if err != nil {
		return nil, err
	}
	return dash.CreateInvoice201JSONResponse{Body: a.invoice(inv)}, nil
}

func (a *dashboardAPI) GetInvoice(ctx context.Context, r dash.GetInvoiceRequestObject) (dash.GetInvoiceResponseObject, error) {
	inv, err := a.d.Invoices.Get(ctx, kit.CallerFrom(ctx).Scope, r.Id)
	if err != nil {
		return nil, err
	}
	return dash.GetInvoice200JSONResponse{Body: a.invoice(inv)}, nil
}

func (a *dashboardAPI) UpdateInvoice(ctx context.Context, r dash.UpdateInvoiceRequestObject) (dash.UpdateInvoiceResponseObject, error) {
	var b *dash.DashboardInvoiceCreate
	if r.Body != nil {
		c := dash.DashboardInvoiceCreate(*r.Body)
		b = &c
	}
	inv, err := a.d.Invoices.Update(ctx, kit.CallerFrom(ctx).Scope, r.Id, invoiceInput(b))
	if err != nil {
		return nil, err
	}
	return dash.UpdateInvoice200JSONResponse{Body: a.invoice(inv)}, nil
}

func (a *dashboardAPI) DeleteInvoice(ctx context.Context, r dash.DeleteInvoiceRequestObject) (dash.DeleteInvoiceResponseObject, error) {
	inv, err := a.d.Invoices.Delete(ctx, kit.CallerFrom(ctx).Scope, r.Id)
	if err != nil {
		return nil, err
	}
	return dash.DeleteInvoice200JSONResponse{Body: a.invoice(inv)}, nil
}

func (a *dashboardAPI) SendInvoice(ctx context.Context, r dash.SendInvoiceRequestObject) (dash.SendInvoiceResponseObject, error) {
	inv, err := a.d.Invoices.Send(ctx, kit.CallerFrom(ctx).Scope, r.Id)
	if err != nil {
		return nil, err
	}
	return dash.SendInvoice200JSONResponse{Body: a.invoice(inv)}, nil
}

func (a *dashboardAPI) VoidInvoice(ctx context.Context, r dash.VoidInvoiceRequestObject) (dash.VoidInvoiceResponseObject, error) {
	inv, err := a.d.Invoices.Void(ctx, kit.CallerFrom(ctx).Scope, r.Id)
	if err != nil {
		return nil, err
	}
	return dash.VoidInvoice200JSONResponse{Body: a.invoice(inv)}, nil
}

func (a *dashboardAPI) MarkInvoiceUncollectible(ctx context.Context, r dash.MarkInvoiceUncollectibleRequestObject) (dash.MarkInvoiceUncollectibleResponseObject, error) {
	inv, err := a.d.Invoices.MarkUncollectible(ctx, kit.CallerFrom(ctx).Scope, r.Id)
	if err != nil {
		return nil, err
	}
	return dash.MarkInvoiceUncollectible200JSONResponse{Body: a.invoice(inv)}, nil
}

func (a *dashboardAPI) GetInvoicePdf(ctx context.Context, r dash.GetInvoicePdfRequestObject) (dash.GetInvoicePdfResponseObject, error) {
	doc, err := a.d.Invoices.Document(ctx, kit.CallerFrom(ctx).Scope, r.Id)
	if err != nil {
		return nil, err
	}
	b, err := invoicepdf.Render(doc)
	if err != nil {
		return nil, err
	}
	cd := `inline; filename="` + invoicepdf.FileName(doc.Invoice) + `"`
	return dash.GetInvoicePdf200ApplicationpdfResponse{Body: bytes.NewReader(b), ContentLength: int64(len(b)),
		Headers: dash.GetInvoicePdf200ResponseHeaders{ContentDisposition: &cd}}, nil
}
