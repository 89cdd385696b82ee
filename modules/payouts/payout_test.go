package payouts

import (
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/ledger"
)

// A change at any moment of a day is paid out at the next 00:00 UTC; a change at exactly
// midnight waits for the following one (the run at that instant came first).
func TestRunIsTheFirstMidnightAfterTheChange(t *testing.T) {
	for _, c := range []struct{ changed, run string }{
		{"2026-03-02T10:00:00Z", "2026-03-03T00:00:00Z"},
		{"2026-03-02T23:59:59Z", "2026-03-03T00:00:00Z"},
		{"2026-03-03T00:00:00Z", "2026-03-04T00:00:00Z"},
	} {
		at, _ := time.Parse(time.RFC3339, c.changed)
		want, _ := time.Parse(time.RFC3339, c.run)
		if got := (ledger.PayoutDue{ChangedAt: at}).RunAt(); !got.Equal(want) {
			t.Errorf("changed %s: run %s, want %s", c.changed, got, want)
		}
	}
}

// A payout arrives two days after its run; it is paid only once the rail accepted it, and
// only once.
func TestPayoutTransitions(t *testing.T) {
	run := time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC)
	p := newPayout(core.Scope{MerchantID: "mer_1", Env: core.EnvTest}, "EUR", 9795, run)
	if !p.ArrivalDate().Equal(run.Add(48*time.Hour)) || p.Status() != StatusPending {
		t.Fatalf("new payout %+v", p.Snapshot())
	}
	if err := p.pay(); err == nil {
		t.Fatal("paid before the rail accepted it")
	}
	if err := p.markSent("", run); err == nil {
		t.Fatal("sent without a reference")
	}
	if err := p.markSent("sbpo_1", run); err != nil || !p.Sent() {
		t.Fatalf("sent: %v", err)
	}
	if err := p.markSent("sbpo_2", run); err != nil || p.RailRef() != "sbpo_1" {
		t.Fatalf("a second acceptance changed the reference: %v %s", err, p.RailRef())
	}
	if err := p.pay(); err != nil || p.Status() != StatusPaid {
		t.Fatalf("pay: %v", err)
	}
	if err := p.pay(); err == nil {
		t.Fatal("paid twice")
	}
}
