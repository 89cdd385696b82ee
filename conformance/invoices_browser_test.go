package conformance

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kassa-pay/kassa/conformance/harness"
)

// The invoice pages in headless Chromium: the dashboard's draft editor from draft to sent, and
// the hosted invoice page paid by card (a decline, then success). Every page passes axe.

func TestInvoicePagesBrowser(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "D15", "browser: the draft editor shows live totals and sends the invoice", func(t *testing.T) {
		t.Parallel()
		o := dpNewOwner(t)
		ctx := harness.NewBrowser(t)
		dpSignIn(t, ctx, o)
		dpGo(t, ctx, "/test/invoices")
		harness.Page(t, ctx, "dashboard-invoices-empty")
		dpDo(t, ctx, "fill the new invoice form",
			dpType(`#create-invoice [name="customer_name"]`, "Ada Lovelace"),
			dpType(`#create-invoice [name="customer_email"]`, "ada@example.com"),
			dpClick(`#create-invoice button[type="submit"]`))
		dpWait(t, ctx, "the draft editor", `location.pathname.startsWith("/test/invoices/in_") && document.getElementById("invoice-editor")`)
		dpDo(t, ctx, "add a line", dpClick("[data-add-line]"))
		dpDo(t, ctx, "fill the line",
			dpType("#lines tr:last-child [data-desc]", "Consulting"),
			dpType("#lines tr:last-child [data-q]", "2"),
			dpType("#lines tr:last-child [data-unit]", "10.00"),
			dpType("#lines tr:last-child [data-rate]", "19"))
		dpWait(t, ctx, "the live total", dpHas("#total-total", "23.80")+" && "+dpHas("#total-vat", "3.80"))
		harness.Page(t, ctx, "dashboard-invoice-editor")
		dpDo(t, ctx, "send", dpClick("[data-send]"))
		dpWait(t, ctx, "the confirm dialog", `document.querySelector("dialog[open] [data-confirm]")`)
		dpDo(t, ctx, "confirm", dpClick("dialog[open] [data-confirm]"))
		dpWait(t, ctx, "the sent invoice", dpHas("#main h1", "-INV-")+` && document.querySelector("[data-hosted]")`)
		harness.Page(t, ctx, "dashboard-invoice-sent")
		o.signIn(t) // the API client signs in on its own
		ls, err := o.Client.ListInvoicesWithResponse(context.Background(), dashTest, nil)
		if err != nil || ls.JSON200 == nil || len(ls.JSON200.Data) != 1 {
			t.Fatalf("list: %v", err)
		}
		inv := ls.JSON200.Data[0]
		if inv.Status != "open" || inv.TotalAmount != 2380 || inv.Number == nil {
			t.Fatalf("sent invoice %+v", inv)
		}
		// The test mailbox shows the invoice's e-mail with its PDF to download.
		msg := waitInvoiceMail(t, o, "ada@example.com", *inv.Number)
		dpGo(t, ctx, "/test/mailbox/"+msg)
		dpWait(t, ctx, "the attachment", dpHas("[data-attachment=\"0\"]", *inv.Number+".pdf")+
			` && document.querySelector("[data-attachment=\"0\"]").getAttribute("href") === "/api/v1/test/mailbox/`+msg+`/attachments/0"`+
			` && document.querySelector("[data-attachment=\"0\"]").hasAttribute("download")`)
		harness.Page(t, ctx, "dashboard-mailbox-invoice-attachment")
	})

	harness.Rule(t, "D15", "browser: the hosted invoice page takes a declined card, then a good one, and shows the invoice paid", func(t *testing.T) {
		t.Parallel()
		if target.CheckoutURL == "" {
			t.Skip("no checkout URL")
		}
		o := newDashOwner(t)
		inv := sendInvoice(t, o, newDraft(t, o, freeLine("Consulting", 2, 1000, "19"), freeLine("Travel", 1, 4550, "7")).Id)
		ctx := harness.NewBrowser(t)
		page := target.CheckoutURL + "/i/" + *inv.PublicToken
		dpDo(t, ctx, "open the hosted invoice", chromedp.Navigate(page))
		dpWait(t, ctx, "the invoice", dpHas("#invoice-number", *inv.Number)+" && "+dpHas("#total", "72.49"))
		harness.Page(t, ctx, "invoice-hosted-open")
		pay := func(card string) {
			dpDo(t, ctx, "pay by card "+card,
				dpType("#card_number", card), dpType("#card_exp", "12 / 34"), dpType("#card_cvc", "123"), dpClick("#pay-card"))
		}
		pay(payCardDecline)
		dpWait(t, ctx, "the decline", `!document.getElementById("form-error").hidden && `+dpHas("#form-error", "declined"))
		// The page came back from a plain post: its title says so and the message has the focus.
		dpWait(t, ctx, "the error title and focus", `document.title.startsWith("Error: Invoice ") && document.activeElement.id === "form-error"`)
		harness.Page(t, ctx, "invoice-hosted-declined")
		pay(payCardOK)
		dpWait(t, ctx, "the paid invoice", dpHas("#invoice-status", "Paid")+" && !document.getElementById(\"card-form\")")
		dpWait(t, ctx, "the paid title", `document.title.startsWith("Paid: Invoice ")`)
		harness.Page(t, ctx, "invoice-hosted-paid")
		g, err := o.Client.GetInvoiceWithResponse(context.Background(), dashTest, inv.Id)
		if err != nil || g.JSON200 == nil || g.JSON200.Status != "paid" || g.JSON200.AttemptCount != 2 {
			t.Fatalf("invoice after paying: %v %s", err, g.Body)
		}
	})
}

// waitInvoiceMail waits for the e-mail of invoice number to arrive in the test mailbox with
// its attachment, and answers the message's id.
func waitInvoiceMail(t *testing.T, o *DashOwner, to, number string) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		mb, err := o.Client.ListMailboxWithResponse(context.Background(), nil)
		if err != nil || mb.JSON200 == nil {
			t.Fatalf("mailbox: %v", err)
		}
		for _, m := range mb.JSON200.Data {
			if m.To == to && strings.Contains(m.Subject, number) && len(m.Attachments) == 1 {
				return m.Id
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no e-mail of %s with its PDF within 20 s", number)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
