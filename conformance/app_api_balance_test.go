package conformance

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/conformance/harness"
	"github.com/kassa-pay/kassa/openapi/gen/appapi"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
	op "github.com/kassa-pay/kassa/openapi/gen/operatorapi"
)

// The App API's balance and payouts (interface 4.5, D11, D16, D17): scope payouts:read, which
// only a reviewed app can hold; one shape in both environments, money lower case, dates
// YYYY-MM-DD; the other environment's and another merchant's money are never shown.

// appInstallReviewed registers a reviewed app with every scope, payouts:read too, and installs
// it on m with scopes (none: all of them) through the operator API.
func appInstallReviewed(t *testing.T, m *Merchant, scopes ...op.AppScope) *op.InstallationCreated {
	t.Helper()
	ctx := context.Background()
	a, err := operator(t).CreateAppWithResponse(ctx, op.AppCreate{Name: "Reviewed conformance app",
		RedirectUris: []string{"https://app.example/cb"}, Scopes: append([]op.AppScope{"payouts:read"}, appAllScopes...), Reviewed: ptr(true)})
	if err != nil {
		t.Fatal(err)
	}
	if a.JSON201 == nil {
		t.Fatalf("create app: %d %s", a.StatusCode(), a.Body)
	}
	body := op.InstallationCreate{MerchantId: m.ID}
	if len(scopes) > 0 {
		body.Scopes = &scopes
	}
	i, err := operator(t).CreateInstallationWithResponse(ctx, a.JSON201.Id, body)
	if err != nil {
		t.Fatal(err)
	}
	if i.JSON201 == nil {
		t.Fatalf("install: %d %s", i.StatusCode(), i.Body)
	}
	return i.JSON201
}

