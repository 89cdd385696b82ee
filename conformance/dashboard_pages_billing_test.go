package conformance

import (
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/kassa-pay/kassa/conformance/harness"
)

func TestDashboardPagesBilling(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "PAGES", "customers and subscriptions pages: the status filter applies on its button only, a subscription is cancelled at period end from the keyboard, resumed, then cancelled now; the overview shows recurring revenue", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := dpNewOwner(t)
		email := dbEmail(o)
		s := dbTrialing(t, o, email, 900)
		other := dbSub(t, o, "b-"+email, 500, nil)
		ctx := harness.NewBrowser(t)
		dpSignIn(t, ctx, o)
		dpWait(t, ctx, "the recurring revenue cards", `document.querySelector('[data-card="mrr"]') && document.querySelector('[data-card="active_subscriptions"]')`)
		harness.Page(t, ctx, "dashboard-overview-recurring")

		// The list, and its filter: moving through the options with the keyboard loads nothing.
		dpGo(t, ctx, "/test/subscriptions")
		dpWait(t, ctx, "both subscriptions listed", `document.querySelector('a[data-subscription="`+s.Id+`"]') && document.querySelector('a[data-subscription="`+other.Id+`"]')`)
		harness.Page(t, ctx, "dashboard-subscriptions")
		dpDo(t, ctx, "arrow through the status options", chromedp.Focus(chromedp.CSS(`select[name="status"]`), chromedp.NodeVisible), chromedp.KeyEvent(kb.ArrowDown+kb.ArrowDown))
		dpWait(t, ctx, "still the unfiltered list", `location.search === "" && document.querySelector('a[data-subscription="`+other.Id+`"]')`)
		dpDo(t, ctx, "filter trialing", chromedp.SetValue(chromedp.CSS(`select[name="status"]`), "trialing"), dpClick(`form[role="search"] button[type="submit"]`))
		dpWait(t, ctx, "only the trialing one", `location.search === "?status=trialing" && document.querySelector('a[data-subscription="`+s.Id+`"]') && !document.querySelector('a[data-subscription="`+other.Id+`"]')`)

		// The detail, and cancelling at the end of the period with the keyboard only.
		dpDo(t, ctx, "open the subscription", dpClick(`a[data-subscription="`+s.Id+`"]`))
		dpWait(t, ctx, "the cancel form", `document.querySelector('#cancel-form') && document.querySelector('#cancel-period_end').checked`)
		dpWait(t, ctx, "the default method", dpHas("main", "Visa •••• 4242"))
		harness.Page(t, ctx, "dashboard-subscription")
		dpDo(t, ctx, "cancel at period end from the keyboard", chromedp.Focus(chromedp.CSS("#cancel-submit"), chromedp.NodeVisible), chromedp.KeyEvent(kb.Enter))
		dpWait(t, ctx, "the pending cancellation", `document.querySelector('#resume')`)
		harness.Page(t, ctx, "dashboard-subscription-cancel-pending")
		if got := subGet(t, o.Merchant, s.Id); !got.CancelAtPeriodEnd || got.Status != "trialing" {
			t.Fatalf("after cancel at period end: %s %v", got.Status, got.CancelAtPeriodEnd)
		}
		dpDo(t, ctx, "resume", dpClick("#resume"))
		dpWait(t, ctx, "renewing again", `!document.querySelector('#resume') && document.querySelector('#cancel-period_end')`)
		if got := subGet(t, o.Merchant, s.Id); got.CancelAtPeriodEnd {
			t.Fatal("resume left the cancellation pending")
		}

		// Cancelling now ends it; the form goes away.
		dpDo(t, ctx, "cancel now", dpClick("#cancel-now"), dpClick("#cancel-submit"))
		dpWait(t, ctx, "canceled", `!document.querySelector('#cancel-form') && `+dpHas(".facts .badge", "canceled"))
		harness.Page(t, ctx, "dashboard-subscription-canceled")
		if got := subGet(t, o.Merchant, s.Id); got.Status != "canceled" || got.EndedAt == nil {
			t.Fatalf("after cancel now: %s", got.Status)
		}

		// The customer: its subscriptions and saved card.
		dpGo(t, ctx, "/test/customers")
		dpWait(t, ctx, "the customers", `document.querySelector('a[data-customer="`+s.Customer+`"]')`)
		harness.Page(t, ctx, "dashboard-customers")
		dpDo(t, ctx, "open the customer", dpClick(`a[data-customer="`+s.Customer+`"]`))
		dpWait(t, ctx, "the customer's page", `document.querySelector('a[data-subscription="`+s.Id+`"]') && `+dpHas("main", "Visa •••• 4242"))
		harness.Page(t, ctx, "dashboard-customer")
	})
}
