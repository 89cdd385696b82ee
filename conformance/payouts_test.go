package conformance

import (
	"context"
	"testing"

	"github.com/kassa-pay/kassa/conformance/harness"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
)

func init() {
	sectionTitles["PAYOUT"] = "payouts (dashboard)"
}

// untilMidnight is how many seconds from unix time now to the next 00:00 UTC.
func untilMidnight(now int64) int64 { return day - now%day }

func payoutList(t *testing.T, o *DashOwner, env dash.DashboardEnvironment) []dash.Payout {
	t.Helper()
	r, err := o.Client.ListPayoutsWithResponse(context.Background(), env, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.JSON200 == nil {
		t.Fatalf("payouts: %d %s", r.StatusCode(), r.Body)
	}
	return r.JSON200.Data
}

func payoutDetail(t *testing.T, o *DashOwner, id string) *dash.PayoutDetail {
	t.Helper()
	r, err := o.Client.GetPayoutWithResponse(context.Background(), dash.DashboardEnvironmentTest, id)
	if err != nil {
		t.Fatal(err)
	}
	if r.JSON200 == nil {
		t.Fatalf("payout %s: %d %s", id, r.StatusCode(), r.Body)
	}
	return r.JSON200
}

func TestPayouts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	harness.Rule(t, "PAYOUT", "the daily payout runs at 00:00 UTC of the test clock for the whole available balance, and is paid two days later", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		now := clockFreeze(t, o.Test)
		if untilMidnight(now) < 120 {
			now = clockAdvance(t, o.Test, untilMidnight(now)+3600).Now
		}
		s := dashPay(t, o.Merchant, 2500, "eur", payCardInstant)
		net := 2500 - s.Payment.Fee.ServiceFeeChargeCurrency
		b := balanceRead(t, o, dash.DashboardEnvironmentTest)
		midnight := now + untilMidnight(now)
		if !b.Payouts.Enabled || b.Payouts.NextPayoutAt == nil || *b.Payouts.NextPayoutAt != midnight {
			t.Fatalf("payout schedule %+v, want the next at %d", b.Payouts, midnight)
		}
		clockAdvance(t, o.Test, untilMidnight(now)-1)
		if ps := payoutList(t, o, dash.DashboardEnvironmentTest); len(ps) != 0 {
			t.Fatalf("payouts one second before midnight: %+v", ps)
		}
		clockAdvance(t, o.Test, 1)
		ps := payoutList(t, o, dash.DashboardEnvironmentTest)
		if len(ps) != 1 {
			t.Fatalf("payouts at midnight: %+v", ps)
		}
		p := ps[0]
		if p.Amount != net || p.Currency != "EUR" || p.Status != "pending" || p.Created != midnight || p.ArrivalDate != midnight+2*day {
			t.Fatalf("payout %+v, want %d EUR at %d", p, net, midnight)
		}
		wantBalance(t, o, "after the payout", 0, 0)
		asyncOne(t, o.Merchant, "payout.created", "id", p.Id)
		clockAdvance(t, o.Test, 2*day-1)
		if d := payoutDetail(t, o, p.Id); d.Payout.Status != "pending" {
			t.Fatalf("a second before arrival: %s", d.Payout.Status)
		}
		clockAdvance(t, o.Test, 1)
		if d := payoutDetail(t, o, p.Id); d.Payout.Status != "paid" {
			t.Fatalf("at arrival: %s", d.Payout.Status)
		}
		asyncOne(t, o.Merchant, "payout.paid", "id", p.Id)
		if ps := payoutList(t, o, dash.DashboardEnvironmentTest); len(ps) != 1 {
			t.Fatalf("later midnights made more payouts: %+v", ps)
		}
	})

	harness.Rule(t, "PAYOUT", "a payout settles balance transactions whose nets sum to its amount; pending funds wait for a later payout", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		now := clockFreeze(t, o.Test)
		if untilMidnight(now) < 120 {
			now = clockAdvance(t, o.Test, untilMidnight(now)+3600).Now
		}
		a := dashPay(t, o.Merchant, 2500, "eur", payCardInstant)
		b := dashPay(t, o.Merchant, 1800, "eur", payCardInstant)
		c := dashPay(t, o.Merchant, 4000, "eur", payCardOK) // pending two days
		refundOK(t, o, b.Payment.Id, ptr(int64(800)))
		clockAdvance(t, o.Test, untilMidnight(now))
		ps := payoutList(t, o, dash.DashboardEnvironmentTest)
		if len(ps) != 1 {
			t.Fatalf("payouts %+v", ps)
		}
		d := payoutDetail(t, o, ps[0].Id)
		var sum int64
		for _, x := range d.BalanceTransactions {
			sum += x.Net
			if x.Payout == nil || *x.Payout != ps[0].Id || x.Status != "available" || x.Type == "payout" {
				t.Fatalf("settled transaction %+v", x)
			}
			if x.Source == c.Payment.Id {
				t.Fatalf("pending funds paid out: %+v", x)
			}
		}
		if sum != ps[0].Amount || len(d.BalanceTransactions) != 4 {
			t.Fatalf("payout %d settles %d transactions summing to %d", ps[0].Amount, len(d.BalanceTransactions), sum)
		}
		_ = a
		// The payout's own transaction moves its amount out of the available balance.
		typ := "payout"
		own := balanceTxns(t, o, dash.ListBalanceTransactionsParams{Type: &typ})
		if len(own.Data) != 1 || own.Data[0].Net != -ps[0].Amount || own.Data[0].Source != ps[0].Id {
			t.Fatalf("payout transactions %+v", own.Data)
		}
		// Filtered by payout, the CSV export lists the same transactions.
		r, err := o.Client.ExportBalanceTransactionsWithResponse(ctx, dash.DashboardEnvironmentTest,
			&dash.ExportBalanceTransactionsParams{Payout: &ps[0].Id})
		if err != nil || r.StatusCode() != 200 {
			t.Fatalf("export: %v %d", err, r.StatusCode())
		}
		if lines := len(splitLines(string(r.Body))); lines != 5 {
			t.Fatalf("payout CSV has %d lines, want 5:\n%s", lines, r.Body)
		}
		// The card payment becomes available two days later and goes out with the next run.
		clockAdvance(t, o.Test, 2*day)
		ps = payoutList(t, o, dash.DashboardEnvironmentTest)
		if len(ps) != 2 || ps[0].Amount != 4000-c.Payment.Fee.ServiceFeeChargeCurrency {
			t.Fatalf("second payout %+v", ps)
		}
	})

	harness.Rule(t, "PAYOUT", "no payout for a currency whose available balance is not positive", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		now := clockFreeze(t, o.Test)
		if untilMidnight(now) < 120 {
			now = clockAdvance(t, o.Test, untilMidnight(now)+3600).Now
		}
		s := dashPay(t, o.Merchant, 2500, "eur", payCardOK) // pending
		refundOK(t, o, s.Payment.Id, nil)                   // the available balance goes negative
		clockAdvance(t, o.Test, untilMidnight(now))
		if ps := payoutList(t, o, dash.DashboardEnvironmentTest); len(ps) != 0 {
			t.Fatalf("payouts of a negative balance: %+v", ps)
		}
	})

	harness.Rule(t, "PAYOUT", "payouts are isolated per merchant and environment; a foreign payout id is 404; live makes no payouts without a live rail", func(t *testing.T) {
		t.Parallel()
		o, other := newDashOwner(t), newDashOwner(t)
		now := clockFreeze(t, o.Test)
		dashPay(t, o.Merchant, 2500, "eur", payCardInstant)
		clockAdvance(t, o.Test, untilMidnight(now))
		ps := payoutList(t, o, dash.DashboardEnvironmentTest)
		if len(ps) != 1 {
			t.Fatalf("payouts %+v", ps)
		}
		if l := payoutList(t, other, dash.DashboardEnvironmentTest); len(l) != 0 {
			t.Fatalf("another merchant sees %+v", l)
		}
		if l := payoutList(t, o, dash.DashboardEnvironmentLive); len(l) != 0 {
			t.Fatalf("live payouts %+v", l)
		}
		r, err := other.Client.GetPayoutWithResponse(ctx, dash.DashboardEnvironmentTest, ps[0].Id)
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, r, r.HTTPResponse, r.Body, 404, "not_found", "payout_not_found", "id")
		r, err = o.Client.GetPayoutWithResponse(ctx, dash.DashboardEnvironmentLive, ps[0].Id)
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, r, r.HTTPResponse, r.Body, 404, "not_found", "payout_not_found", "id")
		lb := balanceRead(t, o, dash.DashboardEnvironmentLive)
		if lb.Payouts.Enabled || lb.Payouts.NextPayoutAt != nil || lb.Payouts.Message == nil {
			t.Fatalf("live payout schedule %+v", lb.Payouts)
		}
	})
}

func splitLines(s string) []string {
	var out []string
	start := 0
	for i, c := range s {
		if c == '\n' {
			if i > start {
				out = append(out, s[start:i])
			}
			start = i + 1
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}
