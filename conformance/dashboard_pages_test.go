package conformance

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/kassa-pay/kassa/conformance/harness"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
)

// The dashboard pages (issue 3 §4) driven in headless Chromium against the real server: every
// case signs in as a merchant owner of its own through the sign-in page and works the pages as
// a person would, then checks the effect through the merchant API.

func TestDashboardPagesSignIn(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "PAGES", "a page without a session leads to sign-in, and sign-in back to it", func(t *testing.T) {
		t.Parallel()
		o := dpNewOwner(t)
		ctx := harness.NewBrowser(t)
		dpDo(t, ctx, "open the payments page signed out", chromedp.Navigate(dpURL("/test/payments")))
		dpWait(t, ctx, "the sign-in page", `location.pathname === "/login" && !document.getElementById("login-submit").disabled`)
		if loc, _ := chromedp.Run(ctx, chromedp.Location()); !strings.Contains(loc, "next=%2Ftest%2Fpayments") {
			t.Fatalf("sign-in page at %s, want ?next=/test/payments", loc)
		}
		harness.Page(t, ctx, "dashboard-login")
		dpDo(t, ctx, "sign in", dpType("#login-email", o.Email), dpType("#login-password", o.Password), dpClick("#login-submit"))
		dpWait(t, ctx, "the payments page after sign-in", dpAt("/test/payments"))
		dpWait(t, ctx, "the merchant name in the layout", dpHas("#merchant-name", o.Name))
		dpWait(t, ctx, "the TEST MODE banner", dpHas("#env-banner", "TEST MODE"))
	})
	harness.Rule(t, "PAGES", "sign-in shows the overview with the merchant and the test banner", func(t *testing.T) {
		t.Parallel()
		o := dpNewOwner(t)
		ctx := harness.NewBrowser(t)
		dpSignIn(t, ctx, o)
		dpWait(t, ctx, "the overview cards", `document.querySelector('[data-card="payments"]') && document.querySelector('[data-card="open_sessions"]')`)
		dpWait(t, ctx, "the merchant name", dpHas("#merchant-name", o.Name))
		dpWait(t, ctx, "the TEST MODE banner", dpHas("#env-banner", "TEST MODE"))
		harness.Page(t, ctx, "dashboard-overview")
	})
	harness.Rule(t, "PAGES", "a wrong password shows a message and stays on sign-in", func(t *testing.T) {
		t.Parallel()
		o := dpNewOwner(t)
		ctx := harness.NewBrowser(t)
		dpDo(t, ctx, "open the sign-in page", chromedp.Navigate(dpURL("/login")))
		dpWait(t, ctx, "the sign-in form is ready", `!document.getElementById("login-submit").disabled`)
		dpDo(t, ctx, "sign in with a wrong password",
			dpType("#login-email", o.Email), dpType("#login-password", "not the password at all"), dpClick("#login-submit"))
		dpWait(t, ctx, "the wrong-credentials message", `!document.getElementById("login-message").hidden && `+dpHas("#login-message", "wrong"))
		if loc, _ := chromedp.Run(ctx, chromedp.Location()); !strings.HasSuffix(loc, "/login") {
			t.Fatalf("after a wrong password the page is %s, want /login", loc)
		}
		if v := dpValue(t, ctx, "#login-password"); v != "" {
			t.Fatal("the password field keeps the wrong password")
		}
		harness.Page(t, ctx, "dashboard-login-wrong-password")
	})
	harness.Rule(t, "PAGES", "a throttled sign-in says so and how long to wait, even with the right password", func(t *testing.T) {
		t.Parallel()
		o := dpNewOwner(t)
		dpFailSignIn(t, o.Email, 5) // the documented per-e-mail limit
		ctx := harness.NewBrowser(t)
		dpDo(t, ctx, "open the sign-in page", chromedp.Navigate(dpURL("/login")))
		dpWait(t, ctx, "the sign-in form is ready", `!document.getElementById("login-submit").disabled`)
		dpDo(t, ctx, "sign in with the right password",
			dpType("#login-email", o.Email), dpType("#login-password", o.Password), dpClick("#login-submit"))
		dpWait(t, ctx, "the throttling message", dpHas("#login-message", "Too many sign-in attempts")+` && /Try again in \d+ (seconds|minutes)/.test(document.getElementById("login-message").textContent)`)
		if loc, _ := chromedp.Run(ctx, chromedp.Location()); !strings.HasSuffix(loc, "/login") {
			t.Fatalf("a throttled sign-in went on to %s", loc)
		}
		harness.Page(t, ctx, "dashboard-login-throttled")
	})
}

