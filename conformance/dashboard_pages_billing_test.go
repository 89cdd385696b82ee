package conformance

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/kassa-pay/kassa/conformance/harness"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
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

		// The customer: its subscriptions, saved card and balance (none).
		dpGo(t, ctx, "/test/customers")
		dpWait(t, ctx, "the customers", `document.querySelector('a[data-customer="`+s.Customer+`"]')`)
		harness.Page(t, ctx, "dashboard-customers")
		dpDo(t, ctx, "open the customer", dpClick(`a[data-customer="`+s.Customer+`"]`))
		dpWait(t, ctx, "the customer's page", `document.querySelector('a[data-subscription="`+s.Id+`"]') && `+dpHas("main", "Visa •••• 4242")+
			` && `+dpHas("[data-balance]", "None"))
		harness.Page(t, ctx, "dashboard-customer")
	})
}

// dbDailyWithInvoices makes a daily subscription of 9.00 paid by card and renews it on the
// test clock until it has n invoices (the first and n-1 renewals).
func dbDailyWithInvoices(t *testing.T, o *DashOwner, n int) api.Subscription {
	t.Helper()
	clockFreeze(t, o.Test)
	pr := subPrice(t, o.Merchant, 900, &api.RecurringParams{Interval: wire.RecurringIntervalDay})
	s := subCreate(t, o.Merchant, subBody(pr.Id))
	id, secret := subPI(t, s)
	if v := subConfirm(t, secret, id, payCard(payCardOK)).JSON200; v == nil || v.SubscriptionStatus != "active" {
		t.Fatal("first payment failed")
	}
	clockAdvance(t, o.Test, int64(n-1)*86400)
	return s
}

// The subscription detail lists every invoice of the subscription, newest first, ten a page,
// through the invoice list's subscription filter; another subscription's invoices are not
// among them.
func TestDashboardSubscriptionInvoices(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "DBILL", "a subscription's invoices: the detail carries its ten newest, the invoice list's subscription filter pages through all of them newest first", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		s := dbDailyWithInvoices(t, o, 12)
		other := subPlain(t, o)
		bg := context.Background()
		d, err := o.Client.GetDashboardSubscriptionWithResponse(bg, dashTest, s.Id)
		if err != nil || d.JSON200 == nil {
			t.Fatalf("detail: %v", err)
		}
		got := subGet(t, o.Merchant, s.Id)
		if v := d.JSON200.Invoices; len(v) != 10 || v[0].Id != *got.LatestInvoice || v[9].Id == *s.LatestInvoice {
			t.Fatalf("detail invoices: %d", len(v))
		}
		sub, limit := s.Id, 10
		first, err := o.Client.ListInvoicesWithResponse(bg, dashTest, &dash.ListInvoicesParams{Subscription: &sub, Limit: &limit})
		if err != nil || first.JSON200 == nil || len(first.JSON200.Data) != 10 || !first.JSON200.HasMore {
			t.Fatalf("first page: %v %s", err, first.Body)
		}
		after := first.JSON200.Data[9].Id
		second, err := o.Client.ListInvoicesWithResponse(bg, dashTest, &dash.ListInvoicesParams{Subscription: &sub, Limit: &limit, StartingAfter: &after})
		if err != nil || second.JSON200 == nil || len(second.JSON200.Data) != 2 || second.JSON200.HasMore ||
			second.JSON200.Data[1].Id != *s.LatestInvoice {
			t.Fatalf("second page: %v %s", err, second.Body)
		}
		all := append(first.JSON200.Data, second.JSON200.Data...)
		for i, inv := range all {
			if inv.Subscription == nil || *inv.Subscription != s.Id || inv.Id == *other.LatestInvoice {
				t.Fatalf("invoice %d of the list: %+v", i, inv)
			}
			if i > 0 && inv.Created > all[i-1].Created {
				t.Fatalf("not newest first at %d", i)
			}
		}
	})

	harness.Rule(t, "PAGES", "the subscription page lists its invoices ten a page with next and previous pages", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := dpNewOwner(t)
		s := dbDailyWithInvoices(t, o, 12)
		ctx := harness.NewBrowser(t)
		dpSignIn(t, ctx, o)
		dpGo(t, ctx, "/test/subscriptions/"+s.Id)
		rows := `document.querySelectorAll('a[data-invoice]').length`
		dpWait(t, ctx, "ten invoices and a next page", rows+` === 10 && document.querySelector('[data-pager="next"]')`)
		harness.Page(t, ctx, "dashboard-subscription-invoices")
		dpDo(t, ctx, "next page", dpClick(`[data-pager="next"]`))
		dpWait(t, ctx, "the two oldest, the first one last", rows+` === 2 && document.querySelectorAll('a[data-invoice]')[1].dataset.invoice === `+dpJS(*s.LatestInvoice)+
			` && document.querySelector('[data-pager="previous"]')`)
		dpDo(t, ctx, "previous page", dpClick(`[data-pager="previous"]`))
		dpWait(t, ctx, "the ten newest again", rows+` === 10`)
	})
}
