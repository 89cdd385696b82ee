package conformance

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/kassa-pay/kassa/conformance/harness"
	"github.com/kassa-pay/kassa/openapi/gen/appapi"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
	op "github.com/kassa-pay/kassa/openapi/gen/operatorapi"
)

// The App API's disputes and subscriptions (interface 2.8 and 4.5, D11, D17): one shape in
// both environments, each with its scope, paged like every list; the other environment's and
// another merchant's are never listed.

// appWantTimes checks that the fields of the first object of a list's raw body are ISO 8601
// date-times in UTC (or null where nullable holds the name).
func appWantTimes(t *testing.T, body []byte, fields []string, nullable ...string) {
	t.Helper()
	var raw struct {
		Data []map[string]any `json:"data"`
	}
	if err := json.Unmarshal(body, &raw); err != nil || len(raw.Data) == 0 {
		t.Fatalf("list %v %s", err, body)
	}
	for _, f := range fields {
		v, present := raw.Data[0][f]
		if !present {
			t.Fatalf("%s missing in %s", f, body)
		}
		if v == nil && strings.Contains(strings.Join(nullable, ","), f) {
			continue
		}
		if s, _ := v.(string); !appTime.MatchString(s) {
			t.Fatalf("%s %v, want ISO 8601 UTC", f, v)
		}
	}
}