// dpFailSignIn makes n failed sign-ins for email on the dashboard API.
func dpFailSignIn(t *testing.T, email string, n int) {
	t.Helper()
	_, c := dashClient(t, nil)
	for i := range n {
		resp, err := c.SignInWithResponse(context.Background(), dash.SignIn{Email: email, Password: fmt.Sprintf("wrong password %d", i)})
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode() != http.StatusUnauthorized {
			t.Fatalf("failed sign-in %d: %d %s", i, resp.StatusCode(), resp.Body)
		}
	}
}

func TestDashboardPagesEnvironmentAndSignOut(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "PAGES", "the environment switch moves between test and live and back, sign-out ends the session", func(t *testing.T) {
		t.Parallel()
		o := dpNewOwner(t)
		ctx := harness.NewBrowser(t)
		dpSignIn(t, ctx, o)
		dpGo(t, ctx, "/test/payments")
		dpDo(t, ctx, "switch to live", dpClick(`.env-switch a[data-env="live"]`))
		dpWait(t, ctx, "the live payments page", dpAt("/live/payments"))
		dpWait(t, ctx, "the live banner", dpHas("#env-banner", "LIVE MODE")+" && "+dpHas("#env-banner", "real money"))
		if dpText(t, ctx, "#env-banner") == "" || strings.Contains(dpText(t, ctx, "#env-banner"), "TEST MODE") {
			t.Fatal("live pages still show the TEST MODE banner")
		}
		dpWait(t, ctx, "no test mailbox in live navigation", `!document.querySelector('.sidenav a[data-section="mailbox"]')`)
		harness.Page(t, ctx, "dashboard-live-payments")
		dpDo(t, ctx, "switch back to test", dpClick(`.env-switch a[data-env="test"]`))
		dpWait(t, ctx, "the test payments page", dpAt("/test/payments"))
		dpWait(t, ctx, "the TEST MODE banner", dpHas("#env-banner", "TEST MODE"))

		dpDo(t, ctx, "sign out", dpClick("#sign-out"))
		dpWait(t, ctx, "the sign-in page after sign-out", `location.pathname === "/login"`)
		dpDo(t, ctx, "open the overview again", chromedp.Navigate(dpURL("/test/overview")))
		dpWait(t, ctx, "sign-in again, the session being gone", `location.pathname === "/login"`)
	})
}

