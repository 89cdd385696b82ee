package conformance

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/kassa-pay/kassa/conformance/harness"
)

// The hosted invoice page paid by SEPA Direct Debit in the browser (issue 16's browser list:
// card, decline then success, and SEPA).
func TestInvoiceHostedSEPABrowser(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "D15", "browser: the hosted invoice page takes a SEPA debit, shows it processing, and shows the invoice paid once it settles (test clock)", func(t *testing.T) {
		t.Parallel()
		if target.CheckoutURL == "" {
			t.Skip("no checkout URL")
		}
		o := newDashOwner(t)
		clockFreeze(t, o.Test)
		inv := sendInvoice(t, o, newDraft(t, o, freeLine("Consulting", 2, 1000, "19")).Id)
		ctx := harness.NewBrowser(t)
		page := target.CheckoutURL + "/i/" + *inv.PublicToken
		dpDo(t, ctx, "open the hosted invoice", chromedp.Navigate(page))
		dpWait(t, ctx, "the invoice", dpHas("#invoice-number", *inv.Number)+" && "+dpHas("#total", "23.80"))
		dpDo(t, ctx, "pay by SEPA", dpClick("#sepa summary"), dpType("#account_holder", "Ada Lovelace"),
			dpType("#iban", "DE89 3704 0044 0532 0130 00"), dpClick("#pay-sepa"))
		dpWait(t, ctx, "the processing debit", `document.body.innerText.toLowerCase().includes("processing") && !document.getElementById("sepa-form")`)
		harness.Page(t, ctx, "invoice-hosted-sepa-processing")
		clockAdvance(t, o.Test, 600) // the sandbox settles a SEPA debit two minutes after it was confirmed
		dpDo(t, ctx, "reload", chromedp.Navigate(page))
		dpWait(t, ctx, "the paid invoice", dpHas("#invoice-status", "Paid")+` && !document.getElementById("card-form")`)
		harness.Page(t, ctx, "invoice-hosted-sepa-paid")
		g, err := o.Client.GetInvoiceWithResponse(context.Background(), dashTest, inv.Id)
		if err != nil || g.JSON200 == nil || g.JSON200.Status != "paid" || g.JSON200.AmountPaid != 2380 {
			t.Fatalf("invoice after settlement: %v %s", err, g.Body)
		}
	})
}
