package conformance

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kassa-pay/kassa/conformance/harness"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
)

// ibDunningMail waits for the dunning e-mail of invoice number in the test mailbox.
func ibDunningMail(t *testing.T, o *DashOwner, number string) dash.MailboxMessage {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		mb, err := o.Client.ListMailboxWithResponse(context.Background(), nil)
		if err != nil || mb.JSON200 == nil {
			t.Fatalf("mailbox: %v", err)
		}
		for _, m := range mb.JSON200.Data {
			if strings.Contains(m.Subject, "Payment failed") && strings.Contains(m.Text, number) {
				return m
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no dunning e-mail of %s within 20 s", number)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestInvoiceAppliedBalanceBrowser(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "D14", "browser: an invoice that took the customer's credit shows the applied balance between the total and the amount due on its hosted page, in its dunning e-mail and in the dashboard, and is paid for the amount due (test clock)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		clockFreeze(t, o.Test)
		// A €9.00 monthly subscription with a 14-day trial on a card that declines every later
		// charge, and €4.00 of credit given by hand: the trial-end invoice takes it, asks for
		// €5.00, and its charge fails.
		s := subTrialPaid(t, o, "4000000000000341")
		if r := cbAdjust(t, o, s.Customer, dash.CustomerBalanceAdjustment{Amount: -400, Currency: "EUR"}, ""); r.JSON201 == nil {
			t.Fatalf("adjust: %d %s", r.StatusCode(), r.Body)
		}
		clockAdvance(t, o.Test, *s.TrialEnd-s.Created)
		got := subGet(t, o.Merchant, s.Id)
		inv := subInvoice(t, o, *got.LatestInvoice)
		if inv.Status != "open" || inv.TotalAmount != 900 || inv.StartingBalance != -400 || inv.EndingBalance != 0 || inv.AmountDue != 500 {
			t.Fatalf("trial-end invoice %+v", inv)
		}
		mail := ibDunningMail(t, o, *inv.Number)
		text := strings.ReplaceAll(mail.Text, "\r\n", "\n")
		if !strings.Contains(text, "Total: 9.00 EUR\nApplied balance: -4.00 EUR\nAmount due: 5.00 EUR") || !strings.Contains(mail.Html, "Applied balance") {
			t.Fatalf("dunning e-mail:\n%s", mail.Text)
		}

		ctx := harness.NewBrowser(t)
		dpDo(t, ctx, "open the hosted invoice", chromedp.Navigate(target.CheckoutURL+"/i/"+*inv.PublicToken))
		dpWait(t, ctx, "total, applied balance and amount due", dpHas("#total", "9.00")+" && "+dpHas("#invoice-applied-balance", "−4.00")+
			" && "+dpHas("#invoice-amount-due", "5.00")+" && "+dpHas("#pay-card", "5.00")+
			` && document.querySelector("#invoice-applied-balance").closest("tr").previousElementSibling.querySelector("#total")`+
			` && document.querySelector("#invoice-applied-balance").closest("tr").nextElementSibling.querySelector("#invoice-amount-due")`)
		harness.Page(t, ctx, "invoice-hosted-applied-balance")
		dpDo(t, ctx, "pay by card", dpType("#card_number", payCardOK), dpType("#card_exp", "12 / 34"), dpType("#card_cvc", "123"), dpClick("#pay-card"))
		dpWait(t, ctx, "the paid invoice", dpHas("#invoice-status", "Paid")+" && "+dpHas("#invoice-applied-balance", "−4.00")+
			" && "+dpHas("#invoice-amount-paid", "5.00")+" && "+dpHas("#invoice-amount-due", "0.00"))
		harness.Page(t, ctx, "invoice-hosted-applied-balance-paid")
		if p := subInvoice(t, o, inv.Id); p.Status != "paid" || p.AmountPaid != 500 {
			t.Fatalf("after paying %+v", p)
		}
		// The dashboard's invoice page shows it too.
		dpSignIn(t, ctx, o)
		dpGo(t, ctx, "/test/invoices/"+inv.Id)
		dpWait(t, ctx, "the applied balance in the dashboard", dpHas("[data-applied-balance]", "4.00"))
		harness.Page(t, ctx, "dashboard-invoice-applied-balance")
	})
}
