package conformance

import (
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/kassa-pay/kassa/conformance/harness"
)

func TestDashboardPagesDisputes(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "PAGES", "a dispute answered from its page with the keyboard: listed first with its time left, evidence submitted, won a day later and shown on the payment", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t) // signed in for the API; the browser signs in on its own
		clockFreeze(t, o.Test)
		s := dashPay(t, o.Merchant, 2500, "eur", payCardDispute)
		clockAdvance(t, o.Test, asyncDisputeWait)
		d := paymentDetail(t, o, s.Payment.Id).Dispute
		if d == nil {
			t.Fatal("no dispute on the payment")
		}
		ctx := harness.NewBrowser(t)
		dpSignIn(t, ctx, o)

		// The overview counts the payment as disputed, not as succeeded.
		dpWait(t, ctx, "the disputed card", dpHas(`[data-card="disputed"]`, "1")+" && "+dpHas(`[data-card="succeeded"]`, "0"))

		dpGo(t, ctx, "/test/disputes")
		dpWait(t, ctx, "the dispute listed with its time left", `document.querySelector('a[data-dispute="`+d.Id+`"]')`+" && "+dpHas("tbody", "7 days left"))
		harness.Page(t, ctx, "dashboard-disputes")

		dpGo(t, ctx, "/test/disputes/"+d.Id)
		dpWait(t, ctx, "the evidence form", `document.querySelector('#evidence-form textarea[name="text"]')`)
		harness.Page(t, ctx, "dashboard-dispute-evidence-form")
		// Keyboard only: type into the field, focus the submit button and press Enter.
		dpDo(t, ctx, "write and submit the evidence",
			chromedp.Focus(chromedp.CSS(`#evidence-form textarea[name="text"]`), chromedp.NodeVisible),
			chromedp.KeyEvent("Signed delivery receipt. winning_evidence"),
			chromedp.Focus(chromedp.CSS(`#evidence-form button[data-action="submit"]`), chromedp.NodeVisible),
			chromedp.KeyEvent("\r"))
		dpWait(t, ctx, "under review", dpHas(".page-head .badge", "under review")+" && "+dpHas("#dispute-evidence", "winning_evidence"))
		harness.Page(t, ctx, "dashboard-dispute-under-review")
		if g := getDispute(t, o, d.Id); g.Status != "under_review" {
			t.Fatalf("after the page's submission: %s", g.Status)
		}

		clockAdvance(t, o.Test, day)
		dpGo(t, ctx, "/test/payments/"+s.Payment.Id)
		dpWait(t, ctx, "the won dispute on the payment", dpHas("#dispute .badge", "won")+" && "+dpHas(".page-head .badge", "succeeded"))
		harness.Page(t, ctx, "dashboard-payment-dispute-won")
	})
}
