package conformance

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/kassa-pay/kassa/conformance/harness"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
)

// The hosted pages in headless Chromium (issue 3 §5): a buyer pays, is declined, passes or
// fails 3-D Secure, pays by SEPA, cancels, meets an expired link, pays inside an iframe on a
// shop's page, and a shop's own page pays with kassa.js. Each state is saved as a screenshot
// under out/screenshots/checkout-*.png.

// pgType replaces the value of each input (by id) with what a buyer types.
func pgType(t *testing.T, ctx context.Context, kv ...string) {
	t.Helper()
	for i := 0; i+1 < len(kv); i += 2 {
		clear := `document.getElementById("` + kv[i] + `").value = ""`
		if err := chromedp.Do(ctx,
			chromedp.WaitReady(chromedp.ID(kv[i])),
			chromedp.Evaluate[chromedp.Void](clear),
			chromedp.Focus(chromedp.ID(kv[i]), chromedp.NodeVisible), // not SendKeys: see dpType
			chromedp.KeyEvent(kv[i+1]),
		); err != nil {
			t.Fatalf("type into #%s: %v", kv[i], err)
		}
	}
}

func pgClick(t *testing.T, ctx context.Context, id string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID(id))); err != nil {
		t.Fatalf("click #%s: %v", id, err)
	}
}

// pgOpen navigates to u and waits until the page's element sel is there.
func pgOpen(t *testing.T, ctx context.Context, u, sel string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(u), chromedp.WaitReady(chromedp.CSS(sel))); err != nil {
		t.Fatalf("open %s: %v", u, err)
	}
}

func pgCard(t *testing.T, ctx context.Context, number string) {
	t.Helper()
	pgType(t, ctx, "card_name", "Ada Lovelace", "card_number", number, "card_exp", "1234", "card_cvc", "123")
}

// pgBrowserSession creates a session whose success and cancel URLs are the shop's pages.
func pgBrowserSession(t *testing.T, m *Merchant, shop *pgShop, kv ...any) api.CheckoutSession {
	t.Helper()
	kv = append([]any{"success_url", shop.Origin() + "/thanks", "cancel_url", shop.Origin() + "/cart",
		"description", "Two handmade mugs", "line_items", []map[string]any{
			{"name": "Mug", "quantity": 2, "amount": 1250},
		}}, kv...)
	return pgSession(t, m, kv...)
}

