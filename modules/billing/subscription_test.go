package billing_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/billing"
	"github.com/kassa-pay/kassa/modules/billing/billingtest"
	"github.com/kassa-pay/kassa/ports"
)

type prices map[string]*billing.Price

func (p prices) LookupSubscriptionPrice(_ context.Context, _ core.Scope, id string) (*billing.Price, error) {
	if pr, ok := p[id]; ok {
		return pr, nil
	}
	return nil, core.NotFound("price", "price", id)
}

type movingClock struct{ now *time.Time }

func (c movingClock) Now(context.Context, core.Scope) (time.Time, error) { return *c.now, nil }

func seven() *int { d := 7; return &d }

func catalog() prices {
	return prices{
		"price_monthly": {ID: "price_monthly", Active: true, Recurring: true, Interval: billing.IntervalMonth, IntervalCount: 1, UsageType: "licensed", UnitAmount: 900, Currency: "EUR"},
		"price_trial":   {ID: "price_trial", Active: true, Recurring: true, Interval: billing.IntervalMonth, IntervalCount: 1, UsageType: "licensed", UnitAmount: 900, Currency: "EUR", TrialPeriodDays: seven()},
		"price_once":    {ID: "price_once", Active: true, UnitAmount: 900, Currency: "EUR"},
		"price_old":     {ID: "price_old", Active: false, Recurring: true, Interval: billing.IntervalMonth, IntervalCount: 1, UnitAmount: 900, Currency: "EUR"},
		"price_metered": {ID: "price_metered", Active: true, Recurring: true, Interval: billing.IntervalMonth, IntervalCount: 1, UsageType: "metered", UnitAmount: 900, Currency: "EUR"},
		"price_big":     {ID: "price_big", Active: true, Recurring: true, Interval: billing.IntervalYear, IntervalCount: 1, UnitAmount: 99_999_999, Currency: "EUR"},
	}
}

func newSubs(t *testing.T, now *time.Time) (*billing.Service, *billingtest.Fake) {
	t.Helper()
	f := billingtest.NewFake()
	svc, err := billing.NewService(billing.Deps{Store: f, UoW: f, Clocks: movingClock{now}, Prices: catalog(),
		Savers: map[core.Environment]ports.MethodSaver{}})
	if err != nil {
		t.Fatal(err)
	}
	return svc, f
}

var caller = core.Caller{Scope: scope, Onboarded: true}

func body(price string) billing.CreateInput {
	return billing.CreateInput{PriceID: price, CustomerName: "Ada Lovelace", CustomerEmail: "ada@example.com"}
}

func i64(v int64) *int64 { return &v }

func TestCreateSubscriptionRules(t *testing.T) {
	now := time.Date(2027, 1, 31, 10, 0, 0, 0, time.UTC)
	svc, _ := newSubs(t, &now)
	cases := []struct {
		name        string
		in          billing.CreateInput
		caller      core.Caller
		typ         core.ErrorType
		code, param string
	}{
		{"price_id required", billing.CreateInput{CustomerName: "Ada Lovelace", CustomerEmail: "a@example.com"}, caller, core.TypeInvalidRequest, "", "price_id"},
		{"customer_name required", billing.CreateInput{PriceID: "price_monthly", CustomerEmail: "a@example.com"}, caller, core.TypeInvalidRequest, "", "customer_name"},
		{"customer_name too short", billing.CreateInput{PriceID: "price_monthly", CustomerName: "A", CustomerEmail: "a@example.com"}, caller, core.TypeInvalidRequest, "", "customer_name"},
		{"customer_email required", billing.CreateInput{PriceID: "price_monthly", CustomerName: "Ada Lovelace"}, caller, core.TypeInvalidRequest, "", "customer_email"},
		{"customer_email invalid", billing.CreateInput{PriceID: "price_monthly", CustomerName: "Ada Lovelace", CustomerEmail: "nope"}, caller, core.TypeInvalidRequest, "", "customer_email"},
		{"quantity 0", func() billing.CreateInput { b := body("price_monthly"); b.Quantity = i64(0); return b }(), caller, core.TypeInvalidRequest, "", "quantity"},
		{"quantity 10001", func() billing.CreateInput { b := body("price_monthly"); b.Quantity = i64(10001); return b }(), caller, core.TypeInvalidRequest, "", "quantity"},
		{"trial_days 731", func() billing.CreateInput { b := body("price_monthly"); b.TrialDays = i64(731); return b }(), caller, core.TypeInvalidRequest, "", "trial_days"},
		{"trial_days -1", func() billing.CreateInput { b := body("price_monthly"); b.TrialDays = i64(-1); return b }(), caller, core.TypeInvalidRequest, "", "trial_days"},
		{"price_not_found", body("price_nope"), caller, core.TypeNotFound, "price_not_found", "price_id"},
		{"price_not_recurring", body("price_once"), caller, core.TypeInvalidRequest, "price_not_recurring", "price_id"},
		{"price_inactive", body("price_old"), caller, core.TypeInvalidRequest, "price_inactive", "price_id"},
		{"price_metered_unsupported", body("price_metered"), caller, core.TypeInvalidRequest, "price_metered_unsupported", "price_id"},
		{"amount_above_maximum", func() billing.CreateInput { b := body("price_big"); b.Quantity = i64(2); return b }(), caller, core.TypeAmountTooLarge, "amount_above_maximum", "quantity"},
		{"merchant_not_ready", body("price_monthly"), core.Caller{Scope: core.Scope{MerchantID: "mer_1", Env: core.EnvLive}}, core.TypeResourceConflict, "merchant_not_ready", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := svc.CreateSubscription(ctx, c.caller, c.in)
			var ce *core.Error
			if !errors.As(err, &ce) || ce.Type != c.typ || ce.Param != c.param || (c.code != "" && ce.Code != c.code) {
				t.Fatalf("%v, want %s/%s at %q", err, c.typ, c.code, c.param)
			}
		})
	}
}

