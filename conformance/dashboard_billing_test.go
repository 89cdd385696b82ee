package conformance

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/kassa-pay/kassa/conformance/harness"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

func init() { sectionTitles["DBILL"] = "dashboard API: customers, subscriptions, recurring revenue" }

// dbSub creates an incomplete monthly subscription of o for e-mail (the merchant API).
func dbSub(t *testing.T, o *DashOwner, email string, unit int64, rec *api.RecurringParams) api.Subscription {
	t.Helper()
	pr := subPrice(t, o.Merchant, unit, rec)
	b := subBody(pr.Id)
	b["customer_email"] = email
	return subCreate(t, o.Merchant, b)
}

// dbTrialing creates a subscription with a 14-day trial and confirms its first payment by
// card, which saves the card: trialing.
func dbTrialing(t *testing.T, o *DashOwner, email string, unit int64) api.Subscription {
	t.Helper()
	s := dbSub(t, o, email, unit, &api.RecurringParams{Interval: wire.RecurringIntervalMonth, TrialPeriodDays: ptr(14)})
	id, secret := subPI(t, s)
	if r := subConfirm(t, secret, id, payCard("4242424242424242")); r.JSON200 == nil {
		t.Fatalf("confirm: %d %s", r.StatusCode(), r.Body)
	}
	got := subGet(t, o.Merchant, s.Id)
	if got.Status != wire.SubscriptionStatusTrialing {
		t.Fatalf("status %s after the first payment", got.Status)
	}
	return got
}

func dbEmail(o *DashOwner) string { return "ada-" + strings.ToLower(o.ID[4:12]) + "@example.com" }

func dbWantError(t *testing.T, status int, body []byte, code, param string) {
	t.Helper()
	var e envelope
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("error body %d %s: %v", status, body, err)
	}
	p := ""
	if e.Error.Param != nil {
		p = *e.Error.Param
	}
	if e.Error.Code != code || p != param {
		t.Fatalf("error %d %s, want %s at %q", status, body, code, param)
	}
}

