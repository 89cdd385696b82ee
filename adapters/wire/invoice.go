package wire

import (
	"github.com/kassa-pay/kassa/modules/invoicing"
	api "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

// Invoice renders an invoice (merchant.yaml components.schemas.Invoice): the data.object of
// the invoice.* events and the dashboard's answer. hostedURL is its page, nil for a draft.
func Invoice(inv *invoicing.Invoice, hostedURL *string) api.Invoice {
	t := inv.Totals()
	out := api.Invoice{Id: inv.ID(), Object: "invoice", Number: inv.Number(), Status: api.InvoiceStatus(inv.Status()),
		Currency: string(inv.Currency()), CustomerName: inv.CustomerName(), CustomerEmail: inv.CustomerEmail(),
		LineItems: make([]api.InvoiceLineItem, 0, len(inv.Lines())), Subtotal: t.Subtotal, VatAmount: t.VAT,
		TotalAmount: t.Total, StartingBalance: inv.StartingBalance(), EndingBalance: inv.EndingBalance(),
		AmountDue: inv.AmountDue(), AmountPaid: inv.AmountPaid(), DaysUntilDue: inv.DaysUntilDue(),
		Memo: inv.Memo(), PublicToken: inv.PublicToken(), HostedInvoiceUrl: hostedURL, AttemptCount: inv.AttemptCount(),
		PaymentId: inv.PaymentID(), Metadata: inv.Metadata(), Created: inv.Created().Unix(), Subscription: inv.Subscription()}
	if st := inv.DunningStage(); st != nil {
		v := api.InvoiceDunningStage(*st)
		out.DunningStage = &v
	}
	if n := inv.NextPaymentAttempt(); n != nil {
		u := n.Unix()
		out.NextPaymentAttempt = &u
	}
	if d := inv.IssueDate(); d != nil {
		u := d.Unix()
		out.IssueDate = &u
	}
	if d := inv.DueDate(); d != nil {
		u := d.Unix()
		out.DueDate = &u
	}
	for _, l := range inv.Lines() {
		out.LineItems = append(out.LineItems, api.InvoiceLineItem{Description: l.Description, Quantity: l.Quantity,
			UnitAmount: l.UnitAmount, VatRate: l.VATRate.String(), Amount: l.Amount(), VatAmount: l.VATAmount(),
			PriceId: l.PriceID, ProductId: l.ProductID, Locked: l.Locked})
	}
	return out
}