func TestCreateSubscriptionIsIncompleteAndAnchored(t *testing.T) {
	now := time.Date(2027, 1, 31, 10, 0, 0, 0, time.UTC)
	svc, f := newSubs(t, &now)
	in := body("price_monthly")
	in.Quantity, in.Metadata = i64(3), map[string]string{"plan": "pro"}
	sub, err := svc.CreateSubscription(ctx, caller, in)
	if err != nil {
		t.Fatal(err)
	}
	s := sub.Snapshot()
	if !strings.HasPrefix(s.ID, "sub_") || s.Status != billing.StatusIncomplete || sub.Amount() != 2700 || s.Currency != "EUR" ||
		!s.PeriodStart.Equal(now) || !s.PeriodEnd.Equal(time.Date(2027, 2, 28, 10, 0, 0, 0, time.UTC)) || s.TrialEnd != nil || s.Metadata["plan"] != "pro" {
		t.Fatalf("created %+v", s)
	}
	evs := f.Events()
	if len(evs) != 1 || evs[0].Type != core.EventSubscriptionCreated || evs[0].ObjectID != s.ID {
		t.Fatalf("events %+v", evs)
	}
	// The same e-mail finds the same customer.
	again, _ := svc.CreateSubscription(ctx, caller, body("price_monthly"))
	if again.Customer() != sub.Customer() {
		t.Fatalf("second subscription of the e-mail: customer %s, want %s", again.Customer(), sub.Customer())
	}
	// A trial from the price, overridden by trial_days, and 0 for none.
	tr, _ := svc.CreateSubscription(ctx, caller, body("price_trial"))
	if te := tr.Snapshot().TrialEnd; te == nil || !te.Equal(now.AddDate(0, 0, 7)) || !tr.Snapshot().PeriodEnd.Equal(*te) {
		t.Fatalf("price trial: %+v", tr.Snapshot())
	}
	in = body("price_trial")
	in.TrialDays = i64(0)
	if none, _ := svc.CreateSubscription(ctx, caller, in); none.Snapshot().TrialEnd != nil {
		t.Fatalf("trial_days 0 keeps a trial")
	}
	if _, err := svc.Subscription(ctx, core.Scope{MerchantID: "mer_2", Env: core.EnvTest}, s.ID); !errors.Is(err, billing.ErrSubscriptionNotFound) {
		t.Fatalf("foreign subscription: %v", err)
	}
}

func TestCancelSubscriptionRules(t *testing.T) {
	now := time.Date(2027, 3, 1, 10, 0, 0, 0, time.UTC)
	svc, f := newSubs(t, &now)
	// An incomplete subscription ends at once, even at_period_end.
	sub, _ := svc.CreateSubscription(ctx, caller, body("price_monthly"))
	got, err := svc.CancelSubscription(ctx, scope, sub.ID(), true)
	if err != nil || got.Status() != billing.StatusCanceled || got.Snapshot().EndedAt == nil {
		t.Fatalf("cancel incomplete: %+v %v", got, err)
	}
	if _, err := svc.CancelSubscription(ctx, scope, sub.ID(), false); !errors.Is(err, billing.ErrAlreadyCanceled) {
		t.Fatalf("cancel again: %v", err)
	}
	if evs := f.Events(); evs[len(evs)-1].Type != core.EventSubscriptionDeleted {
		t.Fatalf("last event %s", evs[len(evs)-1].Type)
	}
	if _, err := svc.CancelSubscription(ctx, scope, "sub_nope", true); !errors.Is(err, billing.ErrSubscriptionNotFound) {
		t.Fatalf("unknown: %v", err)
	}
}

