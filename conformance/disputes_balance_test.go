package conformance

import (
	"testing"

	"github.com/kassa-pay/kassa/conformance/harness"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
)

// balanceTotal is o's EUR balance, available and pending together (what a dispute moves does
// not depend on whether the payment's funds were released yet).
func balanceTotal(t *testing.T, o *DashOwner) int64 {
	t.Helper()
	a, p := balanceOf(t, o, "EUR")
	return a + p
}

func TestDisputeBalance(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "D16", "opening a dispute debits the balance by the disputed amount and the 15.00 EUR dispute fee", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		_, paymentID, d := disputed(t, o)
		fee := paymentDetail(t, o, paymentID).Payment.Fee.ServiceFeeChargeCurrency
		if got, want := balanceTotal(t, o), int64(2500)-fee-2500-1500; got != want {
			t.Fatalf("balance after the dispute opened: %d, want %d", got, want)
		}
		l := balanceTxns(t, o, dash.ListBalanceTransactionsParams{Source: &d.Id})
		if len(l.Data) != 2 || l.Data[0].Type != "dispute_fee" || l.Data[0].Fee != 1500 || l.Data[0].Net != -1500 ||
			l.Data[1].Type != "dispute" || l.Data[1].Amount != -2500 || l.Data[1].Net != -2500 {
			t.Fatalf("dispute transactions %+v", l.Data)
		}
	})

	harness.Rule(t, "D16", "a won dispute returns the disputed amount and the dispute fee to the balance", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		_, paymentID, d := disputed(t, o)
		fee := paymentDetail(t, o, paymentID).Payment.Fee.ServiceFeeChargeCurrency
		evidenceOK(t, o, d.Id, "delivery confirmed, winning_evidence attached", true)
		clockAdvance(t, o.Test, day)
		if got := getDispute(t, o, d.Id); got.Status != "won" {
			t.Fatalf("dispute %s, want won", got.Status)
		}
		if got, want := balanceTotal(t, o), int64(2500)-fee; got != want {
			t.Fatalf("balance after the dispute was won: %d, want %d", got, want)
		}
		l := balanceTxns(t, o, dash.ListBalanceTransactionsParams{Source: &d.Id})
		if len(l.Data) != 3 || l.Data[0].Type != "dispute_reversal" || l.Data[0].Amount != 2500 || l.Data[0].Fee != -1500 ||
			l.Data[0].Net != 4000 {
			t.Fatalf("dispute transactions after winning %+v", l.Data)
		}
	})

	harness.Rule(t, "D16", "a lost dispute keeps the disputed amount and the dispute fee debited", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		_, paymentID, d := disputed(t, o)
		fee := paymentDetail(t, o, paymentID).Payment.Fee.ServiceFeeChargeCurrency
		evidenceOK(t, o, d.Id, "tracking number 42", true)
		clockAdvance(t, o.Test, day)
		if got := getDispute(t, o, d.Id); got.Status != "lost" {
			t.Fatalf("dispute %s, want lost", got.Status)
		}
		if got, want := balanceTotal(t, o), int64(2500)-fee-2500-1500; got != want {
			t.Fatalf("balance after the dispute was lost: %d, want %d", got, want)
		}
		if l := balanceTxns(t, o, dash.ListBalanceTransactionsParams{Source: &d.Id}); len(l.Data) != 2 {
			t.Fatalf("dispute transactions after losing %+v", l.Data)
		}
	})
}
