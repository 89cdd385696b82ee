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
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

// subscriptionExamplePage is the example merchant page of docs/billing.md, as the docs show it.
func subscriptionExamplePage(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../docs/billing.md")
	if err != nil {
		t.Skipf("docs not at hand: %v", err)
	}
	doc := string(b)
	i := strings.Index(doc, "<!-- example: subscription-kassajs")
	if i < 0 {
		t.Fatal("docs/billing.md has no subscription-kassajs example")
	}
	doc = doc[i:]
	start := strings.Index(doc, "```html\n")
	if start < 0 {
		t.Fatal("the subscription-kassajs example is not an html block")
	}
	end := strings.Index(doc[start+8:], "\n```")
	if end < 0 {
		t.Fatal("the subscription-kassajs example is not an html block")
	}
	return doc[start+8 : start+8+end]
}

// subShopPage serves html from another site than the checkout origin and returns its URL.
func subShopPage(t *testing.T, html string) string {
	t.Helper()
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, html)
	}))
	t.Cleanup(shop.Close)
	return strings.Replace(shop.URL, "127.0.0.1", "localhost", 1) + "/subscribe"
}

// subKeys presses keys in the page and, when want is not empty, checks that the focus is then
// on the element with id want.
func subKeys(t *testing.T, ctx context.Context, what, want string, keys chromedp.Action[chromedp.Void]) {
	t.Helper()
	dpDo(t, ctx, what, keys)
	if want == "" {
		return
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.activeElement ? document.activeElement.id : ""`))
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("%s: the focus is on %q, want #%s", what, got, want)
	}
}

// subRetype deletes what the focused input holds and types text, by keyboard.
func subRetype(text string) chromedp.Action[chromedp.Void] {
	return chromedp.KeyEvent(kb.End + strings.Repeat(kb.Backspace, 40) + text)
}

// A merchant's own page on another site confirms the first payment of a subscription created
// with the API, with kassa.js and the keyboard alone: the page of the docs, served as it is
// there (with the checkout origin and the client secret put in), reads the first payment, is
// declined once and then saves the card; the subscription is trialing with that card as its
// default. Each state passes axe.
func TestSubscriptionKassaJSBrowser(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "D14", "browser: kassa.js confirms the first payment of a subscription with a trial by its client secret from the merchant's page (the docs' example), by keyboard alone", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		page := subscriptionExamplePage(t)
		m := newMerchant(t, true)
		s := subTrial(t, m)
		_, secret := subPI(t, s)
		html := strings.NewReplacer("http://127.0.0.1:8081", target.CheckoutURL, "SUBSCRIPTION_CLIENT_SECRET", secret).Replace(page)
		if !strings.Contains(html, target.CheckoutURL+"/js/kassa.js") || !strings.Contains(html, secret) {
			t.Fatal("the example names no kassa.js or client secret to replace")
		}

		ctx := harness.NewBrowser(t)
		dpDo(t, ctx, "open the merchant's page", chromedp.Navigate(subShopPage(t, html)))
		dpWait(t, ctx, "the first payment read through kassa.js", dpHas("#summary", "Free until")+" && "+
			dpHas("#summary", "then 9.00 EUR each period")+` && !document.getElementById("pay").hidden`)
		harness.Page(t, ctx, "subscription-kassajs")

		// The keyboard alone: Tab from the top of the page through the fields, Enter submits.
		subKeys(t, ctx, "Tab to the card number", "card-number", chromedp.KeyEvent(kb.Tab))
		subKeys(t, ctx, "type the declined card", "card-number", subRetype(payCardDecline))
		subKeys(t, ctx, "Tab to the expiry", "card-exp", chromedp.KeyEvent(kb.Tab))
		subKeys(t, ctx, "type the expiry", "card-exp", subRetype("12/34"))
		subKeys(t, ctx, "Tab to the security code", "card-cvc", chromedp.KeyEvent(kb.Tab))
		subKeys(t, ctx, "type the security code and press Enter", "", subRetype("123"+kb.Enter))
		dpWait(t, ctx, "the decline", `/declined/i.test(document.getElementById("result").textContent) && !document.getElementById("pay-button").disabled`)
		harness.Page(t, ctx, "subscription-kassajs-declined")
		if got := subGet(t, m, s.Id); got.Status != wire.SubscriptionStatusIncomplete || got.DefaultPaymentMethod != nil {
			t.Fatalf("after the decline: %s with %+v", got.Status, got.DefaultPaymentMethod)
		}

		// Back to the card number with Shift+Tab, another card, Enter from the card number.
		back := chromedp.KeyEvent(kb.Tab, chromedp.KeyModifiers(chromedp.ModifierShift))
		subKeys(t, ctx, "Shift+Tab to the expiry", "card-exp", back)
		subKeys(t, ctx, "Shift+Tab to the card number", "card-number", back)
		subKeys(t, ctx, "type the good card and press Enter", "", subRetype(payCardOK+kb.Enter))
		dpWait(t, ctx, "the subscription started", dpHas("#result", "Subscription started")+" && "+dpHas("#result", "ending 4242")+
			` && document.getElementById("pay").hidden`)
		harness.Page(t, ctx, "subscription-kassajs-started")

		resp, err := m.Test.RetrieveSubscriptionWithResponse(context.Background(), s.Id)
		if err != nil || resp.JSON200 == nil {
			t.Fatalf("retrieve the subscription: %v %d %s", err, resp.StatusCode(), resp.Body)
		}
		got := resp.JSON200
		if got.Status != wire.SubscriptionStatusTrialing || got.DefaultPaymentMethod == nil || got.DefaultPaymentMethod.Type != "card" ||
			got.DefaultPaymentMethod.Last4 != "4242" || got.DefaultPaymentMethod.ExpMonth != 12 || got.DefaultPaymentMethod.ExpYear != 2034 {
			t.Fatalf("subscription after confirming through kassa.js: %s", resp.Body)
		}
		subWantEvents(t, m, s.Id, "customer.subscription.created", "customer.subscription.updated")
	})
}

// kassa.js's first-payment helpers from another site, driven from the page's script: a secret
// that names no payment is refused before any request, a bad IBAN and a replay answer the
// browser API's errors as KassaErrors, and a SEPA account is saved for a trial.
func TestSubscriptionKassaJSHelpersBrowser(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "D14", "browser: kassa.js confirms a trial's first payment with a SEPA account and rejects with the browser API's errors (bad IBAN, replay, wrong secret)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		m := newMerchant(t, true)
		s := subTrial(t, m)
		id, secret := subPI(t, s)
		html := `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Shop: kassa.js</title>` +
			`<script src="` + target.CheckoutURL + `/js/kassa.js"></script></head><body><main><h1>Subscribe</h1></main></body></html>`
		ctx := harness.NewBrowser(t)
		dpDo(t, ctx, "open the merchant's page", chromedp.Navigate(subShopPage(t, html)))
		dpWait(t, ctx, "kassa.js loaded", `typeof Kassa === "object" && typeof Kassa.confirmPaymentIntent === "function"`)
		script := fmt.Sprintf(`(async () => {
  const secret = %s, wrong = %s, out = [];
  const err = (e) => "error:" + e.status + ":" + e.code + ":" + (e.param || "");
  const step = (p) => p.then((r) => "ok:" + r.status + ":" + r.subscription_status + ":" +
      (r.payment_method ? r.payment_method.type + ":" + r.payment_method.last4 : "none"), err);
  out.push(await step(Kassa.retrievePaymentIntent({clientSecret: "cs_test_secret_x"})));
  out.push(await step(Kassa.confirmPaymentIntent({clientSecret: secret})));
  out.push(await step(Kassa.confirmPaymentIntent({clientSecret: secret, sepa_debit: {iban: "DE00123", account_holder: "Ada Lovelace"}})));
  out.push(await step(Kassa.retrievePaymentIntent({clientSecret: wrong})));
  out.push(await step(Kassa.confirmPaymentIntent({clientSecret: secret, sepa_debit: {iban: "DE89370400440532013000", account_holder: "Ada Lovelace"}})));
  out.push(await step(Kassa.confirmPaymentIntent({clientSecret: secret, card: {number: "4242424242424242", exp_month: 12, exp_year: 2034, cvc: "123"}})));
  out.push(await step(Kassa.retrievePaymentIntent({clientSecret: secret})));
  return out.join("\n");
})()`, dpJS(secret), dpJS(id+"_secret_wrong"))
		got, err := chromedp.Run(ctx, chromedp.Evaluate[string](script, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatal(err)
		}
		want := strings.Join([]string{
			"error:0:client_secret_invalid:clientSecret",
			"error:0:parameter_missing:card",
			"error:400:iban_invalid:sepa_debit.iban",
			"error:422:payment_intent_unexpected_state:",
			"ok:succeeded:trialing:sepa_debit:3000",
			"error:422:payment_intent_unexpected_state:",
			"ok:succeeded:trialing:sepa_debit:3000",
		}, "\n")
		if got != want {
			t.Fatalf("kassa.js answers:\n%s\nwant:\n%s", got, want)
		}
		if sub := subGet(t, m, s.Id); sub.Status != wire.SubscriptionStatusTrialing || sub.DefaultPaymentMethod == nil ||
			sub.DefaultPaymentMethod.Type != "sepa_debit" || sub.DefaultPaymentMethod.Last4 != "3000" {
			t.Fatalf("subscription after a SEPA confirmation through kassa.js: %s with %+v", sub.Status, sub.DefaultPaymentMethod)
		}
	})
}

// A subscription without a trial whose first payment is a SEPA debit: kassa.js answers
// processing, and the docs' example page shows the customer that the bank payment is on its
// way instead of the form, until the debit settles. The page passes axe in that state.
func TestSubscriptionKassaJSProcessingBrowser(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "D14", "browser: a SEPA first payment reads processing through kassa.js and the docs' example page says the bank payment is on its way (test clock)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		page := subscriptionExamplePage(t)
		o := newDashOwner(t)
		clockFreeze(t, o.Test)
		s := subPlain(t, o)
		_, secret := subPI(t, s)
		html := strings.NewReplacer("http://127.0.0.1:8081", target.CheckoutURL, "SUBSCRIPTION_CLIENT_SECRET", secret).Replace(page)

		ctx := harness.NewBrowser(t)
		dpDo(t, ctx, "open the merchant's page", chromedp.Navigate(subShopPage(t, html)))
		dpWait(t, ctx, "the first payment read through kassa.js", dpHas("#summary", "9.00 EUR today")+
			` && !document.getElementById("pay").hidden`)
		script := `Kassa.confirmPaymentIntent({clientSecret: ` + dpJS(secret) + `, sepa_debit: {iban: "DE89370400440532013000",
  account_holder: "Ada Lovelace"}}).then((r) => r.status + ":" + r.subscription_status, (e) => "error:" + e.status + ":" + e.code)`
		got, err := chromedp.Run(ctx, chromedp.Evaluate[string](script, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatal(err)
		}
		if got != "processing:incomplete" {
			t.Fatalf("kassa.js confirm with a SEPA debit: %s", got)
		}
		dpDo(t, ctx, "reload the merchant's page", chromedp.Reload())
		dpWait(t, ctx, "the processing message", dpHas("#result", "being processed")+` && document.getElementById("pay").hidden`)
		harness.Page(t, ctx, "subscription-kassajs-processing")

		clockAdvance(t, o.Test, 120)
		dpDo(t, ctx, "reload the merchant's page", chromedp.Reload())
		dpWait(t, ctx, "the subscription started", dpHas("#result", "Subscription started")+` && document.getElementById("pay").hidden`)
		if got := subGet(t, o.Merchant, s.Id); got.Status != wire.SubscriptionStatusActive {
			t.Fatalf("after the settlement: %s", got.Status)
		}
	})
}