func TestActiveSubscriptionCancelAtPeriodEnd(t *testing.T) {
	now := time.Date(2027, 1, 31, 10, 0, 0, 0, time.UTC)
	s := billing.RehydrateSubscription(billing.SubscriptionSnapshot{ID: "sub_1", Scope: scope, Status: billing.StatusActive,
		PeriodStart: now, PeriodEnd: now.AddDate(0, 1, -3), Created: now, Metadata: map[string]string{}})
	ch, err := s.Cancel(true, now.Add(time.Hour))
	if err != nil || !ch.Updated || ch.Deleted || !s.Snapshot().CancelAtPeriodEnd || s.Status() != billing.StatusActive {
		t.Fatalf("at period end: %+v %v %+v", ch, err, s.Snapshot())
	}
	if ch, _ := s.Cancel(true, now.Add(2*time.Hour)); ch != (billing.Change{}) {
		t.Fatalf("pending cancellation cancelled again with true changed: %+v", ch)
	}
	// Resumed by the update, then cancelled now.
	f := false
	if ch, err := s.Apply(billing.Patch{CancelAtPeriodEnd: &f}, now.Add(3*time.Hour)); err != nil || !ch.Updated || s.Snapshot().CancelAtPeriodEnd || s.Snapshot().CanceledAt != nil {
		t.Fatalf("resume: %+v %v", ch, err)
	}
	s.Cancel(true, now.Add(4*time.Hour))
	if at, ok := s.DueAt(); !ok || !at.Equal(s.Snapshot().PeriodEnd) {
		t.Fatalf("due at %v %v", at, ok)
	}
	ch, err = s.Cancel(false, now.Add(5*time.Hour))
	if err != nil || !ch.Deleted || s.Status() != billing.StatusCanceled || !s.Snapshot().EndedAt.Equal(now.Add(5*time.Hour)) {
		t.Fatalf("pending cancellation ended now: %+v %v %+v", ch, err, s.Snapshot())
	}
	if _, err := s.Apply(billing.Patch{Metadata: map[string]string{"a": "b"}}, now); !errors.Is(err, billing.ErrSubscriptionEnded) {
		t.Fatalf("update of a canceled subscription: %v", err)
	}
}

// The sweep: an incomplete subscription expires 23 hours after creation, a pending
// cancellation ends at the period end, each dated when it fell due, with its event.
func TestSweepExpiresAndEndsInTimeOrder(t *testing.T) {
	now := time.Date(2027, 1, 31, 10, 0, 0, 0, time.UTC)
	svc, f := newSubs(t, &now)
	sub, _ := svc.CreateSubscription(ctx, caller, body("price_monthly"))
	if n, err := svc.ProcessDue(ctx, &scope, now.Add(23*time.Hour-time.Second)); n != 0 || err != nil {
		t.Fatalf("before 23 h: %d %v", n, err)
	}
	next, ok, _ := svc.NextDue(ctx, scope, now.AddDate(0, 0, 2))
	if !ok || !next.Equal(now.Add(23*time.Hour)) {
		t.Fatalf("next due %v %v", next, ok)
	}
	if n, err := svc.ProcessDue(ctx, &scope, now.Add(24*time.Hour)); n != 1 || err != nil {
		t.Fatalf("after 23 h: %d %v", n, err)
	}
	got, _ := svc.Subscription(ctx, scope, sub.ID())
	if got.Status() != billing.StatusIncompleteExpired || !got.Snapshot().EndedAt.Equal(now.Add(23*time.Hour)) {
		t.Fatalf("expired: %+v", got.Snapshot())
	}
	evs := f.Events()
	if last := evs[len(evs)-1]; last.Type != core.EventSubscriptionUpdated || !last.Created.Equal(now.Add(23*time.Hour)) {
		t.Fatalf("expiry event %s at %v", last.Type, last.Created)
	}
	if _, err := svc.CancelSubscription(ctx, scope, sub.ID(), true); !errors.Is(err, billing.ErrAlreadyCanceled) {
		t.Fatalf("cancel an expired subscription: %v", err)
	}
}

