package billing_test

import (
	"errors"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/billing"
)

func activeMonthly(start time.Time) *billing.Subscription {
	return billing.RehydrateSubscription(billing.SubscriptionSnapshot{ID: "sub_1", Scope: scope, Status: billing.StatusActive,
		PriceID: "price_monthly", Quantity: 1, UnitAmount: 900, Currency: "EUR", Interval: billing.IntervalMonth, IntervalCount: 1,
		Anchor: start, PeriodStart: start, PeriodEnd: start.AddDate(0, 1, 0), Created: start, Metadata: map[string]string{}})
}

// Quantity 1 → 3 of 900 in a 30-day April with 20 days left: credit 900 × 20/30 = 600,
// charge 2700 × 20/30 = 1800, net 1200. The period stays.
func TestChangePlanQuantityUp(t *testing.T) {
	start := time.Date(2027, 4, 1, 0, 0, 0, 0, time.UTC)
	s := activeMonthly(start)
	ch, pr, err := s.ChangePlan(nil, 3, start.AddDate(0, 0, 10))
	if err != nil || !ch.Updated {
		t.Fatalf("%+v %v", ch, err)
	}
	if pr.Credit != 600 || pr.Charge != 1800 || pr.Net != 1200 || pr.Restart {
		t.Fatalf("proration %+v", pr)
	}
	snap := s.Snapshot()
	if snap.Quantity != 3 || s.Amount() != 2700 || !snap.PeriodStart.Equal(start) || !snap.PeriodEnd.Equal(start.AddDate(0, 1, 0)) {
		t.Fatalf("snapshot %+v", snap)
	}
	// The same plan again changes nothing.
	if ch, _, err := s.ChangePlan(nil, 3, start.AddDate(0, 0, 11)); err != nil || ch.Updated {
		t.Fatalf("no-op change: %+v %v", ch, err)
	}
}

// A yearly price restarts the period at the change: credit 900 × 20/30 = 600, charge 9000.
func TestChangePlanIntervalRestartsThePeriod(t *testing.T) {
	start := time.Date(2027, 4, 1, 0, 0, 0, 0, time.UTC)
	s := activeMonthly(start)
	yearly := &billing.Price{ID: "price_yearly", Active: true, Recurring: true, Interval: billing.IntervalYear, IntervalCount: 1,
		UsageType: "licensed", UnitAmount: 9000, Currency: "EUR"}
	at := start.AddDate(0, 0, 10)
	_, pr, err := s.ChangePlan(yearly, 0, at)
	if err != nil || pr.Credit != 600 || pr.Charge != 9000 || !pr.Restart {
		t.Fatalf("%+v %v", pr, err)
	}
	snap := s.Snapshot()
	if !snap.PeriodStart.Equal(at) || !snap.PeriodEnd.Equal(at.AddDate(1, 0, 0)) || !snap.Anchor.Equal(at) || snap.Interval != billing.IntervalYear {
		t.Fatalf("period %+v", snap)
	}
}

func TestChangePlanRules(t *testing.T) {
	start := time.Date(2027, 4, 1, 0, 0, 0, 0, time.UTC)
	usd := &billing.Price{ID: "price_usd", Active: true, Recurring: true, Interval: billing.IntervalMonth, IntervalCount: 1, UnitAmount: 900, Currency: "USD"}
	cat := catalog()
	cases := []struct {
		name  string
		price *billing.Price
		qty   int64
		code  string
		param string
	}{
		{"currency_mismatch", usd, 0, "currency_mismatch", "price_id"},
		{"price_not_recurring", cat["price_once"], 0, "price_not_recurring", "price_id"},
		{"price_inactive", cat["price_old"], 0, "price_inactive", "price_id"},
		{"price_metered_unsupported", cat["price_metered"], 0, "price_metered_unsupported", "price_id"},
		{"amount_above_maximum", cat["price_big"], 2, "amount_above_maximum", "quantity"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := activeMonthly(start)
			_, _, err := s.ChangePlan(c.price, c.qty, start.Add(time.Hour))
			var ce *core.Error
			if !errors.As(err, &ce) || ce.Code != c.code || ce.Param != c.param {
				t.Fatalf("got %v, want %s at %s", err, c.code, c.param)
			}
			if s.Snapshot().PriceID != "price_monthly" || s.Snapshot().Quantity != 1 {
				t.Fatal("a refused change moved the plan")
			}
		})
	}
	incomplete := billing.RehydrateSubscription(billing.SubscriptionSnapshot{ID: "sub_2", Scope: scope, Status: billing.StatusIncomplete, Quantity: 1})
	if _, _, err := incomplete.ChangePlan(nil, 2, start); !errors.Is(err, billing.ErrPlanNotChangeable) {
		t.Fatalf("incomplete: %v", err)
	}
}

// The use case: the fields and the price are checked before anything moves; none changes a
// trialing subscription's plan with customer.subscription.updated; a server with no invoicing
// cannot bill a proration now.
func TestChangeSubscriptionPlanUseCase(t *testing.T) {
	now := time.Date(2027, 1, 31, 10, 0, 0, 0, time.UTC)
	svc, f := newTrialService(t, &now)
	sub, err := svc.CreateSubscription(ctx, caller, body("price_trial"))
	if err != nil {
		t.Fatal(err)
	}
	snap := sub.Snapshot()
	if _, err := svc.ConfirmFirstPayment(ctx, snap.PaymentIntent, *snap.ClientSecret, cardInput("4242424242424242", "")); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Hour)
	missing := "price_missing"
	var ce *core.Error
	if _, err := svc.ChangeSubscriptionPlan(ctx, scope, sub.ID(), billing.PlanChange{PriceID: &missing, ProrationBehavior: "none"}, billing.Patch{}); !errors.As(err, &ce) || ce.Code != "price_not_found" || ce.Param != "price_id" {
		t.Fatalf("unknown price: %v", err)
	}
	for _, b := range []string{"always_invoice", ""} {
		if _, err := svc.ChangeSubscriptionPlan(ctx, scope, sub.ID(), billing.PlanChange{Quantity: i64(2), ProrationBehavior: b}, billing.Patch{}); !errors.Is(err, billing.ErrProrationUnsupported) {
			t.Fatalf("%q: %v", b, err)
		}
	}
	if _, err := svc.ChangeSubscriptionPlan(ctx, scope, sub.ID(), billing.PlanChange{Quantity: i64(2), ProrationBehavior: "sometimes"}, billing.Patch{}); !errors.Is(err, billing.ErrProrationBehavior) {
		t.Fatalf("unknown behaviour: %v", err)
	}
	before := len(f.Events())
	got, err := svc.ChangeSubscriptionPlan(ctx, scope, sub.ID(), billing.PlanChange{Quantity: i64(2), ProrationBehavior: "none"},
		billing.Patch{Metadata: map[string]string{"plan": "team"}})
	if err != nil || got.Amount() != 1800 || got.Status() != billing.StatusTrialing || got.Snapshot().Metadata["plan"] != "team" {
		t.Fatalf("none: %v %+v", err, got)
	}
	evs := f.Events()[before:]
	if len(evs) != 1 || evs[0].Type != core.EventSubscriptionUpdated {
		t.Fatalf("events %+v", evs)
	}
}
