package conformance

import (
	"context"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/conformance/harness"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
)

// dbSummary reads the test environment's recurring figures.
func dbSummary(t *testing.T, o *DashOwner) dash.BillingSummary {
	t.Helper()
	r, err := o.Client.GetBillingSummaryWithResponse(context.Background(), dashTest)
	if err != nil || r.JSON200 == nil {
		t.Fatalf("billing summary: %v %s", err, r.Body)
	}
	return *r.JSON200
}

// dbMRRHistory reads the test environment's MRR history.
func dbMRRHistory(t *testing.T, o *DashOwner) dash.MrrHistory {
	t.Helper()
	r, err := o.Client.GetMrrHistoryWithResponse(context.Background(), dashTest)
	if err != nil || r.JSON200 == nil {
		t.Fatalf("mrr history: %v %s", err, r.Body)
	}
	return *r.JSON200
}

// dbPause pauses through the dashboard API.
func dbPause(t *testing.T, o *DashOwner, id string, body dash.SubscriptionPause) *dash.PauseDashboardSubscriptionResponse {
	t.Helper()
	r, err := o.Client.PauseDashboardSubscriptionWithResponse(context.Background(), dashTest, id, nil, body)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// dbUnpause ends a pause through the dashboard API.
func dbUnpause(t *testing.T, o *DashOwner, id string) *dash.UnpauseDashboardSubscriptionResponse {
	t.Helper()
	r, err := o.Client.UnpauseDashboardSubscriptionWithResponse(context.Background(), dashTest, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// wantMRR checks the summary's recurring revenue: one EUR amount, or none for 0.
func wantMRR(t *testing.T, s dash.BillingSummary, active int64, eur int64) {
	t.Helper()
	ok := s.ActiveCount == active
	if eur == 0 {
		ok = ok && len(s.Mrr) == 0
	} else {
		ok = ok && len(s.Mrr) == 1 && s.Mrr[0].Currency == "EUR" && s.Mrr[0].Amount == eur
	}
	if !ok {
		t.Fatalf("summary %+v, want %d active and EUR %d", s, active, eur)
	}
}

func TestDashboardMRR(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	harness.Rule(t, "DBILL", "recurring revenue leaves out a paused subscription, which still counts as active, and counts it again once billing resumes", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		s := subActive(t, o)
		wantMRR(t, dbSummary(t, o), 1, 900)
		if r := dbPause(t, o, s.Id, dash.SubscriptionPause{}); r.JSON200 == nil || r.JSON200.PauseCollection == nil {
			t.Fatalf("pause: %d %s", r.StatusCode(), r.Body)
		}
		wantMRR(t, dbSummary(t, o), 1, 0)
		if r := dbUnpause(t, o, s.Id); r.JSON200 == nil || r.JSON200.PauseCollection != nil {
			t.Fatalf("unpause: %d %s", r.StatusCode(), r.Body)
		}
		wantMRR(t, dbSummary(t, o), 1, 900)
	})

	harness.Rule(t, "DBILL", "the dashboard pauses (with an optional resumes_at) and unpauses a subscription as the merchant API does, with its events", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		s := subActive(t, o)
		resumes := s.CurrentPeriodEnd + 86400
		p := dbPause(t, o, s.Id, dash.SubscriptionPause{ResumesAt: &resumes})
		if p.JSON200 == nil || p.JSON200.Status != "active" || p.JSON200.PauseCollection == nil ||
			p.JSON200.PauseCollection.ResumesAt == nil || *p.JSON200.PauseCollection.ResumesAt != resumes {
			t.Fatalf("pause: %d %s", p.StatusCode(), p.Body)
		}
		if got := subGet(t, o.Merchant, s.Id); got.PauseCollection == nil || got.PauseCollection.ResumesAt == nil {
			t.Fatalf("the merchant API does not see the pause: %+v", got)
		}
		// Paused again without resumes_at: the pause lasts until unpaused.
		if p := dbPause(t, o, s.Id, dash.SubscriptionPause{}); p.JSON200 == nil || p.JSON200.PauseCollection == nil || p.JSON200.PauseCollection.ResumesAt != nil {
			t.Fatalf("pause again: %d %s", p.StatusCode(), p.Body)
		}
		u := dbUnpause(t, o, s.Id)
		if u.JSON200 == nil || u.JSON200.PauseCollection != nil || u.JSON200.Status != "active" {
			t.Fatalf("unpause: %d %s", u.StatusCode(), u.Body)
		}
		subWantEvents(t, o.Merchant, s.Id, "customer.subscription.created", "customer.subscription.updated",
			"customer.subscription.updated", "customer.subscription.updated", "customer.subscription.updated")
	})

	harness.Rule(t, "DBILL", "dashboard pause refusals: resumes_at not in the future is 400 with param resumes_at, unpausing one not paused 409 subscription_not_paused, an incomplete one 409 subscription_not_pausable, a foreign id 404, no CSRF token 403", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		s := subActive(t, o)
		past := s.Created - 60
		r := dbPause(t, o, s.Id, dash.SubscriptionPause{ResumesAt: &past})
		wantErr(t, r, r.HTTPResponse, r.Body, 400, "invalid_request", "resumes_at_invalid", "resumes_at")
		u := dbUnpause(t, o, s.Id)
		wantErr(t, u, u.HTTPResponse, u.Body, 409, "resource_conflict", "subscription_not_paused", "")
		inc := subPlain(t, o)
		r = dbPause(t, o, inc.Id, dash.SubscriptionPause{})
		wantErr(t, r, r.HTTPResponse, r.Body, 409, "resource_conflict", "subscription_not_pausable", "")
		other := newDashOwner(t)
		r = dbPause(t, other, s.Id, dash.SubscriptionPause{})
		wantErr(t, r, r.HTTPResponse, r.Body, 404, "not_found", "subscription_not_found", "id")
		for _, token := range []string{"", "wrong"} {
			x, err := o.Client.PauseDashboardSubscriptionWithResponse(ctx, dashTest, s.Id, nil, dash.SubscriptionPause{}, csrfHeader(token))
			if err != nil {
				t.Fatal(err)
			}
			wantErr(t, x, x.HTTPResponse, x.Body, 403, "permission_error", "csrf_token_invalid", "")
		}
		if got := subGet(t, o.Merchant, s.Id); got.PauseCollection != nil {
			t.Fatalf("a refused pause paused it: %+v", got)
		}
	})

	harness.Rule(t, "DBILL", "MRR history: a test clock advance records the recurring revenue at each midnight it passes, in time order with pauses, per merchant and environment; days before the first midnight after the first subscription have no data (null)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		if h := dbMRRHistory(t, o); len(h.Currencies) != 0 || h.Days != 90 {
			t.Fatalf("history before any subscription %+v", h)
		}
		s := subActive(t, o)
		if h := dbMRRHistory(t, o); len(h.Currencies) != 0 {
			t.Fatalf("history before the first midnight %+v", h)
		}
		created := time.Unix(s.Created, 0).UTC()
		toNext := created.Truncate(24*time.Hour).Add(24*time.Hour).Unix() - s.Created
		// Three midnights at 900, then paused: two midnights at 0.
		clockAdvance(t, o.Test, toNext+2*86400+3600)
		if r := dbPause(t, o, s.Id, dash.SubscriptionPause{}); r.JSON200 == nil {
			t.Fatalf("pause: %d %s", r.StatusCode(), r.Body)
		}
		clockAdvance(t, o.Test, 2*86400)
		h := dbMRRHistory(t, o)
		end := created.Truncate(24*time.Hour).AddDate(0, 0, 5)
		if h.Days != 90 || !h.EndDate.Time.Equal(end) || !h.StartDate.Time.Equal(end.AddDate(0, 0, -89)) || len(h.Currencies) != 1 {
			t.Fatalf("history %+v, want 90 days ending %s in EUR", h, end)
		}
		days := h.Currencies[0].Days
		if h.Currencies[0].Currency != "EUR" || len(days) != 90 {
			t.Fatalf("series %+v", h.Currencies[0])
		}
		want := []*int64{nil, ptr(int64(900)), ptr(int64(900)), ptr(int64(900)), ptr(int64(0)), ptr(int64(0))}
		for i, w := range want {
			d := days[len(days)-len(want)+i]
			if !d.Date.Time.Equal(end.AddDate(0, 0, i-len(want)+1)) || (w == nil) != (d.Amount == nil) || (w != nil && *w != *d.Amount) {
				t.Fatalf("day %d: %s %v, want %v (series %+v)", i, d.Date, d.Amount, w, days[len(days)-len(want):])
			}
		}
		for _, d := range days[:len(days)-len(want)] {
			if d.Amount != nil {
				t.Fatalf("%s has %d before the history starts", d.Date, *d.Amount)
			}
		}
		// Per merchant and environment: live and another merchant have no history.
		live, err := o.Client.GetMrrHistoryWithResponse(ctx, dashLive)
		if err != nil || live.JSON200 == nil || len(live.JSON200.Currencies) != 0 || live.JSON200.Environment != "live" {
			t.Fatalf("live history: %v %s", err, live.Body)
		}
		if h := dbMRRHistory(t, newDashOwner(t)); len(h.Currencies) != 0 {
			t.Fatalf("another merchant's history %+v", h)
		}
	})
}