func TestListSubscriptionsFiltersAndPages(t *testing.T) {
	now := time.Date(2027, 1, 31, 10, 0, 0, 0, time.UTC)
	svc, _ := newSubs(t, &now)
	var ids []string
	for i := 0; i < 5; i++ {
		in := body("price_monthly")
		if i%2 == 1 {
			in = body("price_trial")
		}
		s, err := svc.CreateSubscription(ctx, caller, in)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.ID())
	}
	svc.CancelSubscription(ctx, scope, ids[0], false)
	page, err := svc.ListSubscriptions(ctx, scope, core.ListQuery{Limit: 2}, billing.SubscriptionFilter{})
	if err != nil || len(page.Items) != 2 || !page.HasMore || page.Items[0].ID() != ids[4] {
		t.Fatalf("first page: %v %v", page, err)
	}
	page, _ = svc.ListSubscriptions(ctx, scope, core.ListQuery{Limit: 10, StartingAfter: ids[3]}, billing.SubscriptionFilter{})
	if len(page.Items) != 3 || page.Items[0].ID() != ids[2] || page.HasMore {
		t.Fatalf("after %s: %d items", ids[3], len(page.Items))
	}
	price, canceled := "price_trial", billing.StatusCanceled
	if page, _ = svc.ListSubscriptions(ctx, scope, core.ListQuery{}, billing.SubscriptionFilter{Price: &price}); len(page.Items) != 2 {
		t.Fatalf("price filter: %d", len(page.Items))
	}
	if page, _ = svc.ListSubscriptions(ctx, scope, core.ListQuery{}, billing.SubscriptionFilter{Status: &canceled}); len(page.Items) != 1 || page.Items[0].ID() != ids[0] {
		t.Fatalf("status filter: %v", page.Items)
	}
	bad := billing.Status("bogus")
	if _, err := svc.ListSubscriptions(ctx, scope, core.ListQuery{}, billing.SubscriptionFilter{Status: &bad}); err == nil {
		t.Fatalf("unknown status accepted")
	}
	if _, err := svc.ListSubscriptions(ctx, scope, core.ListQuery{StartingAfter: "sub_nope"}, billing.SubscriptionFilter{}); err == nil {
		t.Fatalf("unknown cursor accepted")
	}
}

func newTrialService(t *testing.T, now *time.Time) (*billing.Service, *billingtest.Fake) {
	t.Helper()
	f := billingtest.NewFake()
	saver := &stubSaver{seen: map[string]ports.SetupResult{}}
	svc, err := billing.NewService(billing.Deps{Store: f, UoW: f, Clocks: movingClock{now}, Prices: catalog(),
		Savers: map[core.Environment]ports.MethodSaver{core.EnvTest: saver}})
	if err != nil {
		t.Fatal(err)
	}
	return svc, f
}

