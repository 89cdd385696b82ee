package billing

import "testing"

func TestApplyBalance(t *testing.T) {
	cases := []struct {
		name                 string
		total, balance, want int64
		due                  int64
	}{
		{"no balance", 900, 0, 0, 900},
		{"credit smaller than the total, the rest above the minimum", 900, -286, 0, 614},
		{"credit covering the total exactly", 900, -900, 0, 0},
		{"credit larger than the total keeps the rest", 900, -1286, -386, 0},
		{"credit leaving less than the minimum is taken down to the minimum", 900, -800, -150, 250},
		{"credit on an invoice of the minimum is kept whole", 250, -100, -100, 250},
		{"debit is added", 900, 120, 0, 1020},
		{"debit stops at the maximum amount", 99_999_900, 120, 21, 99_999_999},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := ApplyBalance(c.total, c.balance)
			if got != c.want {
				t.Fatalf("ApplyBalance(%d, %d) = %d, want %d", c.total, c.balance, got, c.want)
			}
			in := InvoiceInput{Lines: []InvoiceLine{{Quantity: 1, UnitAmount: c.total}}, StartingBalance: c.balance, EndingBalance: got}
			if in.AmountDue() != c.due {
				t.Fatalf("amount due %d, want %d", in.AmountDue(), c.due)
			}
		})
	}
}

// A net proration put on a balance is a proration_credit when it is a credit, and otherwise
// the charge's reason its caller names: a plan change's charge below the minimum, or the
// charge of the lines a canceled subscription kept.
func TestProrationReason(t *testing.T) {
	for _, c := range []struct {
		net    int64
		charge string
		want   string
	}{
		{-857, BalanceProrationTooSmall, BalanceProrationCredit},
		{-857, BalanceProrationChargeAtCancel, BalanceProrationCredit},
		{120, BalanceProrationTooSmall, BalanceProrationTooSmall},
		{857, BalanceProrationChargeAtCancel, BalanceProrationChargeAtCancel},
	} {
		if got := prorationReason(c.net, c.charge); got != c.want {
			t.Errorf("prorationReason(%d, %s) = %s, want %s", c.net, c.charge, got, c.want)
		}
	}
}
