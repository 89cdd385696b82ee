package conformance

import (
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/conformance/harness"
)

// The hosted pages over plain HTTP, as a browser without JavaScript uses them: every action
// is a form post answered by a page or a redirect (issue 3 §1, D6, 5.2).
func TestCheckoutPagesHTTP(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "D6", "the hosted page shows description, line items, the total and a test banner; card inputs carry the autocomplete tokens", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		s := pgSession(t, m, "description", "Two mugs <handmade>", "line_items", []map[string]any{
			{"name": "Mug", "quantity": 2, "amount": 1250, "image_url": "https://img.example/mug.png"},
		})
		p := pgGet(t, s.CheckoutUrl)
		pgWant(t, p, 200, "Two mugs &lt;handmade&gt;", "Mug", "× 2", "12.50 €", "25.00 €", "Test mode",
			`src="https://img.example/mug.png"`, `autocomplete="cc-name"`, `autocomplete="cc-number"`,
			`autocomplete="cc-exp"`, `autocomplete="cc-csc"`, `inputmode="numeric"`, `name="iban"`, `id="cancel"`)
		if strings.Contains(p.Body, "<script>") || strings.Contains(p.Body, " style=") {
			t.Fatal("inline script or style on the page")
		}
	})

	harness.Rule(t, "D6", "totals follow the currency's exponent: JPY has no decimals, USD has two", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		jpy := pgSession(t, m, "currency", "jpy", "amount", 123456)
		pgWant(t, pgGet(t, jpy.CheckoutUrl), 200, "¥123,456")
		usd := pgSession(t, m, "currency", "usd", "amount", 123456)
		pgWant(t, pgGet(t, usd.CheckoutUrl), 200, "$1,234.56")
	})

	harness.Rule(t, "D6", "security headers: strict CSP, frame-ancestors 'none' and X-Frame-Options DENY on /c/, frameable /embed/, no-store, no referrer", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		s := pgSession(t, m, "success_url", "https://shop.example/thanks", "cancel_url", "https://cart.example/back")
		top := pgGet(t, s.CheckoutUrl)
		csp := top.Header.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "base-uri 'none'",
			"connect-src 'self'", "frame-ancestors 'none'", "form-action 'self' https://shop.example https://cart.example"} {
			if !strings.Contains(csp, want) {
				t.Fatalf("CSP %q lacks %q", csp, want)
			}
		}
		if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
			t.Fatalf("CSP %q allows inline code", csp)
		}
		h := top.Header
		if h.Get("X-Frame-Options") != "DENY" || h.Get("Cache-Control") != "no-store" ||
			h.Get("Referrer-Policy") != "no-referrer" || h.Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("headers %v", h)
		}
		emb := pgGet(t, s.EmbedUrl)
		ecsp := emb.Header.Get("Content-Security-Policy")
		if emb.Status != 200 || emb.Header.Get("X-Frame-Options") != "" || !strings.Contains(ecsp, "frame-ancestors *") ||
			emb.Header.Get("Cache-Control") != "no-store" || !strings.Contains(ecsp, "script-src 'self'") {
			t.Fatalf("embed: %d %v", emb.Status, emb.Header)
		}
		expired := pgGet(t, strings.Replace(s.CheckoutUrl, "cs=", "cs=x", 1))
		if expired.Header.Get("Cache-Control") != "no-store" || expired.Header.Get("X-Frame-Options") != "DENY" {
			t.Fatalf("session_expired page headers %v", expired.Header)
		}
	})

	harness.Rule(t, "5.2", "a wrong secret, an expired session and an unknown id all give the same session_expired page with 422", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		s := pgSession(t, m)
		base := pgBase(t, s)
		wrong := pgGet(t, base+"/c/"+s.Id+"?cs="+s.ClientSecret+"x")
		pgWant(t, wrong, 422, "no longer valid")
		none := pgGet(t, base+"/c/"+s.Id)
		pgWant(t, none, 422, "no longer valid")
		other := pgGet(t, base+"/c/cs_000000000000000000000000?cs="+s.ClientSecret)
		pgWant(t, other, 422, "no longer valid")
		if resp := csExpire(t, m.Test, s.Id); resp.JSON200 == nil {
			t.Fatalf("expire: %d", resp.StatusCode())
		}
		expired := pgGet(t, s.CheckoutUrl)
		pgWant(t, expired, 422, "no longer valid")
		pgWant(t, pgGet(t, s.EmbedUrl), 422, "no longer valid")
		if expired.Body != wrong.Body || strings.Contains(expired.Body, s.Id) {
			t.Fatal("the session_expired page differs between a wrong secret and an expired session, or names the session")
		}
		pgWant(t, pgPost(t, s, "/c/"+s.Id+"/pay", pgCardForm(payCardOK)), 422)
	})

	harness.Rule(t, "D6", "a bad card number, expiry or security code is shown next to its field, named at the top and in the title, and nothing is charged", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		s := pgSession(t, m)
		form := url.Values{"method": {"card"}, "card_number": {"4242424242424241"}, "card_exp": {"01 / 20"}, "card_cvc": {"1"}}
		p := pgPost(t, s, "/c/"+s.Id+"/pay", form)
		pgWant(t, p, 400, `id="err-card_number">Your card number is invalid`, `id="err-card_exp">Your card has expired`, `id="err-card_cvc">Enter the 3 or 4 digit`,
			// Without JavaScript the page reloads at its top: the title and a summary say what to correct.
			`<title>Error: Pay `, `Check these fields: card number, expiry date and security code.`)
		if strings.Contains(p.Body, "4242424242424241") {
			t.Fatal("the card number is written back into the page")
		}
		iban := pgPost(t, s, "/c/"+s.Id+"/pay", pgSEPAForm("DE89370400440532013001"))
		pgWant(t, iban, 400, `id="err-iban">Your IBAN is invalid`)
		if got := csGet(t, m.Test, s.Id); got.Status != "open" || got.Payment != nil {
			t.Fatalf("session %s after bad input, want open without payment", got.Status)
		}
	})

	harness.Rule(t, "D6", "a decline shows its reason and keeps the session open; a success card then pays and redirects to success_url", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		s := pgSession(t, m, "success_url", "https://shop.example/thanks?order=7")
		d := pgPost(t, s, "/c/"+s.Id+"/pay", pgCardForm(payCardDecline))
		pgWant(t, d, 402, "Your card was declined", `data-decline-code="generic_decline"`)
		if got := csGet(t, m.Test, s.Id); got.Status != "open" {
			t.Fatalf("after a decline the session is %s, want open", got.Status)
		}
		ok := pgPost(t, s, "/c/"+s.Id+"/pay", pgCardForm("4242 4242 4242 4242"))
		if ok.Status != http.StatusSeeOther || ok.Header.Get("Location") != "https://shop.example/thanks?order=7" {
			t.Fatalf("success: %d Location %q", ok.Status, ok.Header.Get("Location"))
		}
		pgWantComplete(t, m, s.Id, "succeeded")
		pgWant(t, pgGet(t, s.CheckoutUrl), 422, "no longer valid")
	})

	harness.Rule(t, "D6", "without success_url a payment ends on a receipt page (200)", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		s := pgSession(t, m, "reference", "order-42")
		p := pgPost(t, s, "/c/"+s.Id+"/pay", pgCardForm(payCardOK))
		pgWant(t, p, 200, "payment was received", "25.00 €", "order-42", "4242")
		pgWantComplete(t, m, s.Id, "succeeded")
	})

	harness.Rule(t, "D6", "3-D Secure: the challenge page's Fail declines with authentication_failed, Complete pays", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		s := pgSession(t, m, "success_url", "https://shop.example/thanks")
		challenge := "/c/" + s.Id + "/3ds?cs=" + s.ClientSecret
		p := pgPost(t, s, "/c/"+s.Id+"/pay", pgCardForm(payCard3DS))
		if p.Status != http.StatusSeeOther || p.Header.Get("Location") != challenge {
			t.Fatalf("3DS card: %d Location %q, want 303 %s", p.Status, p.Header.Get("Location"), challenge)
		}
		c := pgGet(t, pgBase(t, s)+challenge)
		pgWant(t, c, 200, "Complete", "Fail")
		if c.Header.Get("Cache-Control") != "no-store" {
			t.Fatal("challenge page may be cached")
		}
		f := pgPost(t, s, "/c/"+s.Id+"/3ds", url.Values{"action": {"fail"}})
		pgWant(t, f, 402, `data-decline-code="authentication_failed"`)
		if got := csGet(t, m.Test, s.Id); got.Status != "open" {
			t.Fatalf("after a failed challenge the session is %s, want open", got.Status)
		}
		p = pgPost(t, s, "/c/"+s.Id+"/pay", pgCardForm(payCard3DS))
		if p.Status != http.StatusSeeOther {
			t.Fatalf("second 3DS try: %d", p.Status)
		}
		done := pgPost(t, s, "/c/"+s.Id+"/3ds", url.Values{"action": {"complete"}})
		if done.Status != http.StatusSeeOther || done.Header.Get("Location") != "https://shop.example/thanks" {
			t.Fatalf("complete: %d %q", done.Status, done.Header.Get("Location"))
		}
		pgWantComplete(t, m, s.Id, "succeeded")
	})

	harness.Rule(t, "D6", "SEPA debit: processing, the buyer goes to success_url, the session is complete", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		s := pgSession(t, m, "success_url", "https://shop.example/thanks")
		p := pgPost(t, s, "/c/"+s.Id+"/pay", pgSEPAForm("DE89 3704 0044 0532 0130 00"))
		if p.Status != http.StatusSeeOther || p.Header.Get("Location") != "https://shop.example/thanks" {
			t.Fatalf("sepa: %d %q", p.Status, p.Header.Get("Location"))
		}
		pgWantComplete(t, m, s.Id, "processing")
		n := pgSession(t, m)
		pgWant(t, pgPost(t, n, "/c/"+n.Id+"/pay", pgSEPAForm(payIBANOK)), 200, "processing")
	})

	harness.Rule(t, "D6", "Cancel ends the session as canceled (customer_canceled) and goes to cancel_url, or to a canceled page", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		s := pgSession(t, m, "cancel_url", "https://shop.example/cart")
		p := pgPost(t, s, "/c/"+s.Id+"/cancel", nil)
		if p.Status != http.StatusSeeOther || p.Header.Get("Location") != "https://shop.example/cart" {
			t.Fatalf("cancel: %d %q", p.Status, p.Header.Get("Location"))
		}
		got := csGet(t, m.Test, s.Id)
		if got.Status != "canceled" || got.CancellationReason == nil || *got.CancellationReason != "customer_canceled" {
			t.Fatalf("session %+v, want canceled by the customer", got)
		}
		pgWant(t, pgGet(t, s.CheckoutUrl), 422)
		n := pgSession(t, m)
		pgWant(t, pgPost(t, n, "/embed/"+n.Id+"/cancel", nil), 200, "canceled")
	})

	harness.Rule(t, "D6", "a double submit, two tabs and a replayed form post pay once: one payment, one checkout.session.completed", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		s := pgSession(t, m, "success_url", "https://shop.example/thanks")
		const posts = 6
		statuses := make([]int, posts)
		var wg sync.WaitGroup
		for i := range posts {
			wg.Go(func() {
				path := "/c/" + s.Id + "/pay"
				if i%2 == 1 {
					path = "/embed/" + s.Id + "/pay" // the other tab is an embed
				}
				statuses[i] = pgPost(t, s, path, pgCardForm(payCardOK)).Status
			})
		}
		wg.Wait()
		won := 0
		for _, st := range statuses {
			switch st {
			case http.StatusSeeOther, http.StatusOK:
				won++
			case http.StatusUnprocessableEntity:
			default:
				t.Fatalf("statuses %v: want one success and session_expired (422) for the rest", statuses)
			}
		}
		if won != 1 {
			t.Fatalf("statuses %v: %d successes, want 1", statuses, won)
		}
		pgWant(t, pgPost(t, s, "/c/"+s.Id+"/pay", pgCardForm(payCardOK)), 422) // the replay
		pgWantComplete(t, m, s.Id, "succeeded")
	})

	harness.Rule(t, "5.2", "the client secret, the card number and the IBAN typed into the pages never reach the server log", func(t *testing.T) {
		t.Parallel()
		if target.LogPath == "" {
			t.Skip("the server log is not available (external target)")
		}
		m := newMerchant(t, true)
		s := pgSession(t, m, "success_url", "https://shop.example/thanks")
		pgGet(t, s.CheckoutUrl)
		pgPost(t, s, "/c/"+s.Id+"/pay", pgCardForm("4000000000009995")) // declined: insufficient_funds
		pgPost(t, s, "/c/"+s.Id+"/pay", pgSEPAForm("DE62370400440532013001"))
		pgGet(t, s.CheckoutUrl)                                     // 422: the secret is used
		pgGet(t, pgBase(t, s)+"/c/"+s.Id+"/3ds?cs="+s.ClientSecret) // 422 as well
		secret := strings.TrimPrefix(s.ClientSecret, s.Id+"_secret_")
		deadline := time.Now().Add(2 * time.Second)
		for {
			log, err := os.ReadFile(target.LogPath)
			if err != nil {
				t.Fatal(err)
			}
			for _, leak := range []string{secret, "4000000000009995", "370400440532013001"} {
				if strings.Contains(string(log), leak) {
					t.Fatalf("the server log contains %q", leak)
				}
			}
			if time.Now().After(deadline) {
				if !strings.Contains(string(log), "/c/{id}/pay") {
					t.Fatal("the server log has no line for the pay route: is it the target's log?")
				}
				return
			}
			time.Sleep(500 * time.Millisecond)
		}
	})

	harness.Rule(t, "D6", "kassa.js and the page assets are served; kassa.js to any origin", func(t *testing.T) {
		t.Parallel()
		base := pgBase(t, pgSession(t, newMerchant(t, true)))
		k := pgGet(t, base+"/js/kassa.js")
		if k.Status != 200 || !strings.Contains(k.Header.Get("Content-Type"), "javascript") ||
			k.Header.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(k.Body, "Kassa.confirm") {
			t.Fatalf("kassa.js: %d %v", k.Status, k.Header)
		}
		for _, a := range []string{"/assets/checkout.js", "/assets/checkout.css"} {
			if p := pgGet(t, base+a); p.Status != 200 || p.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Fatalf("%s: %d", a, p.Status)
			}
		}
		pgWant(t, pgGet(t, base+"/no/such/page"), 404)
	})
}