// appBalance reads the balance with token.
func appBalance(t *testing.T, token string) *appapi.Balance {
	t.Helper()
	r, err := appClient(t, token).GetBalanceWithResponse(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if r.JSON200 == nil {
		t.Fatalf("balance: %d %s", r.StatusCode(), r.Body)
	}
	return r.JSON200
}

// wantAppBalance checks that the balance lists exactly one currency, eur, with avail and pending.
func wantAppBalance(t *testing.T, step string, b *appapi.Balance, avail, pending int64) {
	t.Helper()
	if b.Object != appapi.BalanceObjectBalance || len(b.Available) != 1 || len(b.Pending) != 1 ||
		b.Available[0] != (appapi.Money{Amount: avail, Currency: "eur"}) || b.Pending[0] != (appapi.Money{Amount: pending, Currency: "eur"}) {
		t.Fatalf("%s: balance %+v, want available %d eur and pending %d eur", step, b, avail, pending)
	}
}

// appPayoutClock freezes o's test clock at least an hour before a midnight and answers its now.
func appPayoutClock(t *testing.T, o *DashOwner) int64 {
	t.Helper()
	now := clockFreeze(t, o.Test)
	if untilMidnight(now) < 3600 {
		now = clockAdvance(t, o.Test, untilMidnight(now)+3600).Now
	}
	return now
}

func TestAppAPIBalancePayouts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	harness.Rule(t, "4.5", "balance and payouts answer with payouts:read (a reviewed app's) and 403 insufficient_scope naming it without", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, false)
		reviewed := appInstallReviewed(t, m)
		only := appInstallReviewed(t, m, "payouts:read")
		// Every other scope, even from the reviewed app, is not enough.
		without := appInstallReviewed(t, m, appAllScopes...)
		unreviewed := appInstall(t, m)
		for _, p := range []string{"/v1/balance", "/v1/payouts"} {
			for _, i := range []*op.InstallationCreated{without, unreviewed} {
				wantAppError(t, appRaw(t, http.MethodGet, p, i.TestToken), 403, "insufficient_scope", "payouts:read")
				wantAppError(t, appRaw(t, http.MethodGet, p, i.LiveToken), 403, "insufficient_scope", "payouts:read")
			}
			for _, i := range []*op.InstallationCreated{reviewed, only} {
				for _, tok := range []string{i.TestToken, i.LiveToken} {
					if r := appRaw(t, http.MethodGet, p, tok); r.Status != 200 {
						t.Fatalf("%s with payouts:read: %d %s", p, r.Status, r.Body)
					}
				}
			}
		}
		// A merchant without money: no currency, no payouts.
		for _, tok := range []string{only.TestToken, only.LiveToken} {
			if b := appBalance(t, tok); b.Object != "balance" || len(b.Available) != 0 || len(b.Pending) != 0 {
				t.Fatalf("balance of a merchant without money: %+v", b)
			}
			if ids, more := appListIDs(t, tok, "/v1/payouts"); len(ids) != 0 || more {
				t.Fatalf("payouts of a merchant without any: %v %v", ids, more)
			}
		}
	})

	harness.Rule(t, "D16", "balance: a test payment is pending, then available when the test clock reaches its available date; money lower case; the other environment's and another merchant's money is not counted", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o, other := newDashOwner(t), newDashOwner(t)
		i := appInstallReviewed(t, o.Merchant, "payouts:read")
		appPayoutClock(t, o)
		dashPay(t, other.Merchant, 9900, "eur", payCardInstant)
		s := dashPay(t, o.Merchant, 2500, "eur", payCardOK) // pending two days
		net := 2500 - s.Payment.Fee.ServiceFeeChargeCurrency

		r := appRaw(t, http.MethodGet, "/v1/balance", i.TestToken)
		var raw map[string]any
		if err := json.Unmarshal(r.Body, &raw); err != nil || r.Status != 200 || len(raw) != 3 {
			t.Fatalf("balance %d %v %s", r.Status, err, r.Body)
		}
		wantAppBalance(t, "after the payment", appBalance(t, i.TestToken), 0, net)
		if a, p := balanceOf(t, o, "EUR"); a != 0 || p != net {
			t.Fatalf("dashboard balance %d %d, want 0 %d", a, p, net)
		}
		if b := appBalance(t, i.LiveToken); len(b.Available) != 0 || len(b.Pending) != 0 {
			t.Fatalf("the live token shows sandbox money: %+v", b)
		}

		// Two days later (before a third midnight, so no payout took it yet) it is available.
		clockAdvance(t, o.Test, 2*day-1)
		wantAppBalance(t, "a second before the available date", appBalance(t, i.TestToken), 0, net)
		clockAdvance(t, o.Test, 61)
		wantAppBalance(t, "at the available date", appBalance(t, i.TestToken), net, 0)
		if a, p := balanceOf(t, o, "EUR"); a != net || p != 0 {
			t.Fatalf("dashboard balance %d %d, want %d 0", a, p, net)
		}
		if b := appBalance(t, i.LiveToken); len(b.Available) != 0 || len(b.Pending) != 0 {
			t.Fatalf("the live token shows sandbox money: %+v", b)
		}
	})

	harness.Rule(t, "D16", "payouts: one per daily run at 00:00 UTC of the test clock, newest first, money lower case, arrival_date YYYY-MM-DD, created ISO 8601 UTC, pending then paid; paged; the other environment's and another merchant's are not listed", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o, other := newDashOwner(t), newDashOwner(t)
		i := appInstallReviewed(t, o.Merchant, "payouts:read")
		now := appPayoutClock(t, o)
		var ids []string // newest first
		var nets []int64
		for n := range 3 {
			s := dashPay(t, o.Merchant, int64(1000+n*100), "eur", payCardInstant)
			now = clockAdvance(t, o.Test, untilMidnight(now)).Now
			ps := payoutList(t, o, dash.DashboardEnvironmentTest)
			if len(ps) != n+1 {
				t.Fatalf("payouts after midnight %d: %+v", n+1, ps)
			}
			ids, nets = append([]string{ps[0].Id}, ids...), append([]int64{int64(1000+n*100) - s.Payment.Fee.ServiceFeeChargeCurrency}, nets...)
		}
		// Another merchant's payout.
		otherNow := appPayoutClock(t, other)
		dashPay(t, other.Merchant, 5000, "eur", payCardInstant)
		clockAdvance(t, other.Test, untilMidnight(otherNow))
		foreign := payoutList(t, other, dash.DashboardEnvironmentTest)
		if len(foreign) != 1 {
			t.Fatalf("the other merchant's payouts %+v", foreign)
		}

		c := appClient(t, i.TestToken)
		r, err := c.ListPayoutsWithResponse(ctx, nil)
		if err != nil || r.JSON200 == nil || len(r.JSON200.Data) != 3 || r.JSON200.HasMore {
			t.Fatalf("list: %v %s", err, r.Body)
		}
		dps := payoutList(t, o, dash.DashboardEnvironmentTest)
		for n, p := range r.JSON200.Data {
			want := dps[n]
			if p.Id != ids[n] || p.Id != want.Id || p.Object != appapi.PayoutObjectPayout || p.Amount != (appapi.Money{Amount: nets[n], Currency: "eur"}) ||
				want.Amount != nets[n] || p.Status != appapi.PayoutStatus(want.Status) ||
				p.ArrivalDate.Format("2006-01-02") != time.Unix(want.ArrivalDate, 0).UTC().Format("2006-01-02") ||
				p.Created.Unix() != want.Created || p.Created.Unix()%day != 0 {
				t.Fatalf("payout %d: %+v; dashboard %+v", n, p, want)
			}
			if p.Id == foreign[0].Id {
				t.Fatalf("another merchant's payout %s is listed", p.Id)
			}
		}
		if r.JSON200.Data[0].Status != "pending" || r.JSON200.Data[2].Status != "paid" {
			t.Fatalf("statuses %s (newest) and %s (two days old)", r.JSON200.Data[0].Status, r.JSON200.Data[2].Status)
		}
		var raw struct {
			Data []map[string]any `json:"data"`
		}
		if _ = json.Unmarshal(r.Body, &raw); len(raw.Data[0]) != 6 {
			t.Fatalf("payout fields %v", raw.Data[0])
		}
		if s, _ := raw.Data[0]["arrival_date"].(string); !appDate.MatchString(s) {
			t.Fatalf("arrival_date %v, want YYYY-MM-DD", raw.Data[0]["arrival_date"])
		}
		appWantTimes(t, r.Body, []string{"created"})
		appWantPaging(t, i.TestToken, "/v1/payouts", ids)
		if got, more := appListIDs(t, i.LiveToken, "/v1/payouts"); len(got) != 0 || more {
			t.Fatalf("the live token lists sandbox payouts %v", got)
		}
		wantAppBalance(t, "after the payouts", appBalance(t, i.TestToken), 0, 0)

		// Two days after the last run every payout arrived.
		clockAdvance(t, o.Test, 2*day)
		r, err = c.ListPayoutsWithResponse(ctx, &appapi.ListPayoutsParams{Limit: ptr(100)})
		if err != nil || r.JSON200 == nil || len(r.JSON200.Data) != 3 {
			t.Fatalf("list after arrival: %v %s", err, r.Body)
		}
		for _, p := range r.JSON200.Data {
			if p.Status != appapi.PayoutStatusPaid {
				t.Fatalf("payout %s after its arrival date: %s", p.Id, p.Status)
			}
		}
	})
}
