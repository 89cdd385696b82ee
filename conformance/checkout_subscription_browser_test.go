package conformance

import (
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/kassa-pay/kassa/conformance/harness"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

// A subscription checkout with a trial in a browser, by keyboard alone: the page shows the
// trial and the recurring price, the buyer starts the trial and lands on success_url, and the
// session names the trialing subscription. The page is checked with axe and saved as
// out/screenshots/checkout-subscription-trial*.png.
func TestCheckoutSubscriptionBrowser(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "D14", "browser: a subscription checkout with a 7-day trial, by keyboard, lands on success_url with a trialing subscription", func(t *testing.T) {
		t.Parallel()
		m, shop := newMerchant(t, true), pgNewShop(t)
		price := subPrice(t, m, 900, &api.RecurringParams{Interval: wire.RecurringIntervalMonth, TrialPeriodDays: ptr(7)})
		body := csSubBody(price.Id, 1)
		body["success_url"] = shop.Origin() + "/thanks"
		body["cancel_url"] = shop.Origin() + "/cart"
		body["description"] = "Pro plan"
		s := csWantOK(t, csPost(t, m.TestKey, body))

		ctx := harness.NewBrowser(t)
		pgOpen(t, ctx, s.CheckoutUrl, "#card-form")
		pgWaitText(t, ctx, "#trial", "7-day free trial")
		pgWaitText(t, ctx, "#recurring", "then 9.00 € every month")
		pgWaitText(t, ctx, "#pay-card", "Start trial")
		harness.Page(t, ctx, "checkout-subscription-trial")

		steps := []struct{ want, keys string }{
			{"card_name", "Ada Lovelace"}, {"card_number", payCardOK}, {"card_exp", "1234"}, {"card_cvc", "123"}, {"pay-card", kb.Enter},
		}
		for _, st := range steps {
			pgTabTo(t, ctx, st.want)
			if err := chromedp.Do(ctx, chromedp.KeyEvent(st.keys)); err != nil {
				t.Fatal(err)
			}
		}
		pgWaitLocation(t, ctx, shop.Origin()+"/thanks")
		got := csGet(t, m.Test, s.Id)
		if got.Status != wire.CheckoutSessionStatusComplete || got.Subscription == nil {
			t.Fatalf("session: status %s subscription %v", got.Status, got.Subscription)
		}
		if sub := subGet(t, m, *got.Subscription); sub.Status != wire.SubscriptionStatusTrialing || sub.DefaultPaymentMethod == nil {
			t.Fatalf("subscription: %+v", sub)
		}
	})
}
