package conformance

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/kassa-pay/kassa/conformance/harness"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

// 3-D Secure while saving a card for a subscription, in headless Chromium with the keyboard
// alone: the hosted invoice page of a renewal that declined authentication_required, and the
// docs' kassa.js page confirming a trial. Every state passes axe.
func TestSubscriptionThreeDSecureBrowser(t *testing.T) {
	t.Parallel()
	const day = int64(86400)

	harness.Rule(t, "D15", "browser: a renewal declined authentication_required is paid on the hosted invoice page with the same card through its 3-D Secure challenges, by keyboard alone", func(t *testing.T) {
		t.Parallel()
		o := subFrozenOwner(t)
		s, inv := subPastDue3DS(t, o)

		ctx := harness.NewBrowser(t)
		pgOpen(t, ctx, target.CheckoutURL+"/i/"+*inv.PublicToken, "#card-form")
		dpWait(t, ctx, "the invoice", dpHas("#invoice-number", *inv.Number)+" && "+dpHas("#total", "9.00"))
		harness.Page(t, ctx, "invoice-hosted-3ds-renewal")
		for _, st := range []struct{ want, keys string }{
			{"card_number", payCard3DS}, {"card_exp", "1234"}, {"card_cvc", "123"}, {"pay-card", kb.Enter},
		} {
			pgTabTo(t, ctx, st.want)
			dpDo(t, ctx, "type into #"+st.want, chromedp.KeyEvent(st.keys))
		}
		// The challenge of saving the card, then the one of the charge made with it. Each answer
		// is a form post that loads a new page (the mark set on the old one is gone).
		for i, what := range []string{"saving the card", "the charge"} {
			dpWait(t, ctx, "the challenge of "+what, `!window.kassaTestMark && document.getElementById("challenge-complete") && `+
				`document.title.startsWith("Confirm your payment")`)
			if i == 0 {
				if a := subInvoice(t, o, inv.Id); a.Status != "open" || a.AttemptCount != 1 {
					t.Fatalf("charged before the challenge: %+v", a)
				}
				harness.Page(t, ctx, "invoice-hosted-3ds-save-challenge")
			}
			if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.kassaTestMark = true`)); err != nil {
				t.Fatal(err)
			}
			pgTabTo(t, ctx, "challenge-complete")
			dpDo(t, ctx, "complete the challenge of "+what, chromedp.KeyEvent(kb.Enter))
		}
		dpWait(t, ctx, "the paid invoice", dpHas("#invoice-status", "Paid")+` && document.title.startsWith("Paid: Invoice ")`)
		harness.Page(t, ctx, "invoice-hosted-3ds-paid")
		after := subGet(t, o.Merchant, s.Id)
		if after.Status != wire.SubscriptionStatusActive || after.DefaultPaymentMethod == nil || after.DefaultPaymentMethod.Last4 != "3184" {
			t.Fatalf("subscription after paying: %+v", after)
		}
		paid := subInvoice(t, o, inv.Id)
		if paid.Status != "paid" || paid.NextPaymentAttempt != nil {
			t.Fatalf("invoice %+v", paid)
		}
		// The schedule stopped: no retry at +3 days.
		clockAdvance(t, o.Test, 3*day)
		if again := subInvoice(t, o, inv.Id); again.AttemptCount != paid.AttemptCount || again.Status != "paid" {
			t.Fatalf("retried after the payment: %+v", again)
		}
	})

	harness.Rule(t, "D14", "browser: kassa.js (the docs' example) saves a card that asks for 3-D Secure for a trial through its challenge, by keyboard alone", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		page := subscriptionExamplePage(t)
		m := newMerchant(t, true)
		s := subTrial(t, m)
		_, secret := subPI(t, s)
		html := strings.NewReplacer("http://127.0.0.1:8081", target.CheckoutURL, "SUBSCRIPTION_CLIENT_SECRET", secret).Replace(page)

		ctx := harness.NewBrowser(t)
		dpDo(t, ctx, "open the merchant's page", chromedp.Navigate(subShopPage(t, html)))
		dpWait(t, ctx, "the first payment read through kassa.js", dpHas("#summary", "Free until")+` && !document.getElementById("pay").hidden`)
		subKeys(t, ctx, "Tab to the card number", "card-number", chromedp.KeyEvent(kb.Tab))
		subKeys(t, ctx, "type the 3-D Secure card", "card-number", subRetype(payCard3DS))
		subKeys(t, ctx, "Tab to the expiry", "card-exp", chromedp.KeyEvent(kb.Tab))
		subKeys(t, ctx, "type the expiry", "card-exp", subRetype("12/34"))
		subKeys(t, ctx, "Tab to the security code", "card-cvc", chromedp.KeyEvent(kb.Tab))
		subKeys(t, ctx, "type the security code and press Enter", "", subRetype("123"+kb.Enter))
		dpWait(t, ctx, "the challenge", `!document.getElementById("challenge").hidden && document.getElementById("pay").hidden && `+
			`document.activeElement.id === "challenge-complete"`)
		harness.Page(t, ctx, "subscription-kassajs-challenge")
		if got := subGet(t, m, s.Id); got.Status != wire.SubscriptionStatusIncomplete || got.DefaultPaymentMethod != nil {
			t.Fatalf("saved before the challenge: %+v", got)
		}
		subKeys(t, ctx, "complete the challenge", "", chromedp.KeyEvent(kb.Enter))
		dpWait(t, ctx, "the subscription started", dpHas("#result", "Subscription started")+" && "+dpHas("#result", "ending 3184"))
		harness.Page(t, ctx, "subscription-kassajs-challenge-passed")
		resp, err := m.Test.RetrieveSubscriptionWithResponse(context.Background(), s.Id)
		if err != nil || resp.JSON200 == nil {
			t.Fatalf("retrieve: %v", err)
		}
		if g := resp.JSON200; g.Status != wire.SubscriptionStatusTrialing || g.DefaultPaymentMethod == nil || g.DefaultPaymentMethod.Last4 != "3184" {
			t.Fatalf("subscription %s", resp.Body)
		}
	})
}