func TestDashboardPagesAPIKeys(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "PAGES", "an API key created on the page is shown once, works on the merchant API, and revoking it stops it", func(t *testing.T) {
		t.Parallel()
		o := dpNewOwner(t)
		ctx := harness.NewBrowser(t)
		dpSignIn(t, ctx, o)
		dpGo(t, ctx, "/test/api_keys")
		harness.Page(t, ctx, "dashboard-api-keys")
		dpDo(t, ctx, "create a key", dpType(`#create-key input[name="name"]`, "Page test key"), dpClick(`#create-key button[type="submit"]`))
		dpWait(t, ctx, "the secret box", `document.querySelector(".secret-box .secret-value")`)
		secret := dpValue(t, ctx, ".secret-box .secret-value")
		if !strings.HasPrefix(secret, "sk_test_") {
			t.Fatalf("secret shown %q, want sk_test_…", secret)
		}
		if !strings.Contains(dpText(t, ctx, ".secret-box"), "only time") {
			t.Fatal("the secret box does not warn that the secret is shown once")
		}
		harness.Page(t, ctx, "dashboard-api-key-secret")

		// The secret authenticates on the merchant API, in the test environment.
		resp, err := client(t, secret).ListProductsWithResponse(context.Background(), &api.ListProductsParams{})
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode() != http.StatusOK {
			t.Fatalf("merchant API with the new key: %d %s", resp.StatusCode(), resp.Body)
		}

		// Shown once: after dismissing and reloading, the page holds no trace of it.
		dpDo(t, ctx, "dismiss the secret", dpClick(".secret-box .button-primary"))
		dpGo(t, ctx, "/test/api_keys")
		dpWait(t, ctx, "the key in the list", dpHas("table tbody td", "Page test key"))
		if html, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.documentElement.outerHTML`)); strings.Contains(html, secret) {
			t.Fatal("the key list page still contains the secret")
		}

		// Revoke, confirming in the dialog.
		dpDo(t, ctx, "revoke the key", chromedp.Evaluate[chromedp.Void](`[...document.querySelectorAll("tbody tr")].find((r) => r.textContent.includes("Page test key")).querySelector("[data-revoke]").click()`))
		dpWait(t, ctx, "the confirm dialog", `document.querySelector("dialog[open] [data-confirm]")`)
		harness.Page(t, ctx, "dashboard-api-key-revoke-confirm")
		dpDo(t, ctx, "confirm", dpClick("dialog[open] [data-confirm]"))
		dpWait(t, ctx, "the key marked revoked", `[...document.querySelectorAll("tbody tr")].some((r) => r.textContent.includes("Page test key") && r.textContent.includes("revoked"))`)
		resp, err = client(t, secret).ListProductsWithResponse(context.Background(), &api.ListProductsParams{})
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode() != http.StatusUnauthorized {
			t.Fatalf("merchant API with the revoked key: %d, want 401", resp.StatusCode())
		}
	})
}

func TestDashboardPagesCatalog(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "PAGES", "a product and its prices created on the page exist on the merchant API, in minor units of their currency", func(t *testing.T) {
		t.Parallel()
		o := dpNewOwner(t)
		ctx := harness.NewBrowser(t)
		dpSignIn(t, ctx, o)
		dpGo(t, ctx, "/test/catalog")
		dpDo(t, ctx, "create a product", dpType(`#create-product input[name="name"]`, "Page beans"), dpClick(`#create-product button[type="submit"]`))
		dpWait(t, ctx, "the product page", `/^\/test\/catalog\/prod_/.test(location.pathname) && document.querySelector("#create-price")`)
		loc, _ := chromedp.Run(ctx, chromedp.Location())
		productID := loc[strings.LastIndex(loc, "/")+1:]

		dpDo(t, ctx, "add a EUR price", dpType(`#create-price input[name="unit_amount"]`, "12.50"), dpClick(`#create-price button[type="submit"]`))
		dpWait(t, ctx, "the EUR price in the list", `document.querySelectorAll("table tbody tr").length === 1`)
		dpDo(t, ctx, "add a JPY price",
			chromedp.SetValue(chromedp.CSS(`#create-price select[name="currency"]`), "JPY"),
			dpType(`#create-price input[name="unit_amount"]`, "1200"), dpClick(`#create-price button[type="submit"]`))
		dpWait(t, ctx, "both prices in the list", `document.querySelectorAll("table tbody tr").length === 2`)
		harness.Page(t, ctx, "dashboard-product")

		p := catGetProduct(t, o.Test, productID)
		if p.Name != "Page beans" || len(p.Prices) != 2 {
			t.Fatalf("product %s: name %q, %d prices; want Page beans with 2", productID, p.Name, len(p.Prices))
		}
		got := map[string]int64{}
		for _, pr := range p.Prices {
			got[pr.Currency] = pr.UnitAmount
		}
		if got["EUR"] != 1250 || got["JPY"] != 1200 {
			t.Fatalf("prices %v, want EUR 1250 and JPY 1200", got)
		}

		// Archive the product: it and its prices become inactive.
		dpDo(t, ctx, "archive the product", dpClick(".page-head [data-archive]"))
		dpWait(t, ctx, "the confirm dialog", `document.querySelector("dialog[open] [data-confirm]")`)
		dpDo(t, ctx, "confirm", dpClick("dialog[open] [data-confirm]"))
		dpWait(t, ctx, "the product marked archived", dpHas(".page-head .badge", "archived"))
		if p := catGetProduct(t, o.Test, productID); p.Active {
			t.Fatal("archived on the page, the product is still active on the API")
		}
		dpGo(t, ctx, "/test/catalog")
		dpWait(t, ctx, "the product in the list", dpHas("table tbody", "Page beans"))
		harness.Page(t, ctx, "dashboard-catalog")

		// The filter acts on its button only: arrowing through its options loads nothing.
		dpDo(t, ctx, "arrow through the filter's options", chromedp.Focus(chromedp.CSS(`select[name="active"]`), chromedp.NodeVisible),
			chromedp.KeyEvent(kb.ArrowDown+kb.ArrowDown))
		dpWait(t, ctx, "still the unfiltered list", `location.search === "" && `+dpHas("table tbody", "Page beans"))
		dpDo(t, ctx, "filter active", chromedp.SetValue(chromedp.CSS(`select[name="active"]`), "true"), dpClick(`form[role="search"] button[type="submit"]`))
		dpWait(t, ctx, "only active products", `location.search === "?active=true" && !document.querySelector("table tbody a[href*='`+productID+`']")`)
	})
}