func TestCheckoutPagesBrowser(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "D6", "browser: pay with 4242 on the hosted page and land on success_url", func(t *testing.T) {
		t.Parallel()
		m, shop := newMerchant(t, true), pgNewShop(t)
		s := pgBrowserSession(t, m, shop)
		ctx := harness.NewBrowser(t)
		pgOpen(t, ctx, s.CheckoutUrl, "#card-form")
		harness.Page(t, ctx, "checkout-page")
		pgCard(t, ctx, "4242 4242 4242 4242")
		harness.Page(t, ctx, "checkout-card-filled")
		pgClick(t, ctx, "pay-card")
		pgWaitLocation(t, ctx, shop.Origin()+"/thanks")
		pgWaitText(t, ctx, "#shop-thanks", "Thank you")
		pgWantComplete(t, m, s.Id, "succeeded")
	})

	harness.Rule(t, "D6", "browser: mistakes are flagged as the buyer types; a decline is shown and a success card then pays", func(t *testing.T) {
		t.Parallel()
		m, shop := newMerchant(t, true), pgNewShop(t)
		s := pgBrowserSession(t, m, shop)
		ctx := harness.NewBrowser(t)
		pgOpen(t, ctx, s.CheckoutUrl, "#card-form")
		pgType(t, ctx, "card_number", "4242 4242 4242 4241", "card_exp", "0120", "card_cvc", "1")
		pgClick(t, ctx, "card_name") // leaving the fields shows their errors
		pgWaitText(t, ctx, "#err-card_number", "Your card number is invalid")
		pgWaitText(t, ctx, "#err-card_exp", "expired")
		harness.Page(t, ctx, "checkout-inline-errors")

		pgCard(t, ctx, "4000 0000 0000 0002")
		if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`window.kassaTestMark = "same page"`)); err != nil {
			t.Fatal(err)
		}
		pgClick(t, ctx, "pay-card")
		pgWaitText(t, ctx, "#form-error", "Your card was declined")
		// The script confirmed through the browser API: the decline is shown without a reload.
		if mark, err := chromedp.Run(ctx, chromedp.Evaluate[string](`String(window.kassaTestMark)`)); err != nil || mark != "same page" {
			t.Fatalf("the page was reloaded for the decline (mark %q, %v)", mark, err)
		}
		harness.Page(t, ctx, "checkout-declined")
		if got := csGet(t, m.Test, s.Id); got.Status != "open" {
			t.Fatalf("after a decline the session is %s, want open", got.Status)
		}
		pgCard(t, ctx, "4242 4242 4242 4242")
		pgClick(t, ctx, "pay-card")
		pgWaitLocation(t, ctx, shop.Origin()+"/thanks")
		pgWantComplete(t, m, s.Id, "succeeded")
	})

	harness.Rule(t, "D6", "browser: a card payment by keyboard alone: Tab through the fields, Enter on Pay; after a decline focus is on the message", func(t *testing.T) {
		t.Parallel()
		m, shop := newMerchant(t, true), pgNewShop(t)
		s := pgBrowserSession(t, m, shop)
		ctx := harness.NewBrowser(t)
		pgOpen(t, ctx, s.CheckoutUrl, "#card-form")
		// From the top of the page: Tab to each field and type, Tab to Pay, press Enter.
		steps := []struct{ want, keys string }{
			{"card_name", "Ada Lovelace"}, {"card_number", payCardDecline}, {"card_exp", "1234"}, {"card_cvc", "123"}, {"pay-card", kb.Enter},
		}
		for _, st := range steps {
			pgTabTo(t, ctx, st.want)
			if err := chromedp.Do(ctx, chromedp.KeyEvent(st.keys)); err != nil {
				t.Fatal(err)
			}
		}
		pgWaitText(t, ctx, "#form-error", "Your card was declined")
		// Focus is not lost with the disabled button: it is on the message, announced and read.
		pgWaitFocus(t, ctx, "form-error")
		harness.Page(t, ctx, "checkout-keyboard-declined")
		// Back to the card number (Tab from the message), erase it, type a card that pays.
		pgTabTo(t, ctx, "card_number")
		if err := chromedp.Do(ctx, chromedp.KeyEvent(strings.Repeat(kb.Backspace, 24)+payCardOK)); err != nil {
			t.Fatal(err)
		}
		pgTabTo(t, ctx, "pay-card")
		if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Enter)); err != nil {
			t.Fatal(err)
		}
		pgWaitLocation(t, ctx, shop.Origin()+"/thanks")
		pgWantComplete(t, m, s.Id, "succeeded")
	})

	harness.Rule(t, "D6", "browser: an outcome shown in place takes the title and the focus (a screen reader announces it)", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		s := pgSession(t, m) // no success_url: the receipt is shown in place
		ctx := harness.NewBrowser(t)
		pgOpen(t, ctx, s.CheckoutUrl, "#card-form")
		pgCard(t, ctx, payCardOK)
		pgClick(t, ctx, "pay-card")
		pgWaitText(t, ctx, "#heading", "payment was received")
		pgWaitFocus(t, ctx, "heading")
		if title, err := chromedp.Run(ctx, chromedp.Title()); err != nil || title != "Payment received" {
			t.Fatalf("title %q (%v), want Payment received", title, err)
		}
	})

	harness.Rule(t, "D6", "browser: a double click on Pay sends one confirmation: one payment, one checkout.session.completed", func(t *testing.T) {
		t.Parallel()
		m, shop := newMerchant(t, true), pgNewShop(t)
		s := pgBrowserSession(t, m, shop)
		ctx := harness.NewBrowser(t)
		pgOpen(t, ctx, s.CheckoutUrl, "#card-form")
		pgCard(t, ctx, payCardOK)
		if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](
			`(function(){var b=document.getElementById("pay-card"); b.click(); b.click(); b.click();})()`)); err != nil {
			t.Fatal(err)
		}
		pgWaitLocation(t, ctx, shop.Origin()+"/thanks")
		pgWantComplete(t, m, s.Id, "succeeded")
	})

	harness.Rule(t, "D6", "browser: 3-D Secure, Fail shows authentication failed, Complete pays", func(t *testing.T) {
		t.Parallel()
		m, shop := newMerchant(t, true), pgNewShop(t)
		s := pgBrowserSession(t, m, shop)
		ctx := harness.NewBrowser(t)
		pgOpen(t, ctx, s.CheckoutUrl, "#card-form")
		pgCard(t, ctx, payCard3DS)
		pgClick(t, ctx, "pay-card")
		pgWaitLocation(t, ctx, pgBase(t, s)+"/c/"+s.Id+"/3ds")
		pgWaitText(t, ctx, "#challenge-complete", "Complete")
		harness.Page(t, ctx, "checkout-3ds-challenge")
		pgClick(t, ctx, "challenge-fail")
		pgWaitText(t, ctx, "#form-error", "could not authenticate")
		harness.Page(t, ctx, "checkout-3ds-failed")
		pgCard(t, ctx, payCard3DS)
		pgClick(t, ctx, "pay-card")
		pgWaitText(t, ctx, "#challenge-complete", "Complete")
		pgClick(t, ctx, "challenge-complete")
		pgWaitLocation(t, ctx, shop.Origin()+"/thanks")
		pgWantComplete(t, m, s.Id, "succeeded")
	})

	harness.Rule(t, "D6", "browser: SEPA debit goes to success_url with the payment processing", func(t *testing.T) {
		t.Parallel()
		m, shop := newMerchant(t, true), pgNewShop(t)
		s := pgBrowserSession(t, m, shop)
		ctx := harness.NewBrowser(t)
		pgOpen(t, ctx, s.CheckoutUrl, "#card-form")
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#sepa summary")), chromedp.WaitVisible(chromedp.ID("iban"))); err != nil {
			t.Fatal(err)
		}
		pgType(t, ctx, "account_holder", "Ada Lovelace", "iban", "DE89 3704 0044 0532 0130 00")
		harness.Page(t, ctx, "checkout-sepa")
		pgClick(t, ctx, "pay-sepa")
		pgWaitLocation(t, ctx, shop.Origin()+"/thanks")
		pgWantComplete(t, m, s.Id, "processing")
	})

	harness.Rule(t, "D6", "browser: Cancel goes to cancel_url and the session is canceled", func(t *testing.T) {
		t.Parallel()
		m, shop := newMerchant(t, true), pgNewShop(t)
		s := pgBrowserSession(t, m, shop)
		ctx := harness.NewBrowser(t)
		pgOpen(t, ctx, s.CheckoutUrl, "#card-form")
		pgClick(t, ctx, "cancel")
		pgWaitLocation(t, ctx, shop.Origin()+"/cart")
		harness.Screenshot(t, ctx, "checkout-canceled-shop")
		if got := csGet(t, m.Test, s.Id); got.Status != "canceled" {
			t.Fatalf("session %s, want canceled", got.Status)
		}
	})

	harness.Rule(t, "D6", "browser: an expired link shows the session_expired page (422); without success_url a receipt", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		s := pgSession(t, m, "reference", "order-9")
		ctx := harness.NewBrowser(t)
		pgOpen(t, ctx, s.CheckoutUrl, "#card-form")
		pgCard(t, ctx, payCardOK)
		pgClick(t, ctx, "pay-card")
		pgWaitText(t, ctx, "#heading", "payment was received")
		pgWaitText(t, ctx, "#receipt", "25.00 €")
		harness.Page(t, ctx, "checkout-receipt")

		x := pgSession(t, m)
		if resp := csExpire(t, m.Test, x.Id); resp.JSON200 == nil {
			t.Fatalf("expire: %d", resp.StatusCode())
		}
		resp, err := chromedp.Run(ctx, chromedp.NavigateResponse(x.CheckoutUrl))
		if err != nil {
			t.Fatal(err)
		}
		if resp.Status != http.StatusUnprocessableEntity {
			t.Fatalf("expired link: %d, want 422", resp.Status)
		}
		pgWaitText(t, ctx, "#heading", "no longer valid")
		harness.Page(t, ctx, "checkout-expired")
		if err := chromedp.Do(ctx, chromedp.Navigate(pgBase(t, s)+"/no/such/page")); err != nil {
			t.Fatal(err)
		}
		pgWaitText(t, ctx, "#heading", "Page not found")
		harness.Page(t, ctx, "checkout-not-found")
	})

	harness.Rule(t, "D6", "browser: the card path works with JavaScript turned off", func(t *testing.T) {
		t.Parallel()
		m, shop := newMerchant(t, true), pgNewShop(t)
		s := pgBrowserSession(t, m, shop)
		ctx := harness.NewBrowser(t)
		if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
			t.Fatal(err)
		}
		pgOpen(t, ctx, s.CheckoutUrl, "#card-form")
		pgCard(t, ctx, payCardDecline)
		pgClick(t, ctx, "pay-card")
		pgWaitText(t, ctx, "#form-error", "declined")
		// axe needs timers, which do not run with scripts off: turn them on for the check only.
		// The page's own script is not run again, so axe sees the page as served without it.
		setScripts := func(disabled bool) {
			t.Helper()
			if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: disabled}); err != nil {
				t.Fatal(err)
			}
		}
		setScripts(false)
		harness.Page(t, ctx, "checkout-nojs-declined")
		setScripts(true)
		pgCard(t, ctx, payCardOK)
		pgClick(t, ctx, "pay-card")
		pgWaitLocation(t, ctx, shop.Origin()+"/thanks")
		pgWantComplete(t, m, s.Id, "succeeded")
	})

	harness.Rule(t, "D6", "browser: the embed page pays inside an iframe on another site and the buyer leaves the frame for success_url", func(t *testing.T) {
		t.Parallel()
		m, shop := newMerchant(t, true), pgNewShop(t)
		s := pgBrowserSession(t, m, shop)
		ctx := harness.NewBrowser(t)
		pgOpen(t, ctx, shop.Origin()+"/frame?src="+url.QueryEscape(s.EmbedUrl), "#kassa")
		frame := pgFrame(t, ctx, pgBase(t, s)+"/embed/"+s.Id)
		if err := chromedp.Do(frame, chromedp.WaitReady(chromedp.ID("card-form"))); err != nil {
			t.Fatal(err)
		}
		harness.Axe(t, frame, "checkout-embed (the framed page)")
		harness.Screenshot(t, ctx, "checkout-embed")
		pgCard(t, frame, payCardOK)
		pgClick(t, frame, "pay-card")
		pgLeaveFrame(t, ctx, frame, shop.Origin()+"/thanks")
		pgWaitText(t, ctx, "#shop-thanks", "Thank you")
		harness.Screenshot(t, ctx, "checkout-embed-left-frame")
		pgWantComplete(t, m, s.Id, "succeeded")
	})

	harness.Rule(t, "D6", "browser: a shop's page on another origin pays with kassa.js through the browser API (CORS)", func(t *testing.T) {
		t.Parallel()
		m, shop := newMerchant(t, true), pgNewShop(t)
		s := pgSession(t, m)
		ctx := harness.NewBrowser(t)
		page := func(card string, s api.CheckoutSession) string {
			return shop.Origin() + "/kassajs?" + url.Values{"kassa": {pgBase(t, s)}, "session": {s.Id}, "secret": {s.ClientSecret}, "card": {card}}.Encode()
		}
		pgOpen(t, ctx, page(payCardDecline, s), "#pay")
		pgClick(t, ctx, "pay")
		pgWaitText(t, ctx, "#result", "error:402:card_declined:generic_decline")
		pgOpen(t, ctx, page(payCardOK, s), "#pay")
		pgClick(t, ctx, "pay")
		pgWaitText(t, ctx, "#result", "ok:succeeded")
		harness.Screenshot(t, ctx, "checkout-kassajs")
		pgWantComplete(t, m, s.Id, "succeeded")
	})
}