func TestDashboardBilling(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	harness.Rule(t, "DBILL", "customers list newest first, find one by e-mail (case ignored), and show subscriptions, saved methods (brand, last4, expiry) and invoices", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		email := dbEmail(o)
		s := dbTrialing(t, o, email, 900)
		other := dbSub(t, o, "grace-"+strings.ToLower(o.ID[4:10])+"@example.com", 500, nil)
		inv := newDraft(t, o, freeLine("Setup", 1, 5000, "19"))

		r, err := o.Client.ListCustomersWithResponse(ctx, dashTest, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.JSON200 == nil || len(r.JSON200.Data) != 2 || r.JSON200.Data[0].Id != other.Customer || r.JSON200.Data[1].Id != s.Customer ||
			r.JSON200.Url != "/api/v1/test/customers" {
			t.Fatalf("list: %d %s", r.StatusCode(), r.Body)
		}
		upper := "  " + strings.ToUpper(email) + " "
		r, err = o.Client.ListCustomersWithResponse(ctx, dashTest, &dash.ListCustomersParams{Email: &upper})
		if err != nil {
			t.Fatal(err)
		}
		if r.JSON200 == nil || len(r.JSON200.Data) != 1 || r.JSON200.Data[0].Id != s.Customer || r.JSON200.Data[0].Email != email {
			t.Fatalf("by e-mail: %d %s", r.StatusCode(), r.Body)
		}
		d, err := o.Client.GetCustomerWithResponse(ctx, dashTest, s.Customer)
		if err != nil {
			t.Fatal(err)
		}
		v := d.JSON200
		if v == nil || v.Customer.Id != s.Customer || len(v.Subscriptions) != 1 || v.Subscriptions[0].Id != s.Id ||
			len(v.PaymentMethods) != 1 || v.PaymentMethods[0].Brand != "visa" || v.PaymentMethods[0].Last4 != "4242" ||
			v.PaymentMethods[0].ExpYear == 0 || !v.PaymentMethods[0].Default || len(v.Invoices) != 1 || v.Invoices[0].Id != inv.Id {
			t.Fatalf("detail: %d %s", d.StatusCode(), d.Body)
		}
		if strings.Contains(string(d.Body), "424242424242") {
			t.Fatal("the card number is in the answer")
		}
	})

	harness.Rule(t, "DBILL", "another merchant's customer or subscription, or the other environment's, is 404", func(t *testing.T) {
		t.Parallel()
		o, stranger := newDashOwner(t), newDashOwner(t)
		s := dbSub(t, o, dbEmail(o), 900, nil)
		c, err := stranger.Client.GetCustomerWithResponse(ctx, dashTest, s.Customer)
		if err != nil {
			t.Fatal(err)
		}
		if c.StatusCode() != http.StatusNotFound {
			t.Fatalf("foreign customer: %d %s", c.StatusCode(), c.Body)
		}
		dbWantError(t, c.StatusCode(), c.Body, "customer_not_found", "customer")
		for _, who := range []struct {
			o   *DashOwner
			env dash.Env
		}{{stranger, dashTest}, {o, dashLive}} {
			g, err := who.o.Client.GetDashboardSubscriptionWithResponse(ctx, who.env, s.Id)
			if err != nil {
				t.Fatal(err)
			}
			if g.StatusCode() != http.StatusNotFound {
				t.Fatalf("get %s: %d %s", who.env, g.StatusCode(), g.Body)
			}
			x, err := who.o.Client.CancelDashboardSubscriptionWithResponse(ctx, who.env, s.Id, nil, dash.SubscriptionCancel{})
			if err != nil {
				t.Fatal(err)
			}
			if x.StatusCode() != http.StatusNotFound {
				t.Fatalf("cancel %s: %d %s", who.env, x.StatusCode(), x.Body)
			}
		}
		l, err := o.Client.ListCustomersWithResponse(ctx, dashLive, nil)
		if err != nil {
			t.Fatal(err)
		}
		if l.JSON200 == nil || len(l.JSON200.Data) != 0 {
			t.Fatalf("live customers: %d %s", l.StatusCode(), l.Body)
		}
		ls, err := stranger.Client.ListDashboardSubscriptionsWithResponse(ctx, dashTest, nil)
		if err != nil {
			t.Fatal(err)
		}
		if ls.JSON200 == nil || len(ls.JSON200.Data) != 0 {
			t.Fatalf("stranger's subscriptions: %d %s", ls.StatusCode(), ls.Body)
		}
	})

	harness.Rule(t, "DBILL", "list validation errors name their param: status, limit, email, cursors", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		bad := dash.SubscriptionStatus("paused_forever")
		r, err := o.Client.ListDashboardSubscriptionsWithResponse(ctx, dashTest, &dash.ListDashboardSubscriptionsParams{Status: &bad})
		if err != nil {
			t.Fatal(err)
		}
		if r.StatusCode() != http.StatusBadRequest {
			t.Fatalf("status: %d %s", r.StatusCode(), r.Body)
		}
		dbWantParam(t, r.Body, "status")
		zero := 0
		r, err = o.Client.ListDashboardSubscriptionsWithResponse(ctx, dashTest, &dash.ListDashboardSubscriptionsParams{Limit: &zero})
		if err != nil {
			t.Fatal(err)
		}
		dbWantError(t, r.StatusCode(), r.Body, "limit_invalid", "limit")
		unknown := "sub_000000000000000000000000"
		r, err = o.Client.ListDashboardSubscriptionsWithResponse(ctx, dashTest, &dash.ListDashboardSubscriptionsParams{StartingAfter: &unknown})
		if err != nil {
			t.Fatal(err)
		}
		dbWantError(t, r.StatusCode(), r.Body, "starting_after_invalid", "starting_after")
		long := strings.Repeat("a", 250) + "@example.com"
		c, err := o.Client.ListCustomersWithResponse(ctx, dashTest, &dash.ListCustomersParams{Email: &long})
		if err != nil {
			t.Fatal(err)
		}
		if c.StatusCode() != http.StatusBadRequest {
			t.Fatalf("email: %d %s", c.StatusCode(), c.Body)
		}
		dbWantParam(t, c.Body, "email")
		cus := "cus_000000000000000000000000"
		c, err = o.Client.ListCustomersWithResponse(ctx, dashTest, &dash.ListCustomersParams{EndingBefore: &cus})
		if err != nil {
			t.Fatal(err)
		}
		dbWantError(t, c.StatusCode(), c.Body, "ending_before_invalid", "ending_before")
	})

	harness.Rule(t, "DBILL", "the status filter lists only that status; paging follows starting_after", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		a := dbTrialing(t, o, dbEmail(o), 900)
		b := dbSub(t, o, "b-"+dbEmail(o), 900, nil)
		c := dbSub(t, o, "c-"+dbEmail(o), 900, nil)
		st := dash.SubscriptionStatus("trialing")
		r, err := o.Client.ListDashboardSubscriptionsWithResponse(ctx, dashTest, &dash.ListDashboardSubscriptionsParams{Status: &st})
		if err != nil {
			t.Fatal(err)
		}
		if r.JSON200 == nil || len(r.JSON200.Data) != 1 || r.JSON200.Data[0].Id != a.Id || r.JSON200.Url != "/api/v1/test/subscriptions" {
			t.Fatalf("active: %d %s", r.StatusCode(), r.Body)
		}
		one := 1
		r, err = o.Client.ListDashboardSubscriptionsWithResponse(ctx, dashTest, &dash.ListDashboardSubscriptionsParams{Limit: &one})
		if err != nil {
			t.Fatal(err)
		}
		if r.JSON200 == nil || len(r.JSON200.Data) != 1 || r.JSON200.Data[0].Id != c.Id || !r.JSON200.HasMore {
			t.Fatalf("page 1: %d %s", r.StatusCode(), r.Body)
		}
		r, err = o.Client.ListDashboardSubscriptionsWithResponse(ctx, dashTest, &dash.ListDashboardSubscriptionsParams{Limit: &one, StartingAfter: &c.Id})
		if err != nil {
			t.Fatal(err)
		}
		if r.JSON200 == nil || len(r.JSON200.Data) != 1 || r.JSON200.Data[0].Id != b.Id {
			t.Fatalf("page 2: %d %s", r.StatusCode(), r.Body)
		}
	})

	harness.Rule(t, "DBILL", "cancel at period end, resume, cancel now, and a second cancel is 409; the detail shows customer, default method and events", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		s := dbTrialing(t, o, dbEmail(o), 900)
		yes, no := true, false
		x, err := o.Client.CancelDashboardSubscriptionWithResponse(ctx, dashTest, s.Id, nil, dash.SubscriptionCancel{AtPeriodEnd: &yes})
		if err != nil {
			t.Fatal(err)
		}
		if x.JSON200 == nil || !x.JSON200.CancelAtPeriodEnd || x.JSON200.Status != wire.SubscriptionStatusTrialing || x.JSON200.CanceledAt == nil {
			t.Fatalf("cancel at period end: %d %s", x.StatusCode(), x.Body)
		}
		rs, err := o.Client.ResumeDashboardSubscriptionWithResponse(ctx, dashTest, s.Id, nil)
		if err != nil {
			t.Fatal(err)
		}
		if rs.JSON200 == nil || rs.JSON200.CancelAtPeriodEnd || rs.JSON200.CanceledAt != nil {
			t.Fatalf("resume: %d %s", rs.StatusCode(), rs.Body)
		}
		d, err := o.Client.GetDashboardSubscriptionWithResponse(ctx, dashTest, s.Id)
		if err != nil {
			t.Fatal(err)
		}
		v := d.JSON200
		if v == nil || v.Customer.Id != s.Customer || v.Subscription.DefaultPaymentMethod == nil ||
			v.Subscription.DefaultPaymentMethod.Last4 != "4242" || len(v.Events) < 3 {
			t.Fatalf("detail: %d %s", d.StatusCode(), d.Body)
		}
		if v.Events[0].Type != "customer.subscription.updated" {
			t.Fatalf("newest event %s", v.Events[0].Type)
		}
		x, err = o.Client.CancelDashboardSubscriptionWithResponse(ctx, dashTest, s.Id, nil, dash.SubscriptionCancel{AtPeriodEnd: &no})
		if err != nil {
			t.Fatal(err)
		}
		if x.JSON200 == nil || x.JSON200.Status != wire.SubscriptionStatusCanceled || x.JSON200.EndedAt == nil {
			t.Fatalf("cancel now: %d %s", x.StatusCode(), x.Body)
		}
		subWantEvents(t, o.Merchant, s.Id, "customer.subscription.created", "customer.subscription.updated",
			"customer.subscription.updated", "customer.subscription.updated", "customer.subscription.deleted")
		x, err = o.Client.CancelDashboardSubscriptionWithResponse(ctx, dashTest, s.Id, nil, dash.SubscriptionCancel{AtPeriodEnd: &no})
		if err != nil {
			t.Fatal(err)
		}
		dbWantError(t, x.StatusCode(), x.Body, "subscription_already_canceled", "")
		rs, err = o.Client.ResumeDashboardSubscriptionWithResponse(ctx, dashTest, s.Id, nil)
		if err != nil {
			t.Fatal(err)
		}
		dbWantError(t, rs.StatusCode(), rs.Body, "subscription_already_canceled", "")
	})

	harness.Rule(t, "DBILL", "one Idempotency-Key cancels once: the retry replays the first answer", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		s := dbSub(t, o, dbEmail(o), 900, nil)
		key := "cancel-" + s.Id
		no := false
		var first []byte
		for i := range 2 {
			x, err := o.Client.CancelDashboardSubscriptionWithResponse(ctx, dashTest, s.Id,
				&dash.CancelDashboardSubscriptionParams{IdempotencyKey: &key}, dash.SubscriptionCancel{AtPeriodEnd: &no})
			if err != nil {
				t.Fatal(err)
			}
			if x.JSON200 == nil || x.JSON200.Status != wire.SubscriptionStatusCanceled {
				t.Fatalf("cancel %d: %d %s", i, x.StatusCode(), x.Body)
			}
			if i == 0 {
				first = x.Body
			} else if string(x.Body) != string(first) || x.HTTPResponse.Header.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("retry: %s (replayed %q), first %s", x.Body, x.HTTPResponse.Header.Get("Idempotent-Replayed"), first)
			}
		}
		subWantEvents(t, o.Merchant, s.Id, "customer.subscription.created", "customer.subscription.deleted")
	})

	harness.Rule(t, "DBILL", "recurring revenue counts only active and past_due subscriptions: incomplete and trialing ones add nothing", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		dbTrialing(t, o, dbEmail(o), 900)
		dbSub(t, o, "i-"+dbEmail(o), 700, nil)
		for _, env := range []dash.Env{dashTest, dashLive} {
			r, err := o.Client.GetBillingSummaryWithResponse(ctx, env)
			if err != nil {
				t.Fatal(err)
			}
			v := r.JSON200
			if v == nil || v.ActiveCount != 0 || v.PastDueCount != 0 || len(v.Mrr) != 0 || string(v.Environment) != string(env) {
				t.Fatalf("summary %s: %d %s", env, r.StatusCode(), r.Body)
			}
		}
	})
}

func dbWantParam(t *testing.T, body []byte, param string) {
	t.Helper()
	var e envelope
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("error body %s: %v", body, err)
	}
	if e.Error.Param == nil || *e.Error.Param != param {
		t.Fatalf("error %s, want param %q", body, param)
	}
}
