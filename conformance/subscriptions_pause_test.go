package conformance

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/kassa-pay/kassa/conformance/harness"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

// subActive creates a €9.00 monthly subscription on a frozen test clock and pays its first
// invoice with a card.
func subActive(t *testing.T, o *DashOwner) api.Subscription {
	t.Helper()
	clockFreeze(t, o.Test)
	s := subPlain(t, o)
	id, secret := subPI(t, s)
	if v := subConfirm(t, secret, id, payCard("4242424242424242")).JSON200; v == nil || v.SubscriptionStatus != "active" {
		t.Fatal("first payment failed")
	}
	return subGet(t, o.Merchant, s.Id)
}

func subPause(t *testing.T, m *Merchant, id string, body map[string]any) api.Subscription {
	t.Helper()
	return catDecode[api.Subscription](t, catPost(t, m.TestKey, "/v1/subscriptions/"+id+"/pause", body))
}

func subResume(t *testing.T, m *Merchant, id string) api.Subscription {
	t.Helper()
	return catDecode[api.Subscription](t, catPost(t, m.TestKey, "/v1/subscriptions/"+id+"/resume", map[string]any{}))
}

func TestSubscriptionsPause(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "D14", "pause keeps the status and shows pause_collection; a period end passes without an invoice; resume by the endpoint bills from the next boundary (test clock)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		s := subActive(t, o)
		p := subPause(t, o.Merchant, s.Id, map[string]any{})
		if p.Status != wire.SubscriptionStatusActive || p.PauseCollection == nil || p.PauseCollection.ResumesAt != nil {
			t.Fatalf("paused %+v", p)
		}
		if got := subGet(t, o.Merchant, s.Id); got.PauseCollection == nil {
			t.Fatal("the pause is not kept")
		}
		end := s.CurrentPeriodEnd
		clockAdvance(t, o.Test, end-s.Created+3600)
		got := subGet(t, o.Merchant, s.Id)
		if got.Status != wire.SubscriptionStatusActive || *got.LatestInvoice != *s.LatestInvoice ||
			got.CurrentPeriodStart != end || got.CurrentPeriodEnd != subNextMonth(end) || got.PauseCollection == nil {
			t.Fatalf("after a period end while paused %+v", got)
		}
		r := subResume(t, o.Merchant, s.Id)
		if r.PauseCollection != nil || r.Status != wire.SubscriptionStatusActive || r.CurrentPeriodEnd != subNextMonth(end) {
			t.Fatalf("resumed %+v", r)
		}
		clockAdvance(t, o.Test, subNextMonth(end)-end-3600)
		after := subGet(t, o.Merchant, s.Id)
		if after.LatestInvoice == nil || *after.LatestInvoice == *s.LatestInvoice || after.CurrentPeriodStart != subNextMonth(end) {
			t.Fatalf("after the next boundary %+v", after)
		}
		if inv := subInvoice(t, o, *after.LatestInvoice); inv.Status != "paid" || inv.TotalAmount != 900 || *inv.IssueDate != subNextMonth(end) {
			t.Fatalf("renewal after the resume %+v", inv)
		}
		if n := len(evtList(t, o.Test, "invoice.finalized", 10).Data); n != 2 {
			t.Fatalf("invoice.finalized: %d, want 2 (the first and one renewal)", n)
		}
		// Created, the first payment, the pause, the period end while paused, the resume, the
		// renewal paid.
		subWantEvents(t, o.Merchant, s.Id, "customer.subscription.created", "customer.subscription.updated",
			"customer.subscription.updated", "customer.subscription.updated", "customer.subscription.updated",
			"customer.subscription.updated")
	})

	harness.Rule(t, "D14", "a pause with resumes_at ends by itself at resumes_at; the paused periods are not billed (test clock)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		s := subActive(t, o)
		end := s.CurrentPeriodEnd
		resumes := subNextMonth(end) + 5*86400 // two period ends pass while paused
		p := subPause(t, o.Merchant, s.Id, map[string]any{"resumes_at": resumes})
		if p.PauseCollection == nil || p.PauseCollection.ResumesAt == nil || *p.PauseCollection.ResumesAt != resumes {
			t.Fatalf("paused %+v", p)
		}
		clockAdvance(t, o.Test, resumes-s.Created-1)
		if got := subGet(t, o.Merchant, s.Id); got.PauseCollection == nil || *got.LatestInvoice != *s.LatestInvoice {
			t.Fatalf("before resumes_at %+v", got)
		}
		clockAdvance(t, o.Test, 1)
		got := subGet(t, o.Merchant, s.Id)
		next := subNextMonth(subNextMonth(end))
		if got.PauseCollection != nil || *got.LatestInvoice != *s.LatestInvoice || got.CurrentPeriodStart != subNextMonth(end) || got.CurrentPeriodEnd != next {
			t.Fatalf("at resumes_at %+v", got)
		}
		clockAdvance(t, o.Test, next-resumes)
		after := subGet(t, o.Merchant, s.Id)
		if *after.LatestInvoice == *s.LatestInvoice || after.CurrentPeriodStart != next {
			t.Fatalf("after the next boundary %+v", after)
		}
		if n := len(evtList(t, o.Test, "invoice.finalized", 10).Data); n != 2 {
			t.Fatalf("invoice.finalized: %d, want 2", n)
		}
	})

	harness.Rule(t, "D14", "pausing an incomplete subscription is 409 subscription_not_pausable, a canceled one 409 subscription_already_canceled; resuming one not paused is 409 subscription_not_paused", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		pr := subPrice(t, m, 900, nil)
		s := subCreate(t, m, subBody(pr.Id))
		path := "/v1/subscriptions/" + s.Id
		catWantErr(t, catPost(t, m.TestKey, path+"/pause", map[string]any{}), http.StatusConflict, "resource_conflict", "subscription_not_pausable", "")
		catWantErr(t, catPost(t, m.TestKey, path+"/resume", map[string]any{}), http.StatusConflict, "resource_conflict", "subscription_not_paused", "")
		catPost(t, m.TestKey, path+"/cancel", map[string]any{"at_period_end": false})
		catWantErr(t, catPost(t, m.TestKey, path+"/pause", map[string]any{}), http.StatusConflict, "resource_conflict", "subscription_already_canceled", "")
		catWantErr(t, catPost(t, m.TestKey, path+"/resume", map[string]any{}), http.StatusConflict, "resource_conflict", "subscription_already_canceled", "")
		subWantEvents(t, m, s.Id, "customer.subscription.created", "customer.subscription.deleted")
	})

	harness.Rule(t, "D14", "resumes_at must be a Unix time in the future, at most five years ahead: else 400 at resumes_at; unknown fields are 400", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		s := subActive(t, o)
		path := "/v1/subscriptions/" + s.Id + "/pause"
		now := clockFreeze(t, o.Test)
		for _, v := range []any{now, now - 1, int64(1), now + 6*366*86400} {
			catWantErr(t, catPost(t, o.Merchant.TestKey, path, map[string]any{"resumes_at": v}), http.StatusBadRequest, "invalid_request", "resumes_at_invalid", "resumes_at")
		}
		r := catPost(t, o.Merchant.TestKey, path, map[string]any{"resumes_at": strconv.FormatInt(now+60, 10)})
		if r.Status != http.StatusBadRequest {
			t.Fatalf("a string resumes_at: %d %s", r.Status, r.Body)
		}
		r = catPost(t, o.Merchant.TestKey, path, map[string]any{"until": now + 60})
		catWantErr(t, r, http.StatusBadRequest, "invalid_request", "parameter_unknown", "until")
		if got := subGet(t, o.Merchant, s.Id); got.PauseCollection != nil {
			t.Fatalf("a refused pause paused %+v", got)
		}
	})

	harness.Rule(t, "8", "replaying pause and resume with the same Idempotency-Key changes once and answers the same", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		s := subActive(t, o)
		m := o.Merchant
		for _, op := range []string{"pause", "resume"} {
			key := map[string]string{"Idempotency-Key": op + "-" + m.ID}
			a := raw(t, http.MethodPost, "/v1/subscriptions/"+s.Id+"/"+op, m.TestKey, "", key)
			b := raw(t, http.MethodPost, "/v1/subscriptions/"+s.Id+"/"+op, m.TestKey, "", key)
			if a.Status != 200 || string(a.Body) != string(b.Body) || b.Header.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("%s replay: %d %s / %d %s", op, a.Status, a.Body, b.Status, b.Body)
			}
		}
		subWantEvents(t, m, s.Id, "customer.subscription.created", "customer.subscription.updated",
			"customer.subscription.updated", "customer.subscription.updated")
	})

	harness.Rule(t, "ISO", "pausing or resuming an unknown or another merchant's subscription is 404 subscription_not_found", func(t *testing.T) {
		t.Parallel()
		m, other := newMerchant(t, true), newMerchant(t, true)
		s := subCreate(t, other, subBody(subPrice(t, other, 900, nil).Id))
		for _, id := range []string{s.Id, "sub_000000000000000000000000"} {
			for _, op := range []string{"pause", "resume"} {
				catWantErr(t, catPost(t, m.TestKey, "/v1/subscriptions/"+id+"/"+op, map[string]any{}), http.StatusNotFound, "not_found", "subscription_not_found", "id")
			}
		}
	})
}
