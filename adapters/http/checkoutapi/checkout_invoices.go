package checkoutapi

import (
	"context"

	"github.com/kassa-pay/kassa/modules/invoicing"
	capi "github.com/kassa-pay/kassa/openapi/gen/checkoutapi"
)

// A sent invoice seen and paid by its customer, authorised by the token of its hosted link.

func presentBuyerInvoice(h *invoicing.Hosted) capi.BuyerInvoice {
	inv := h.Invoice
	t := inv.Totals()
	out := capi.BuyerInvoice{Object: "invoice", Status: capi.BuyerInvoiceStatus(inv.Status()), MerchantName: h.Merchant.Name,
		Currency: string(inv.Currency()), CustomerName: inv.CustomerName(), CustomerEmail: inv.CustomerEmail(),
		LineItems: make([]capi.InvoiceLineItem, 0, len(inv.Lines())), Subtotal: t.Subtotal, VatAmount: t.VAT,
		TotalAmount: t.Total, AmountDue: inv.AmountDue(), AmountPaid: inv.AmountPaid(), Memo: inv.Memo(),
		Processing: inv.Processing(), Mode: capi.BuyerInvoiceMode(inv.Scope().Env)}
	if n := inv.Number(); n != nil {
		out.Number = *n
	}
	if d := inv.IssueDate(); d != nil {
		out.IssueDate = d.Unix()
	}
	if d := inv.DueDate(); d != nil {
		out.DueDate = d.Unix()
	}
	for _, l := range inv.Lines() {
		out.LineItems = append(out.LineItems, capi.InvoiceLineItem{Description: l.Description, Quantity: l.Quantity,
			UnitAmount: l.UnitAmount, VatRate: l.VATRate.String(), Amount: l.Amount(), VatAmount: l.VATAmount(),
			PriceId: l.PriceID, ProductId: l.ProductID, Locked: l.Locked})
	}
	return out
}

func (a *checkoutAPI) GetBuyerInvoice(ctx context.Context, r capi.GetBuyerInvoiceRequestObject) (capi.GetBuyerInvoiceResponseObject, error) {
	if a.invoices == nil {
		return nil, invoicing.ErrHostedNotFound
	}
	h, err := a.invoices.Hosted(ctx, r.Token)
	if err != nil {
		return nil, err
	}
	return capi.GetBuyerInvoice200JSONResponse{Body: presentBuyerInvoice(h)}, nil
}

func (a *checkoutAPI) ConfirmBuyerInvoice(ctx context.Context, r capi.ConfirmBuyerInvoiceRequestObject) (capi.ConfirmBuyerInvoiceResponseObject, error) {
	if a.invoices == nil {
		return nil, invoicing.ErrHostedNotFound
	}
	in, err := confirmInput(r.Body)
	if err != nil {
		return nil, err
	}
	res, err := a.invoices.Pay(ctx, r.Token, invoicing.PayInput{Method: in.Method, Card: in.Card, SEPA: in.SEPA})
	if err != nil {
		return nil, err
	}
	h, err := a.invoices.Hosted(ctx, r.Token)
	if err != nil {
		return nil, err
	}
	out := capi.InvoiceConfirmResult{Object: "invoice.confirmation", Status: capi.InvoiceConfirmResultStatus(res.Status),
		Invoice: presentBuyerInvoice(h)}
	if res.Action != nil {
		out.NextAction = &capi.NextAction{Type: capi.NextActionType(res.Action.Kind)}
		if res.Action.RedirectURL != "" {
			u := res.Action.RedirectURL
			out.NextAction.RedirectUrl = &u
		}
	}
	return capi.ConfirmBuyerInvoice200JSONResponse{Body: out}, nil
}
