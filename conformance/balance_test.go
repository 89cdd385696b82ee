package conformance

import (
	"context"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/kassa-pay/kassa/conformance/harness"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
)

func init() {
	sectionTitles["BALANCE"] = "balance and balance transactions (dashboard)"
}

// fundsDelay is how long card funds, and SEPA funds after settlement, are pending (D7).
const fundsDelay = 2 * 24 * 3600

// balanceOf reads the dashboard balance of o's test environment in cur: available, pending.
func balanceOf(t *testing.T, o *DashOwner, cur string) (int64, int64) {
	t.Helper()
	b := balanceRead(t, o, dash.DashboardEnvironmentTest)
	var avail, pending int64
	for _, a := range b.Available {
		if a.Currency == cur {
			avail = a.Amount
		}
	}
	for _, p := range b.Pending {
		if p.Currency == cur {
			pending = p.Amount
		}
	}
	return avail, pending
}

func balanceRead(t *testing.T, o *DashOwner, env dash.DashboardEnvironment) *dash.Balance {
	t.Helper()
	r, err := o.Client.GetBalanceWithResponse(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	if r.JSON200 == nil {
		t.Fatalf("balance: %d %s", r.StatusCode(), r.Body)
	}
	return r.JSON200
}

// wantBalance checks o's EUR balance.
func wantBalance(t *testing.T, o *DashOwner, step string, avail, pending int64) {
	t.Helper()
	if a, p := balanceOf(t, o, "EUR"); a != avail || p != pending {
		t.Fatalf("%s: available %d pending %d, want %d %d", step, a, p, avail, pending)
	}
}

// balanceTxns lists o's balance transactions with params.
func balanceTxns(t *testing.T, o *DashOwner, params dash.ListBalanceTransactionsParams) *dash.BalanceTransactionList {
	t.Helper()
	r, err := o.Client.ListBalanceTransactionsWithResponse(context.Background(), dash.DashboardEnvironmentTest, &params)
	if err != nil {
		t.Fatal(err)
	}
	if r.JSON200 == nil {
		t.Fatalf("balance transactions: %d %s", r.StatusCode(), r.Body)
	}
	return r.JSON200
}

func TestBalance(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	harness.Rule(t, "BALANCE", "a card payment is pending net of its fee for two days of the test clock, then available", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		start := clockFreeze(t, o.Test)
		s := dashPay(t, o.Merchant, 2500, "eur", payCardOK)
		fee := s.Payment.Fee.ServiceFeeChargeCurrency
		wantBalance(t, o, "after the payment", 0, 2500-fee)
		l := balanceTxns(t, o, dash.ListBalanceTransactionsParams{Payment: &s.Payment.Id})
		if len(l.Data) != 1 {
			t.Fatalf("transactions of the payment: %+v", l.Data)
		}
		x := l.Data[0]
		if x.Type != "payment" || x.Amount != 2500 || x.Fee != fee || x.Net != 2500-fee || x.Status != "pending" ||
			x.Source != s.Payment.Id || x.Payment == nil || *x.Payment != s.Payment.Id || x.Created != start ||
			x.AvailableOn != start+fundsDelay || x.Payout != nil || !strings.HasPrefix(x.Id, "txn_") {
			t.Fatalf("payment transaction %+v (fee %d, clock %d)", x, fee, start)
		}
		clockAdvance(t, o.Test, fundsDelay-1)
		wantBalance(t, o, "one second before two days", 0, 2500-fee)
		clockAdvance(t, o.Test, 1)
		wantBalance(t, o, "at two days", 2500-fee, 0)
		if x := balanceTxns(t, o, dash.ListBalanceTransactionsParams{Payment: &s.Payment.Id}).Data[0]; x.Status != "available" {
			t.Fatalf("after two days: %+v", x)
		}
	})

	harness.Rule(t, "BALANCE", "funds of 4000000000000077 are available at once", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		clockFreeze(t, o.Test)
		s := dashPay(t, o.Merchant, 2500, "eur", payCardInstant)
		fee := s.Payment.Fee.ServiceFeeChargeCurrency
		wantBalance(t, o, "after the payment", 2500-fee, 0)
	})

	harness.Rule(t, "BALANCE", "a refund debits the available balance at once and its fee reversal credits it back", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		clockFreeze(t, o.Test)
		s := dashPay(t, o.Merchant, 2500, "eur", payCardOK)
		fee := s.Payment.Fee.ServiceFeeChargeCurrency
		rf := refundOK(t, o, s.Payment.Id, ptr(int64(1000)))
		back := rf.FeeReversed.ServiceFeeChargeCurrency
		wantBalance(t, o, "after the refund", -1000+back, 2500-fee)
		l := balanceTxns(t, o, dash.ListBalanceTransactionsParams{Source: &rf.Id})
		if len(l.Data) != 2 || l.Data[0].Type != "fee_reversal" || l.Data[0].Fee != -back || l.Data[0].Net != back ||
			l.Data[1].Type != "refund" || l.Data[1].Amount != -1000 || l.Data[1].Net != -1000 || l.Data[1].Status != "available" {
			t.Fatalf("refund transactions %+v", l.Data)
		}
		clockAdvance(t, o.Test, fundsDelay)
		wantBalance(t, o, "two days later", 2500-fee-1000+back, 0)
		// The payment page shows the payment's ledger entries, newest first.
		d := paymentDetail(t, o, s.Payment.Id)
		var types []string
		for _, x := range d.BalanceTransactions {
			types = append(types, string(x.Type))
		}
		if strings.Join(types, ",") != "fee_reversal,refund,payment" {
			t.Fatalf("payment page ledger entries: %v", types)
		}
	})

	harness.Rule(t, "BALANCE", "SEPA funds are pending from settlement and available two days after it", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		clockFreeze(t, o.Test)
		s := asyncPay(t, o.Merchant, payIBANOK)
		wantBalance(t, o, "while processing", 0, 0)
		clockAdvance(t, o.Test, asyncSettleDelay)
		p := asyncPayment(t, o.Merchant, s.Id)
		if p.Status != "succeeded" {
			t.Fatalf("not settled: %s", p.Status)
		}
		net := p.Amount - p.Fee.ServiceFeeChargeCurrency
		wantBalance(t, o, "settled", 0, net)
		clockAdvance(t, o.Test, fundsDelay-1)
		wantBalance(t, o, "one second before two days after settlement", 0, net)
		clockAdvance(t, o.Test, 1)
		wantBalance(t, o, "two days after settlement", net, 0)
	})

	harness.Rule(t, "BALANCE", "balance transactions filter by type and export as CSV", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		clockFreeze(t, o.Test)
		a := dashPay(t, o.Merchant, 2500, "eur", payCardOK)
		b := dashPay(t, o.Merchant, 1800, "eur", payCardOK)
		refundOK(t, o, b.Payment.Id, nil)
		typ := "payment"
		l := balanceTxns(t, o, dash.ListBalanceTransactionsParams{Type: &typ})
		if len(l.Data) != 2 || l.Data[0].Source != b.Payment.Id || l.Data[1].Source != a.Payment.Id {
			t.Fatalf("payments %+v", l.Data)
		}
		one := 1
		p1 := balanceTxns(t, o, dash.ListBalanceTransactionsParams{Limit: &one})
		p2 := balanceTxns(t, o, dash.ListBalanceTransactionsParams{Limit: &one, StartingAfter: &p1.Data[0].Id})
		if !p1.HasMore || len(p2.Data) != 1 || p2.Data[0].Id == p1.Data[0].Id {
			t.Fatalf("paging: %+v then %+v", p1, p2)
		}
		r, err := o.Client.ExportBalanceTransactionsWithResponse(ctx, dash.DashboardEnvironmentTest, &dash.ExportBalanceTransactionsParams{})
		if err != nil || r.StatusCode() != 200 {
			t.Fatalf("export: %v %d %s", err, r.StatusCode(), r.Body)
		}
		if ct := r.HTTPResponse.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/csv") {
			t.Fatalf("content type %q", ct)
		}
		rows, err := csv.NewReader(strings.NewReader(string(r.Body))).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		all := balanceTxns(t, o, dash.ListBalanceTransactionsParams{})
		if len(rows) != len(all.Data)+1 || strings.Join(rows[0], ",") != "id,type,amount,fee,net,currency,status,available_on,created,source,payment,payout" {
			t.Fatalf("csv %v for %d transactions", rows, len(all.Data))
		}
		for i, x := range all.Data {
			if rows[i+1][0] != x.Id || rows[i+1][1] != string(x.Type) {
				t.Fatalf("csv row %d %v, want %s", i+1, rows[i+1], x.Id)
			}
		}
		bad := "bonus"
		rr, err := o.Client.ListBalanceTransactionsWithResponse(ctx, dash.DashboardEnvironmentTest, &dash.ListBalanceTransactionsParams{Type: &bad})
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, rr, rr.HTTPResponse, rr.Body, 400, "invalid_request", "type_invalid", "type")
	})

	harness.Rule(t, "BALANCE", "balances and balance transactions are isolated per merchant and environment; a foreign id is unknown", func(t *testing.T) {
		t.Parallel()
		o, other := newDashOwner(t), newDashOwner(t)
		s := dashPay(t, o.Merchant, 2500, "eur", payCardOK)
		mine := balanceTxns(t, o, dash.ListBalanceTransactionsParams{})
		if len(mine.Data) != 1 {
			t.Fatalf("own transactions %+v", mine.Data)
		}
		if b := balanceRead(t, other, dash.DashboardEnvironmentTest); len(b.Available) != 0 || len(b.Pending) != 0 {
			t.Fatalf("another merchant's balance %+v", b)
		}
		if b := balanceRead(t, o, dash.DashboardEnvironmentLive); len(b.Available) != 0 || len(b.Pending) != 0 {
			t.Fatalf("live balance %+v", b)
		}
		if l := balanceTxns(t, other, dash.ListBalanceTransactionsParams{Payment: &s.Payment.Id}); len(l.Data) != 0 {
			t.Fatalf("another merchant sees %+v", l.Data)
		}
		r, err := other.Client.ListBalanceTransactionsWithResponse(ctx, dash.DashboardEnvironmentTest,
			&dash.ListBalanceTransactionsParams{StartingAfter: &mine.Data[0].Id})
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, r, r.HTTPResponse, r.Body, 400, "invalid_request", "starting_after_invalid", "starting_after")
		lr, err := o.Client.ListBalanceTransactionsWithResponse(ctx, dash.DashboardEnvironmentLive, &dash.ListBalanceTransactionsParams{})
		if err != nil || lr.JSON200 == nil || len(lr.JSON200.Data) != 0 {
			t.Fatalf("live transactions: %v %s", err, lr.Body)
		}
	})
}