func TestDashboardPagesPaymentsAndSessions(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "PAGES", "checkout sessions created on the API are listed and filtered by status", func(t *testing.T) {
		t.Parallel()
		o := dpNewOwner(t)
		open := csCreate(t, o.Test, sessionBody())
		gone := csCreate(t, o.Test, sessionBody())
		if r := raw(t, "POST", "/v1/checkout/sessions/"+gone.Id+"/expire", o.TestKey, "", nil); r.Status != http.StatusOK {
			t.Fatalf("expire: %d %s", r.Status, r.Body)
		}
		ctx := harness.NewBrowser(t)
		dpSignIn(t, ctx, o)
		dpGo(t, ctx, "/test/checkout_sessions")
		dpWait(t, ctx, "both sessions", dpHas("tbody", open.Id)+" && "+dpHas("tbody", gone.Id))
		// The open one links to its hosted payment page; the expired one does not.
		href, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.querySelector('a[data-checkout="`+open.Id+`"]') || {}).href || ""`))
		if href != open.CheckoutUrl {
			t.Fatalf("open session links to %q, want its checkout_url %q", href, open.CheckoutUrl)
		}
		if n, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('a[data-checkout="`+gone.Id+`"]').length`)); n != 0 {
			t.Fatal("the expired session links to a payment page")
		}
		harness.Page(t, ctx, "dashboard-checkout-sessions")
		dpGo(t, ctx, "/test/checkout_sessions?status=expired")
		dpWait(t, ctx, "only the expired one", dpHas("tbody", gone.Id)+" && !"+dpHas("tbody", open.Id))
		// Live has neither.
		dpGo(t, ctx, "/live/checkout_sessions")
		dpWait(t, ctx, "no sessions in live", "!"+dpHas("body", open.Id))
	})
	harness.Rule(t, "PAGES", "a paid session shows on the overview, in the payments list and as a payment with its fee breakdown and events; JPY has no decimals", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := dpNewOwner(t)
		eur := csCreate(t, o.Test, sessionBody())
		payConfirmOK(t, eur, payCard(payCardOK), "succeeded")
		jpyBody := sessionBody()
		jpyBody.Currency = "jpy"
		jpyBody.Amount = ptr(int64(1200))
		jpy := csCreate(t, o.Test, jpyBody)
		payConfirmOK(t, jpy, payCard(payCardOK), "succeeded")
		paid := csGet(t, o.Test, jpy.Id)
		if paid.Payment == nil {
			t.Fatalf("paid JPY session %s has no payment", jpy.Id)
		}
		ctx := harness.NewBrowser(t)
		dpSignIn(t, ctx, o)
		dpWait(t, ctx, "two payments on the overview", dpHas(`[data-card="payments"] .value`, "2"))
		dpWait(t, ctx, "gross volume per currency", dpHas(`[data-card="gross"]`, "25.00")+" && "+dpHas(`[data-card="gross"]`, "1,200"))
		harness.Page(t, ctx, "dashboard-overview-with-payments")
		dpGo(t, ctx, "/test/payments")
		dpWait(t, ctx, "both payments listed", `document.querySelectorAll("tbody tr").length === 2`)
		amounts := dpText(t, ctx, "tbody")
		if !strings.Contains(amounts, "¥1,200") || strings.Contains(amounts, "1,200.00") || !strings.Contains(amounts, "€25.00") {
			t.Fatalf("payment amounts shown as %q; want €25.00 and ¥1,200 (no decimals)", amounts)
		}
		harness.Page(t, ctx, "dashboard-payments-list")
		dpDo(t, ctx, "open the JPY payment", dpClick(`a[data-payment="`+paid.Payment.Id+`"]`))
		dpWait(t, ctx, "the payment page", dpAt("/test/payments/"+paid.Payment.Id))
		dpWait(t, ctx, "the fee breakdown", dpHas("#fee-breakdown", "Total fee")+" && "+dpHas("#fee-breakdown", "Exchange rate"))
		dpWait(t, ctx, "the completed event", dpHas("#payment-events", "checkout.session.completed"))
		harness.Page(t, ctx, "dashboard-payment-detail")
	})
	harness.Rule(t, "PAGES", "the payments page lists with a status filter and an unknown payment is a not-found page", func(t *testing.T) {
		t.Parallel()
		o := dpNewOwner(t)
		ctx := harness.NewBrowser(t)
		dpSignIn(t, ctx, o)
		dpGo(t, ctx, "/test/payments")
		dpWait(t, ctx, "the status filter", `document.querySelector('select[name="status"]')`)
		harness.Page(t, ctx, "dashboard-payments")
		dpGo(t, ctx, "/test/payments?status=failed")
		dpWait(t, ctx, "the filter keeps its value", `document.querySelector('select[name="status"]').value === "failed"`)
		dpGo(t, ctx, "/test/payments/py_000000000000000000000000")
		dpWait(t, ctx, "the not-found page", dpHas("#main h1", "not found"))
	})
}

