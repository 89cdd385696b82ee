package conformance

import (
	"strings"
	"testing"

	"github.com/kassa-pay/kassa/conformance/harness"
	"github.com/kassa-pay/kassa/core"
	capi "github.com/kassa-pay/kassa/openapi/gen/checkoutapi"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

// A checkout session in subscription mode sells one recurring price: its creation rules, each
// error naming its param, and no session created by a refused request.
func TestCheckoutSubscriptionMode(t *testing.T) {
	t.Parallel()
	m := newMerchant(t, true)
	p := csSubscriptionFixture(t, m)

	harness.Rule(t, "4.1", "subscription mode takes exactly one line with an active recurring price; each refusal names its param", func(t *testing.T) {
		t.Parallel()
		// A merchant of its own: the rule counts the sessions it has, and the rules beside it
		// create sessions concurrently.
		m := newMerchant(t, true)
		p := csSubscriptionFixture(t, m)
		withAmount := csSubBody(p.recurring, 1)
		withAmount["amount"] = 1200
		twoLines := csSubBody(p.recurring, 1)
		twoLines["line_items"] = []map[string]any{{"name": "Plan", "price_id": p.recurring}, {"name": "Extra", "price_id": p.recurring}}
		usd := csSubBody(p.recurring, 1)
		usd["currency"] = "usd"
		for name, c := range map[string]struct {
			body             map[string]any
			status           int
			typ, code, param string
		}{
			"amount given":       {withAmount, 400, "invalid_request", "amount_invalid", "amount"},
			"no line item price": {csSubBody("", 1), 400, "invalid_request", "parameter_missing", "line_items.0.price_id"},
			"no line items":      {csWith("amount", nil, "mode", "subscription"), 400, "invalid_request", "parameter_missing", "line_items.0.price_id"},
			"two line items":     {twoLines, 400, "invalid_request", "line_items_invalid", "line_items"},
			"a one-time price":   {csSubBody(p.oneTime, 1), 400, "invalid_request", "price_not_recurring", "line_items.0.price_id"},
			"an archived price":  {csSubBody(p.inactive, 1), 400, "invalid_request", "price_inactive", "line_items.0.price_id"},
			"an unknown price":   {csSubBody("price_"+core.RandomBase62(24), 1), 404, "not_found", "price_not_found", "line_items.0.price_id"},
			"another currency":   {usd, 400, "invalid_request", "currency_invalid", "currency"},
		} {
			r := csPost(t, m.TestKey, c.body)
			if r.Status != c.status {
				t.Fatalf("%s: %d %s", name, r.Status, r.Body)
			}
			csWantErr(t, r, c.status, c.typ, c.code, c.param)
		}
		if ids, _ := csListIDs(t, m.Test, api.ListCheckoutSessionsParams{}); len(ids) != 0 {
			t.Fatalf("refused requests created sessions %v", ids)
		}
		// Payment mode keeps line items display only, with or without a catalog price.
		item := map[string]any{"name": "Plan", "price_id": p.recurring}
		csWantOK(t, csPost(t, m.TestKey, csWith("mode", "payment", "line_items", []map[string]any{item})))
	})

	harness.Rule(t, "4.1", "a subscription session's amount is the price's unit_amount times the quantity; subscription is null until paid", func(t *testing.T) {
		t.Parallel()
		s := csWantOK(t, csPost(t, m.TestKey, csSubBody(p.recurring, 3)))
		if s.Amount != 3600 || s.CheckoutMode != wire.CheckoutModeSubscription || s.Subscription != nil {
			t.Fatalf("session: amount %d mode %s subscription %v", s.Amount, s.CheckoutMode, s.Subscription)
		}
	})
}

// subCheckoutSession opens a subscription session for a new price of 900 a month with
// trialDays days of trial (0: none).
func subCheckoutSession(t *testing.T, m *Merchant, trialDays int) (*api.CheckoutSession, api.Price) {
	t.Helper()
	rec := &api.RecurringParams{Interval: wire.RecurringIntervalMonth}
	if trialDays > 0 {
		rec.TrialPeriodDays = ptr(trialDays)
	}
	price := subPrice(t, m, 900, rec)
	s := csWantOK(t, csPost(t, m.TestKey, csSubBody(price.Id, 1)))
	return &s, price
}

func TestCheckoutSubscriptionCompletion(t *testing.T) {
	t.Parallel()
	payNeedsCheckout(t)
	m := newMerchant(t, true)

	harness.Rule(t, "D14", "a subscription session paid without a trial completes with an active subscription and its paid first invoice", func(t *testing.T) {
		t.Parallel()
		s, price := subCheckoutSession(t, m, 0)
		payConfirmOK(t, s, payCard(payCardOK), capi.ConfirmResultStatusSucceeded)
		got := csGet(t, m.Test, s.Id)
		if got.Status != wire.CheckoutSessionStatusComplete || got.Subscription == nil || !subIDRE.MatchString(*got.Subscription) {
			t.Fatalf("session after paying: status %s subscription %v", got.Status, got.Subscription)
		}
		sub := subGet(t, m, *got.Subscription)
		if sub.Status != wire.SubscriptionStatusActive || sub.PriceId != price.Id || sub.TrialEnd != nil {
			t.Fatalf("subscription: %+v", sub)
		}
		if sub.DefaultPaymentMethod == nil || sub.DefaultPaymentMethod.Last4 != "4242" {
			t.Fatalf("default method: %+v", sub.DefaultPaymentMethod)
		}
		if sub.LatestInvoice == nil {
			t.Fatal("no first invoice")
		}
		inv := invoiceEvents(t, m.Test, *sub.LatestInvoice)
		if !strings.Contains(strings.Join(inv, ","), "invoice.paid") {
			t.Fatalf("first invoice events %v, want invoice.paid", inv)
		}
		// A second confirmation charges nothing more: the session is complete.
		if r := payConfirm(t, s, payCard(payCardOK)); r.StatusCode() == 200 {
			t.Fatalf("second confirm answered 200: %s", r.Body)
		}
	})

	harness.Rule(t, "D14", "a subscription session with a trial saves the method, charges nothing and completes with a trialing subscription", func(t *testing.T) {
		t.Parallel()
		s, _ := subCheckoutSession(t, m, 7)
		payConfirmOK(t, s, payCard(payCardOK), capi.ConfirmResultStatusSucceeded)
		got := csGet(t, m.Test, s.Id)
		if got.Status != wire.CheckoutSessionStatusComplete || got.Subscription == nil || got.Payment != nil {
			t.Fatalf("session after trial confirm: status %s subscription %v payment %v", got.Status, got.Subscription, got.Payment)
		}
		sub := subGet(t, m, *got.Subscription)
		if sub.Status != wire.SubscriptionStatusTrialing || sub.TrialEnd == nil {
			t.Fatalf("subscription: %+v", sub)
		}
		if sub.DefaultPaymentMethod == nil {
			t.Fatal("the trial's method is not the subscription's default")
		}
	})

	harness.Rule(t, "D14", "a completed subscription session fires checkout.session.completed and customer.subscription.created", func(t *testing.T) {
		t.Parallel()
		s, _ := subCheckoutSession(t, m, 7)
		payConfirmOK(t, s, payCard(payCardOK), capi.ConfirmResultStatusSucceeded)
		got := csGet(t, m.Test, s.Id)
		if evs := invoiceEvents(t, m.Test, s.Id); strings.Join(evs, ",") != payEventCompleted {
			t.Fatalf("session events %v", evs)
		}
		evs := subEvents(t, m, *got.Subscription)
		if len(evs) == 0 || evs[0] != "customer.subscription.created" {
			t.Fatalf("subscription events %v", evs)
		}
	})

	harness.Rule(t, "D14", "a declined card leaves the subscription session open with no subscription started twice", func(t *testing.T) {
		t.Parallel()
		s, _ := subCheckoutSession(t, m, 0)
		if r := payConfirm(t, s, payCard(payCardDecline)); r.StatusCode() != 402 {
			t.Fatalf("declined confirm: %d %s", r.StatusCode(), r.Body)
		}
		open := csGet(t, m.Test, s.Id)
		if open.Status != wire.CheckoutSessionStatusOpen || open.Subscription == nil {
			t.Fatalf("after a decline: status %s subscription %v", open.Status, open.Subscription)
		}
		payConfirmOK(t, s, payCard(payCardOK), capi.ConfirmResultStatusSucceeded)
		got := csGet(t, m.Test, s.Id)
		if got.Subscription == nil || *got.Subscription != *open.Subscription {
			t.Fatalf("subscription changed across attempts: %v then %v", open.Subscription, got.Subscription)
		}
		if sub := subGet(t, m, *got.Subscription); sub.Status != wire.SubscriptionStatusActive {
			t.Fatalf("subscription status %s", sub.Status)
		}
	})
}

// The hosted page of a subscription session shows the recurring price, its interval and the
// trial, and the page's pay form starts the subscription.
func TestCheckoutSubscriptionPage(t *testing.T) {
	t.Parallel()
	payNeedsCheckout(t)
	m := newMerchant(t, true)

	harness.Rule(t, "D14", "the hosted page of a subscription session shows the trial, the recurring price and its interval", func(t *testing.T) {
		t.Parallel()
		s, _ := subCheckoutSession(t, m, 7)
		p := pgGet(t, s.CheckoutUrl)
		pgWant(t, p, 200, "7-day free trial", "then 9.00 € every month", "Start trial")
		// Paying on the page starts the trial and completes the session.
		pgPost(t, *s, "/c/"+s.Id+"/pay", pgCardForm(payCardOK))
		got := csGet(t, m.Test, s.Id)
		if got.Status != wire.CheckoutSessionStatusComplete || got.Subscription == nil {
			t.Fatalf("after the page's form: status %s subscription %v", got.Status, got.Subscription)
		}
		if sub := subGet(t, m, *got.Subscription); sub.Status != wire.SubscriptionStatusTrialing {
			t.Fatalf("subscription status %s", sub.Status)
		}
	})

	harness.Rule(t, "D14", "without a trial the hosted page charges the first period and then shows the recurring price", func(t *testing.T) {
		t.Parallel()
		rec := &api.RecurringParams{Interval: wire.RecurringIntervalMonth, IntervalCount: ptr(3)}
		price := subPrice(t, m, 900, rec)
		s := csWantOK(t, csPost(t, m.TestKey, csSubBody(price.Id, 1)))
		p := pgGet(t, s.CheckoutUrl)
		pgWant(t, p, 200, "Pay 9.00 €", "then 9.00 € every 3 months")
		if strings.Contains(p.Body, "free trial") {
			t.Fatal("a price without a trial shows a trial")
		}
	})
}

// The browser API's read of a subscription-mode session carries the recurring terms the
// hosted page words ("7-day free trial, then 9.00 € every month"); a one-off session has none.
func TestCheckoutSubscriptionBrowserTerms(t *testing.T) {
	t.Parallel()
	payNeedsCheckout(t)
	m := newMerchant(t, true)

	harness.Rule(t, "D14", "the browser API's session read gives a subscription session's recurring terms: amount, interval, interval_count and trial days", func(t *testing.T) {
		t.Parallel()
		s, _ := subCheckoutSession(t, m, 7)
		r := payView(t, s.Id, s.ClientSecret)
		if r.JSON200 == nil || r.JSON200.Recurring == nil {
			t.Fatalf("view: %d %s", r.StatusCode(), r.Body)
		}
		if got := *r.JSON200.Recurring; got.Amount != 900 || got.Interval != "month" || got.IntervalCount != 1 || got.TrialPeriodDays != 7 {
			t.Fatalf("terms with a trial: %+v", got)
		}
		price := subPrice(t, m, 900, &api.RecurringParams{Interval: wire.RecurringIntervalWeek, IntervalCount: ptr(2)})
		q := csWantOK(t, csPost(t, m.TestKey, csSubBody(price.Id, 3)))
		r = payView(t, q.Id, q.ClientSecret)
		if r.JSON200 == nil || r.JSON200.Recurring == nil {
			t.Fatalf("view: %d %s", r.StatusCode(), r.Body)
		}
		if got := *r.JSON200.Recurring; got.Amount != 2700 || got.Interval != "week" || got.IntervalCount != 2 || got.TrialPeriodDays != 0 {
			t.Fatalf("terms without a trial: %+v", got)
		}
		one := csWantOK(t, csPost(t, m.TestKey, csWith()))
		r = payView(t, one.Id, one.ClientSecret)
		if r.JSON200 == nil || r.JSON200.Recurring != nil || strings.Contains(string(r.Body), `"recurring"`) {
			t.Fatalf("a one-off session's view: %d %s", r.StatusCode(), r.Body)
		}
	})
}

func TestCheckoutSubscriptionDeclineLimit(t *testing.T) {
	t.Parallel()
	payNeedsCheckout(t)
	m := newMerchant(t, true)
	harness.Rule(t, "D14", "declined first payments of a subscription session count against the session's decline limit", func(t *testing.T) {
		t.Parallel()
		s, _ := subCheckoutSession(t, m, 0)
		for i := 0; i < 10; i++ {
			if r := payConfirm(t, s, payCard(payCardDecline)); r.StatusCode() != 402 {
				t.Fatalf("decline %d: %d %s", i+1, r.StatusCode(), r.Body)
			}
		}
		r := payConfirm(t, s, payCard(payCardOK))
		if r.StatusCode() != 422 || !strings.Contains(string(r.Body), "session_confirm_limit") {
			t.Fatalf("after 10 declines: %d %s", r.StatusCode(), r.Body)
		}
	})
}
