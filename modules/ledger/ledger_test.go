package ledger

import (
	"errors"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
)

var scope = core.Scope{MerchantID: "mer_1", Env: core.EnvTest}

func sumByAccount(ps []Posting) map[Account]int64 {
	m := map[Account]int64{}
	for _, p := range ps {
		m[p.Source] -= p.Amount
		m[p.Destination] += p.Amount
	}
	return m
}

// Every type's postings balance, and move the merchant's balance by exactly the net.
func TestTransactionPostingsBalanceAndMoveTheNet(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		typ         Type
		amount, fee int64
		pending     bool
	}{
		{TypePayment, 10000, 205, true}, {TypePayment, 10000, 205, false}, {TypeFee, 0, 50, false},
		{TypeRefund, -5000, 0, false}, {TypeFeeReversal, 0, -90, false}, {TypeDispute, -5000, 0, false},
		{TypeDisputeFee, 0, 1500, false}, {TypeDisputeReversal, 5000, -1500, false}, {TypePayout, -7000, 0, false},
	}
	for _, c := range cases {
		avail := now
		if c.pending {
			avail = now.Add(48 * time.Hour)
		}
		tr, err := NewTransaction(scope, "EUR", c.typ, c.amount, c.fee, "src_1", "py_1", avail, now)
		if err != nil {
			t.Fatal(err)
		}
		m := sumByAccount(tr.Postings())
		var total int64
		for _, v := range m {
			total += v
		}
		if total != 0 {
			t.Errorf("%s: postings sum to %d", c.typ, total)
		}
		if got := m[Pending] + m[Available]; got != c.amount-c.fee || tr.Net() != got {
			t.Errorf("%s: merchant balance moves %d, net %d, want %d", c.typ, got, tr.Net(), c.amount-c.fee)
		}
		if c.pending != (m[Pending] != 0) || c.pending != (tr.Status() == StatusPending) {
			t.Errorf("%s: pending %v, postings %v", c.typ, c.pending, m)
		}
	}
	if _, err := NewTransaction(scope, "EUR", TypeRefund, -1, 0, "re_1", "py_1", now.Add(time.Hour), now); err == nil {
		t.Error("money out that waits to be available accepted")
	}
	if _, err := NewTransaction(scope, "EUR", TypePayout, 100, 0, "po_1", "", now, now); err == nil {
		t.Error("a payout that brings money in accepted")
	}
}

// The dispute fee is 15.00 EUR at the charge day's rate, half-up, in the currency's minor
// units.
func TestDisputeFeeAtTheChargeDayRate(t *testing.T) {
	for _, c := range []struct {
		cur  core.Currency
		rate string
		want int64
	}{{"EUR", "", 1500}, {"USD", "1.1625", 1744}, {"JPY", "162.51", 2438}, {"GBP", "0.8573", 1286}, {"USD", "1.1", 1650}} {
		got, err := DisputeFee(c.cur, c.rate)
		if err != nil || got != c.want {
			t.Errorf("%s at %s: %d %v, want %d", c.cur, c.rate, got, err, c.want)
		}
	}
	if _, err := DisputeFee("USD", "x"); err == nil {
		t.Error("bad rate accepted")
	}
}

// A balance that may not go negative refuses with balance_insufficient; world and available
// may go below zero.
func TestApplyRefusesANegativeBalanceNeverClamps(t *testing.T) {
	k := func(a Account) BalanceKey { return BalanceKey{Scope: scope, Currency: "EUR", Account: a} }
	locked := map[BalanceKey]int64{k(Fees): 10, k(Available): 0, k(World): 0, k(Pending): 5}
	if _, err := apply(map[BalanceKey]int64{k(Fees): -11, k(Available): 11}, locked); !errors.Is(err, ErrBalanceNegative) {
		t.Fatalf("fees below zero: %v", err)
	}
	if _, err := apply(map[BalanceKey]int64{k(Pending): -6, k(Available): 6}, locked); !errors.Is(err, ErrBalanceNegative) {
		t.Fatalf("pending below zero: %v", err)
	}
	got, err := apply(map[BalanceKey]int64{k(Available): -100, k(World): 100}, locked)
	if err != nil || got[k(Available)] != -100 {
		t.Fatalf("available below zero: %v %v", got, err)
	}
}

// Balance keys lock in one order (merchant, environment, currency, account) so that two units
// of work touching the same balances never deadlock.
func TestBalanceKeysLockInSortedOrder(t *testing.T) {
	deltas := map[BalanceKey]int64{}
	for _, c := range []core.Currency{"USD", "EUR"} {
		for _, a := range Accounts {
			deltas[BalanceKey{Scope: scope, Currency: c, Account: a}] = 1
		}
	}
	keys := sortedKeys(deltas)
	for i := 1; i < len(keys); i++ {
		if !keys[i-1].Less(keys[i]) {
			t.Fatalf("out of order at %d: %v", i, keys)
		}
	}
	if keys[0].Currency != "EUR" || keys[0].Account != Available {
		t.Fatalf("first %v", keys[0])
	}
}
