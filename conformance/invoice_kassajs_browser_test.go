package conformance

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/kassa-pay/kassa/conformance/harness"
)

// invoiceExamplePage is the example merchant page of docs/invoices.md, as the docs show it.
func invoiceExamplePage(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../docs/invoices.md")
	if err != nil {
		t.Skipf("docs not at hand: %v", err)
	}
	doc := string(b)
	i := strings.Index(doc, "<!-- example: invoice-kassajs")
	if i < 0 {
		t.Fatal("docs/invoices.md has no invoice-kassajs example")
	}
	doc = doc[i:]
	start := strings.Index(doc, "```html\n")
	end := strings.Index(doc[start+8:], "\n```")
	if start < 0 || end < 0 {
		t.Fatal("the invoice-kassajs example is not an html block")
	}
	return doc[start+8 : start+8+end]
}

// A merchant's own page on another site pays an invoice with kassa.js: the page of the docs,
// served as it is there (with the checkout origin and the token put in), reads the invoice, is
// declined once and then pays; the invoice is paid. The page passes axe.
func TestInvoiceKassaJSBrowser(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "D15", "browser: kassa.js reads and pays an invoice by its public token from the merchant's page (the docs' example)", func(t *testing.T) {
		t.Parallel()
		if target.CheckoutURL == "" {
			t.Skip("no checkout URL")
		}
		page := invoiceExamplePage(t)
		o := newDashOwner(t)
		inv := sendInvoice(t, o, newDraft(t, o, freeLine("Consulting", 2, 1000, "19")).Id)
		token := *inv.PublicToken
		base := strings.TrimSuffix(*inv.HostedInvoiceUrl, "/i/"+token)
		html := strings.NewReplacer("http://127.0.0.1:8081", base, "INVOICE_PUBLIC_TOKEN", token).Replace(page)
		if !strings.Contains(html, base+"/js/kassa.js") || !strings.Contains(html, token) {
			t.Fatal("the example names no kassa.js or token to replace")
		}
		shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, html)
		}))
		t.Cleanup(shop.Close)
		origin := strings.Replace(shop.URL, "127.0.0.1", "localhost", 1) // another site than the checkout origin

		ctx := harness.NewBrowser(t)
		dpDo(t, ctx, "open the merchant's page", chromedp.Navigate(origin+"/pay"))
		dpWait(t, ctx, "the invoice read through kassa.js", dpHas("#number", *inv.Number)+" && "+dpHas("#amount", "23.80 EUR")+
			" && "+dpHas("#status", "open")+` && document.getElementById("pdf").href === `+dpJS(base+"/i/"+token+"/pdf"))
		harness.Page(t, ctx, "invoice-kassajs")
		pay := func(card string) {
			dpDo(t, ctx, "pay by card "+card, retype("#card-number", card), retype("#card-exp", "12/34"), retype("#card-cvc", "123"),
				dpClick("#pay-button"))
		}
		pay(payCardDecline)
		dpWait(t, ctx, "the decline", `/declined/i.test(document.getElementById("result").textContent) && !document.getElementById("pay-button").disabled`)
		harness.Page(t, ctx, "invoice-kassajs-declined")
		pay(payCardOK)
		dpWait(t, ctx, "the paid invoice", dpHas("#result", "Paid")+" && "+dpHas("#status", "paid")+` && document.getElementById("pay").hidden`)
		harness.Page(t, ctx, "invoice-kassajs-paid")
		g, err := o.Client.GetInvoiceWithResponse(context.Background(), dashTest, inv.Id)
		if err != nil || g.JSON200 == nil || g.JSON200.Status != "paid" || g.JSON200.AmountPaid != 2380 || g.JSON200.AttemptCount != 2 {
			t.Fatalf("invoice after paying through kassa.js: %v %s", err, g.Body)
		}
	})
}

// retype replaces the text of input sel by keyboard, as a person would: focus, delete what is
// there, type (chromedp.Clear does not clear a field the page's script has read again).
func retype(sel, text string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(chromedp.Focus(chromedp.CSS(sel), chromedp.NodeVisible),
		chromedp.KeyEvent(kb.End+strings.Repeat(kb.Backspace, 40)+text))
}