// The page responses themselves, over plain HTTP: the security headers of every page and asset.
func TestDashboardPagesHeaders(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "PAGES", "pages and assets carry a strict CSP, X-Frame-Options DENY, nosniff and a same-origin referrer policy", func(t *testing.T) {
		t.Parallel()
		if target.DashboardURL == "" {
			t.Skip("no dashboard URL")
		}
		for _, c := range []struct {
			path, ctype string
			status      int
		}{
			{"/login", "text/html", 200}, {"/test/overview", "text/html", 200}, {"/live/webhooks", "text/html", 200},
			{"/assets/app.js", "text/javascript", 200}, {"/assets/app.css", "text/css", 200}, {"/no/such/page", "text/html", 404},
		} {
			resp, err := http.Get(dpURL(c.path))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.status || !strings.HasPrefix(resp.Header.Get("Content-Type"), c.ctype) {
				t.Errorf("GET %s: %d %s, want %d %s", c.path, resp.StatusCode, resp.Header.Get("Content-Type"), c.status, c.ctype)
			}
			csp := resp.Header.Get("Content-Security-Policy")
			for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'",
				"form-action 'self'", "base-uri 'none'", "frame-ancestors 'none'"} {
				if !strings.Contains(csp, want) {
					t.Errorf("GET %s: CSP %q lacks %q", c.path, csp, want)
				}
			}
			if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
				t.Errorf("GET %s: CSP allows inline or eval: %q", c.path, csp)
			}
			for k, v := range map[string]string{"X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "same-origin"} {
				if got := resp.Header.Get(k); got != v {
					t.Errorf("GET %s: %s = %q, want %q", c.path, k, got, v)
				}
			}
			if strings.HasPrefix(c.ctype, "text/html") && strings.Contains(string(body), "<script>") {
				t.Errorf("GET %s: inline script in the page", c.path)
			}
		}
	})
}