// The first payment of a trial only saves the payment method: trialing, the method the
// default, customer.subscription.updated; a decline keeps it incomplete; a second
// confirmation, a wrong secret or an expired one is payment_intent_unexpected_state.
func TestConfirmFirstPaymentOfATrial(t *testing.T) {
	now := time.Date(2027, 1, 31, 10, 0, 0, 0, time.UTC)
	svc, f := newTrialService(t, &now)
	sub, err := svc.CreateSubscription(ctx, caller, body("price_trial"))
	if err != nil {
		t.Fatal(err)
	}
	snap := sub.Snapshot()
	if !strings.HasPrefix(snap.PaymentIntent, "pi_") || snap.ClientSecret == nil || !strings.HasPrefix(*snap.ClientSecret, snap.PaymentIntent+"_secret_") {
		t.Fatalf("first payment %q %v", snap.PaymentIntent, snap.ClientSecret)
	}
	if plain, _ := svc.CreateSubscription(ctx, caller, body("price_monthly")); plain.PaymentIntent() != "" || plain.Snapshot().ClientSecret != nil {
		t.Fatalf("a subscription without a trial has a first payment to confirm: %+v", plain.Snapshot())
	}
	pi, secret := snap.PaymentIntent, *snap.ClientSecret
	if _, err := svc.ConfirmFirstPayment(ctx, pi, secret+"x", cardInput("4242424242424242", "")); !errors.Is(err, billing.ErrPaymentIntentState) {
		t.Fatalf("wrong secret: %v", err)
	}
	var de *billing.DeclineError
	if _, err := svc.ConfirmFirstPayment(ctx, pi, secret, cardInput("4000000000000002", "")); !errors.As(err, &de) || de.DeclineCode != ports.DeclineGenericDecline {
		t.Fatalf("decline: %v", err)
	}
	bad := cardInput("4242424242424241", "")
	var ce *core.Error
	if _, err := svc.ConfirmFirstPayment(ctx, pi, secret, bad); !errors.As(err, &ce) || ce.Param != "card.number" {
		t.Fatalf("bad number: %v", err)
	}
	if got, _ := svc.Subscription(ctx, scope, sub.ID()); got.Status() != billing.StatusIncomplete {
		t.Fatalf("after a decline: %s", got.Status())
	}
	fp, err := svc.ConfirmFirstPayment(ctx, pi, secret, cardInput("4242424242424242", ""))
	if err != nil {
		t.Fatal(err)
	}
	got := fp.Subscription.Snapshot()
	if got.Status != billing.StatusTrialing || got.DefaultMethod == nil || got.DefaultMethod.Last4 != "4242" {
		t.Fatalf("confirmed %+v", got)
	}
	c, _ := svc.Customer(ctx, scope, sub.Customer())
	if d := c.DefaultPaymentMethod(); d == nil || *d != got.DefaultMethod.ID {
		t.Fatalf("customer default %v, want %s", d, got.DefaultMethod.ID)
	}
	if evs := f.Events(); evs[len(evs)-1].Type != core.EventSubscriptionUpdated || evs[len(evs)-1].ObjectID != sub.ID() {
		t.Fatalf("last event %s", evs[len(evs)-1].Type)
	}
	if _, err := svc.ConfirmFirstPayment(ctx, pi, secret, cardInput("4242424242424242", "")); !errors.Is(err, billing.ErrPaymentIntentState) {
		t.Fatalf("second confirmation: %v", err)
	}
	// The notice three days before the trial end, then the end of a trial cancelled at period end.
	if _, err := svc.CancelSubscription(ctx, scope, sub.ID(), true); err != nil {
		t.Fatal(err)
	}
	end := *got.TrialEnd
	// Before the notice only the subscription without a trial expires.
	if n, _ := svc.ProcessDue(ctx, &scope, end.Add(-TrialNoticeLeadForTest-time.Second)); n != 1 {
		t.Fatalf("%d changes before the notice, want the other one's expiry", n)
	}
	if n, err := svc.ProcessDue(ctx, &scope, end); n != 2 || err != nil {
		t.Fatalf("notice and end: %d %v", n, err)
	}
	evs := f.Events()
	notice, deleted := evs[len(evs)-2], evs[len(evs)-1]
	if notice.Type != core.EventSubscriptionTrialWillEnd || !notice.Created.Equal(end.Add(-TrialNoticeLeadForTest)) ||
		deleted.Type != core.EventSubscriptionDeleted || !deleted.Created.Equal(end) {
		t.Fatalf("events %s at %v, %s at %v", notice.Type, notice.Created, deleted.Type, deleted.Created)
	}
	// Expired: 23 hours after creation.
	late, _ := svc.CreateSubscription(ctx, caller, body("price_trial"))
	now = now.Add(23 * time.Hour)
	if _, err := svc.ConfirmFirstPayment(ctx, late.PaymentIntent(), *late.Snapshot().ClientSecret, cardInput("4242424242424242", "")); !errors.Is(err, billing.ErrPaymentIntentState) {
		t.Fatalf("after 23 hours: %v", err)
	}
}

const TrialNoticeLeadForTest = billing.TrialNoticeLead

// A trial shorter than three days gives its notice at its start.
func TestTrialNoticeOfAShortTrial(t *testing.T) {
	now := time.Date(2027, 3, 1, 10, 0, 0, 0, time.UTC)
	start := now
	end := now.AddDate(0, 0, 2)
	s := billing.RehydrateSubscription(billing.SubscriptionSnapshot{ID: "sub_1", Scope: scope, Status: billing.StatusTrialing,
		TrialStart: &start, TrialEnd: &end, PeriodStart: now, PeriodEnd: end, Created: now, Metadata: map[string]string{}})
	if at, ok := s.DueAt(); !ok || !at.Equal(start) {
		t.Fatalf("notice at %v %v, want the trial start", at, ok)
	}
	ch, _, _ := s.ProcessDue(now)
	if !ch.TrialWillEnd || !s.Snapshot().TrialNotified {
		t.Fatalf("notice %+v", ch)
	}
	// Next: the trial's end, when its first invoice is charged.
	if at, ok := s.DueAt(); !ok || !at.Equal(end) {
		t.Fatalf("after the notice due at %v %v, want the trial end", at, ok)
	}
}