// pgFrame attaches to the iframe whose URL starts with prefix (another site's frame is a
// target of its own in Chromium) and returns a context that acts inside it.
func pgFrame(t *testing.T, ctx context.Context, prefix string) context.Context {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		infos, err := chromedp.Targets(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, info := range infos {
			if info.Type == "iframe" && strings.HasPrefix(info.URL, prefix) {
				frame, cancel := chromedp.NewContext(ctx, chromedp.WithTargetID(info.TargetID))
				t.Cleanup(cancel)
				return frame
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no iframe at %s…", prefix)
	return nil
}

// pgLeaveFrame waits until the top page is at want. A frame may not move its parent without a
// user gesture, so when the payment ended on the frame's "Continue" page (the no-script path),
// the buyer clicks it.
func pgLeaveFrame(t *testing.T, ctx, frame context.Context, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	clicked := false
	for time.Now().Before(deadline) {
		if loc, _ := chromedp.Run(ctx, chromedp.Location()); strings.HasPrefix(loc, want) {
			return
		}
		if !clicked {
			short, cancel := context.WithTimeout(frame, 300*time.Millisecond)
			n, err := chromedp.Run(short, chromedp.Evaluate[int](`document.querySelectorAll("#continue").length`))
			cancel()
			if err == nil && n > 0 {
				clicked = chromedp.Do(frame, chromedp.Click(chromedp.ID("continue"))) == nil
			}
		}
		time.Sleep(150 * time.Millisecond)
	}
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	t.Fatalf("top page at %q, want %s", loc, want)
}

// pgTabTo presses Tab until the element with id has the focus (at most 15 times).
func pgTabTo(t *testing.T, ctx context.Context, id string) {
	t.Helper()
	for i := 0; i < 15; i++ {
		if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Tab)); err != nil {
			t.Fatal(err)
		}
		got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.activeElement ? document.activeElement.id : ""`))
		if err != nil {
			t.Fatal(err)
		}
		if got == id {
			return
		}
	}
	t.Fatalf("Tab never reached #%s", id)
}

// pgWaitFocus waits until the element with id has the focus.
func pgWaitFocus(t *testing.T, ctx context.Context, id string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	got := ""
	for time.Now().Before(deadline) {
		var err error
		got, err = chromedp.Run(ctx, chromedp.Evaluate[string](`document.activeElement ? document.activeElement.id : ""`))
		if err == nil && got == id {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("focus on #%s, want #%s", got, id)
}