func TestAppAPIDisputesSubscriptions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	harness.Rule(t, "4.5", "disputes and subscriptions answer with their scope and 403 insufficient_scope naming it without", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, false)
		all := appInstall(t, m)
		only := appInstall(t, m, "merchant:read")
		for p, scope := range map[string]string{"/v1/disputes": "disputes:read", "/v1/subscriptions": "subscriptions:read"} {
			wantAppError(t, appRaw(t, http.MethodGet, p, only.TestToken), 403, "insufficient_scope", scope)
			wantAppError(t, appRaw(t, http.MethodGet, p, only.LiveToken), 403, "insufficient_scope", scope)
			// Another list scope is not enough either.
			other := appInstall(t, m, "payments:read", "invoices:read")
			wantAppError(t, appRaw(t, http.MethodGet, p, other.TestToken), 403, "insufficient_scope", scope)
			for _, tok := range []string{all.TestToken, all.LiveToken} {
				if ids, more := appListIDs(t, tok, p); len(ids) != 0 || more {
					t.Fatalf("%s of a merchant without any: %v %v", p, ids, more)
				}
			}
			only1 := appInstall(t, m, op.AppScope(scope))
			if r := appRaw(t, http.MethodGet, p, only1.TestToken); r.Status != 200 {
				t.Fatalf("%s with only %s: %d %s", p, scope, r.Status, r.Body)
			}
		}
	})

	harness.Rule(t, "D11", "disputes: one per chargeback, newest first, money lower case, ISO 8601 UTC, past_due by the test clock; paged; the other environment's and another merchant's are not listed", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o, other := newDashOwner(t), newDashOwner(t)
		i := appInstall(t, o.Merchant, "disputes:read")
		clockFreeze(t, o.Test)
		var ids, payIDs []string // newest first
		for n := range 3 {
			s := dashPay(t, o.Merchant, int64(1000+n*100), "eur", payCardDispute)
			clockAdvance(t, o.Test, asyncDisputeWait)
			d := paymentDetail(t, o, s.Payment.Id).Dispute
			if d == nil {
				t.Fatalf("payment %s has no dispute", s.Payment.Id)
			}
			ids, payIDs = append([]string{d.Id}, ids...), append([]string{s.Payment.Id}, payIDs...)
		}
		_, _, foreign := disputed(t, other)
		newest := getDispute(t, o, ids[0])

		c := appClient(t, i.TestToken)
		r, err := c.ListDisputesWithResponse(ctx, nil)
		if err != nil || r.JSON200 == nil || len(r.JSON200.Data) != 3 || r.JSON200.HasMore {
			t.Fatalf("list: %v %s", err, r.Body)
		}
		d := r.JSON200.Data[0]
		if d.Id != ids[0] || d.Object != appapi.DisputeObjectDispute || d.Payment != payIDs[0] ||
			d.Amount != (appapi.Money{Amount: 1200, Currency: "eur"}) || d.Reason != newest.Reason ||
			d.Status != appapi.DisputeStatus(newest.Status) || d.Status != "needs_response" || d.PastDue ||
			d.EvidenceDueBy.Unix() != newest.EvidenceDueBy || d.Created.Unix() != newest.Created ||
			d.EvidenceSubmittedAt != nil || d.ClosedAt != nil || d.Fee != (appapi.Money{Amount: newest.Fee, Currency: "eur"}) {
			t.Fatalf("dispute %s; dashboard %+v", r.Body, newest)
		}
		appWantTimes(t, r.Body, []string{"created", "evidence_due_by", "evidence_submitted_at", "closed_at"}, "evidence_submitted_at", "closed_at")
		var rawDisputes struct {
			Data []map[string]any `json:"data"`
		}
		if _ = json.Unmarshal(r.Body, &rawDisputes); len(rawDisputes.Data[0]) != 12 {
			t.Fatalf("dispute fields %v", rawDisputes.Data[0])
		}
		for _, got := range r.JSON200.Data {
			if got.Id == foreign.Id {
				t.Fatalf("another merchant's dispute %s is listed", foreign.Id)
			}
		}
		appWantPaging(t, i.TestToken, "/v1/disputes", ids)
		if got, _ := appListIDs(t, i.LiveToken, "/v1/disputes"); len(got) != 0 {
			t.Fatalf("the live token lists sandbox disputes %v", got)
		}

		// Evidence submitted on the oldest; the others pass their deadline unanswered on the
		// test clock.
		evidenceOK(t, o, ids[2], "tracking number 123", true)
		clockAdvance(t, o.Test, 8*day-2*asyncDisputeWait)
		r, err = c.ListDisputesWithResponse(ctx, nil)
		if err != nil || r.JSON200 == nil || len(r.JSON200.Data) != 3 {
			t.Fatalf("list after the deadline: %v %s", err, r.Body)
		}
		for n, got := range r.JSON200.Data {
			want := getDispute(t, o, ids[n])
			if got.Id != ids[n] || got.Status != appapi.DisputeStatus(want.Status) || got.PastDue != want.PastDue ||
				(got.EvidenceSubmittedAt == nil) != (want.EvidenceSubmittedAt == nil) || (got.ClosedAt == nil) != (want.ClosedAt == nil) {
				t.Fatalf("dispute %d: %+v; dashboard %+v", n, got, want)
			}
			if answered := n == 2; got.PastDue == answered || (answered && got.EvidenceSubmittedAt == nil) {
				t.Fatalf("dispute %d (answered %v): past_due %v, evidence_submitted_at %v", n, answered, got.PastDue, got.EvidenceSubmittedAt)
			}
		}
	})

	harness.Rule(t, "D11", "subscriptions: every status with its period end, newest first, the app event's shape, money lower case, ISO 8601 UTC; paged; the other environment's and another merchant's are not listed", func(t *testing.T) {
		t.Parallel()
		m, other := newMerchant(t, true), newMerchant(t, true)
		i := appInstall(t, m, "subscriptions:read")
		clockFreeze(t, m.Test)
		pr := subPrice(t, m, 900, nil)
		var subs []api.Subscription // newest first
		for n := range 3 {
			b := subBody(pr.Id)
			b["quantity"], b["metadata"] = n+1, map[string]string{"n": string(rune('a' + n))}
			subs = append([]api.Subscription{subCreate(t, m, b)}, subs...)
		}
		canceled := catDecode[api.Subscription](t, catPost(t, m.TestKey, "/v1/subscriptions/"+subs[1].Id+"/cancel",
			map[string]any{"at_period_end": false}))
		foreign := subCreate(t, other, subBody(subPrice(t, other, 500, nil).Id))
		livePrice := catCreatePrice(t, m.Live, catProduct(t, m.Live, "Live plan").Id, api.PriceCreate{Currency: "eur", UnitAmount: 900,
			Recurring: &api.RecurringParams{Interval: "month"}})
		live := catDecode[api.Subscription](t, catPost(t, m.LiveKey, "/v1/subscriptions", subBody(livePrice.Id)))

		c := appClient(t, i.TestToken)
		r, err := c.ListSubscriptionsWithResponse(ctx, nil)
		if err != nil || r.JSON200 == nil || len(r.JSON200.Data) != 3 || r.JSON200.HasMore {
			t.Fatalf("list: %v %s", err, r.Body)
		}
		ids := make([]string, len(subs))
		for n, want := range subs {
			ids[n] = want.Id
			if n == 1 {
				want = canceled
			}
			got := r.JSON200.Data[n]
			if got.Id != want.Id || got.Object != appapi.SubscriptionObjectSubscription || string(got.Status) != string(want.Status) ||
				got.Customer != want.Customer || got.PriceId != want.PriceId || int64(got.Quantity) != want.Quantity ||
				got.Amount != (appapi.Money{Amount: want.Amount, Currency: "eur"}) ||
				got.CurrentPeriodStart.Unix() != want.CurrentPeriodStart || got.CurrentPeriodEnd.Unix() != want.CurrentPeriodEnd ||
				(got.TrialEnd == nil) != (want.TrialEnd == nil) || got.CancelAtPeriodEnd != want.CancelAtPeriodEnd ||
				(got.CanceledAt == nil) != (want.CanceledAt == nil) || (got.EndedAt == nil) != (want.EndedAt == nil) ||
				got.Metadata["n"] != want.Metadata["n"] || got.Created.Unix() != want.Created {
				t.Fatalf("subscription %d: %+v; merchant API %+v", n, got, want)
			}
			if got.Id == foreign.Id {
				t.Fatalf("another merchant's subscription %s is listed", foreign.Id)
			}
		}
		if got := r.JSON200.Data[1]; got.Status != appapi.SubscriptionStatusCanceled || got.EndedAt == nil || got.CanceledAt == nil {
			t.Fatalf("canceled subscription %+v", got)
		}
		if got := r.JSON200.Data[0]; got.Status != appapi.SubscriptionStatusIncomplete || got.Amount.Amount != 2700 {
			t.Fatalf("newest subscription %+v", got)
		}
		appWantTimes(t, r.Body, []string{"created", "current_period_start", "current_period_end", "trial_end", "canceled_at", "ended_at"},
			"trial_end", "canceled_at", "ended_at")
		// The app event's object: exactly these fields.
		var raw struct {
			Data []map[string]any `json:"data"`
		}
		_ = json.Unmarshal(r.Body, &raw)
		keys := make([]string, 0, len(raw.Data[0]))
		for k := range raw.Data[0] {
			keys = append(keys, k)
		}
		if len(keys) != 15 {
			t.Fatalf("subscription fields %v", keys)
		}
		appWantPaging(t, i.TestToken, "/v1/subscriptions", ids)
		if got, _ := appListIDs(t, i.LiveToken, "/v1/subscriptions"); len(got) != 1 || got[0] != live.Id {
			t.Fatalf("the live token lists %v, want only the live subscription %s", got, live.Id)
		}
		if got, _ := appListIDs(t, appInstall(t, other, "subscriptions:read").TestToken, "/v1/subscriptions"); len(got) != 1 || got[0] != foreign.Id {
			t.Fatalf("the other merchant lists %v, want only %s", got, foreign.Id)
		}
	})

	harness.Rule(t, "4.5", "disputes and subscriptions ignore unknown query parameters", func(t *testing.T) {
		t.Parallel()
		i := appInstall(t, newMerchant(t, false))
		for _, p := range []string{"/v1/disputes?status=lost&created[gte]=1", "/v1/subscriptions?status=active&customer=cus_x&limit=2"} {
			if r := appRaw(t, http.MethodGet, p, i.TestToken); r.Status != 200 {
				t.Fatalf("%s: %d %s", p, r.Status, r.Body)
			}
		}
	})
}
