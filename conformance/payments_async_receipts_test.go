package conformance

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/conformance/harness"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
)

// receiptsIn polls the owner's test mailbox (the development mailbox: the suite's server has
// no SMTP server) until it holds want messages or timeout passes, and returns them newest first.
func receiptsIn(t *testing.T, o *DashOwner, want int, timeout time.Duration) []dash.MailboxMessage {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		resp, err := o.Client.ListMailboxWithResponse(context.Background(), &dash.ListMailboxParams{})
		if err != nil {
			t.Fatal(err)
		}
		if resp.JSON200 == nil {
			t.Fatalf("mailbox: %d %s", resp.StatusCode(), resp.Body)
		}
		if got := resp.JSON200.Data; len(got) >= want || time.Now().After(deadline) {
			return got
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestPaymentsAsyncReceipts(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "3.2", "a receipt goes to customer_email once per succeeded payment: cards at once, SEPA at settlement", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		clockFreeze(t, o.Test)
		card := asyncPay(t, o.Merchant, "4242424242424242")
		sepa := asyncPay(t, o.Merchant, payIBANOK)
		got := receiptsIn(t, o, 1, 15*time.Second)
		if len(got) != 1 {
			t.Fatalf("%d receipts after a card and a processing SEPA payment, want 1", len(got))
		}
		msg := got[0]
		if msg.To != "ada@example.com" || !strings.HasPrefix(msg.Subject, "Your receipt from Dashboard ") {
			t.Fatalf("receipt to %q, subject %q", msg.To, msg.Subject)
		}
		if !strings.Contains(msg.Text, "Amount paid: 25.00 EUR") {
			t.Errorf("text receipt lacks the amount:\n%s", msg.Text)
		}
		for _, s := range []string{"25.00 EUR", "Visa •••• 4242", card.Payment.Id} {
			if !strings.Contains(msg.Text, s) || !strings.Contains(msg.Html, s) {
				t.Errorf("receipt lacks %q:\ntext %s\nhtml %s", s, msg.Text, msg.Html)
			}
		}
		clockAdvance(t, o.Test, asyncSettleDelay)
		got = receiptsIn(t, o, 2, 15*time.Second)
		if len(got) != 2 {
			t.Fatalf("%d receipts after settlement, want 2", len(got))
		}
		if !strings.Contains(got[0].Text, "SEPA Direct Debit •••• 3000") || !strings.Contains(got[0].Text, sepa.Payment.Id) {
			t.Fatalf("SEPA receipt:\n%s", got[0].Text)
		}
		// A later advance (the dispute-free card, nothing due) sends nothing more.
		clockAdvance(t, o.Test, 3600)
		time.Sleep(2500 * time.Millisecond) // longer than the receipt worker's poll interval
		if got := receiptsIn(t, o, 3, 0); len(got) != 2 {
			t.Fatalf("%d receipts, want still 2", len(got))
		}
	})

	harness.Rule(t, "3.2", "a failed SEPA debit sends no receipt", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		clockFreeze(t, o.Test)
		asyncPay(t, o.Merchant, payIBANFailsLater)
		clockAdvance(t, o.Test, asyncSettleDelay)
		time.Sleep(2500 * time.Millisecond)
		if got := receiptsIn(t, o, 1, 0); len(got) != 0 {
			t.Fatalf("%d receipts for a failed debit", len(got))
		}
	})
}
