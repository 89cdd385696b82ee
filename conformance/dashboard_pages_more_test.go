package conformance

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kassa-pay/kassa/conformance/harness"
)

func TestDashboardPagesMailbox(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "PAGES", "the test mailbox lists the receipt of a paid session and shows it; live has no mailbox", func(t *testing.T) {
		t.Parallel()
		o := dpNewOwner(t)
		ctx := harness.NewBrowser(t)
		dpSignIn(t, ctx, o)
		dpGo(t, ctx, "/test/mailbox")
		dpWait(t, ctx, "the empty mailbox", dpHas("#main .empty", "No messages"))
		dpDo(t, ctx, "open the live mailbox", chromedp.Navigate(dpURL("/live/mailbox")))
		dpWait(t, ctx, "no live mailbox", dpHas("h1", "not found"))

		// A receipt goes to customer_email after the payment commits (sent from the outbox).
		body := sessionBody()
		body.CustomerEmail = "receipt-reader@example.com"
		payNeedsCheckout(t)
		payConfirmOK(t, csCreate(t, o.Test, body), payCard(payCardOK), "succeeded")
		o.signIn(t)
		if len(receiptsIn(t, o, 1, 15*time.Second)) == 0 {
			t.Fatal("no receipt reached the development mailbox within 15 s")
		}
		dpGo(t, ctx, "/test/mailbox")
		dpWait(t, ctx, "the receipt in the list", dpHas("#main tbody", "receipt-reader@example.com"))
		harness.Page(t, ctx, "dashboard-mailbox")
		dpDo(t, ctx, "open the receipt", dpClick("a[data-message]"))
		dpWait(t, ctx, "the message text", `/^\/test\/mailbox\/[a-z]+_/.test(location.pathname) && document.getElementById("message-text").textContent.length > 0`)
		harness.Page(t, ctx, "dashboard-mailbox-message")
	})
}

// Every page of the app, loaded directly: the page renders, each form control has a label,
// nothing on it is a clickable non-button, and axe-core finds no WCAG 2.2 A/AA violation.
func TestDashboardPagesAccessible(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "PAGES", "every page loads by its URL with a heading, labelled controls and real buttons", func(t *testing.T) {
		t.Parallel()
		o := dpNewOwner(t)
		ctx := harness.NewBrowser(t)
		// The pages served without a session: sign-in and the server's not-found page.
		dpDo(t, ctx, "open a path that is no page", chromedp.Navigate(dpURL("/no/such/page")))
		dpWait(t, ctx, "the not-found page", dpHas("h1", "Page not found"))
		harness.Page(t, ctx, "dashboard-not-found")
		dpSignIn(t, ctx, o)
		for _, path := range []string{"/test/overview", "/test/payments", "/test/checkout_sessions", "/test/api_keys",
			"/test/webhooks", "/test/catalog", "/test/mailbox", "/test/payments?status=declined", "/live/overview", "/live/payments",
			"/live/checkout_sessions", "/live/api_keys", "/live/webhooks", "/live/catalog", "/test/settings", "/live/settings",
			"/test/customers", "/live/customers", "/test/subscriptions", "/live/subscriptions", "/test/subscriptions?status=past_due",
			"/test/customers?email=nobody%40example.com"} {
			dpGo(t, ctx, path)
			if failed := dpText(t, ctx, "#main .notice-error"); failed != "" {
				t.Errorf("%s: the page shows an error: %s", path, failed)
			}
			unlabelled, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("input, select, textarea")]
				.filter((el) => el.type !== "hidden" && !el.labels.length && !el.getAttribute("aria-label"))
				.map((el) => el.outerHTML.slice(0, 120))`))
			if err != nil {
				t.Fatal(err)
			}
			if len(unlabelled) > 0 {
				t.Errorf("%s: controls without a label: %v", path, unlabelled)
			}
			fake, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#app [onclick]:not(button), a:not([href])").length`))
			if err != nil {
				t.Fatal(err)
			}
			if fake > 0 {
				t.Errorf("%s: %d clickable elements that are neither buttons nor links", path, fake)
			}
			harness.Axe(t, ctx, path)
			// The page's own name is the document title, with the environment in test mode.
			title, _ := chromedp.Run(ctx, chromedp.Title())
			if path[:5] == "/test" && !(strings.Contains(title, "Test") && strings.Contains(title, "Kassa")) {
				t.Errorf("%s: title %q does not say Test and Kassa", path, title)
			}
		}
	})
}
