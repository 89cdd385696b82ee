package email

import (
	"strings"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// The refund e-mail names the amount, what was paid and refunded in all, and the refund; a
// merchant name cannot add a line to the subject or markup to the HTML part.
func TestRefundMessage(t *testing.T) {
	scope := core.Scope{MerchantID: "mer_1", Env: core.EnvTest}
	m, err := RefundMessage(scope, "ada@example.com", RefundReceipt{
		MerchantName: "Beans <b>&</b>\r\nBcc: x@example.com", Amount: 1000, Currency: "EUR", PaymentAmount: 2500,
		Refunded: 1500, Reference: "order-7", RefundID: "re_1", Date: time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC),
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(m.Subject, "\r\n") || !strings.Contains(m.Subject, "10.00 EUR") {
		t.Fatalf("subject %q", m.Subject)
	}
	for _, want := range []string{"10.00 EUR", "25.00 EUR", "15.00 EUR in total", "order-7", "re_1", "1 May 2026"} {
		if !strings.Contains(m.Text, want) {
			t.Errorf("text lacks %q:\n%s", want, m.Text)
		}
	}
	if strings.Contains(m.HTML, "<b>") || !strings.Contains(m.HTML, "&lt;b&gt;") {
		t.Fatalf("merchant markup not escaped: %s", m.HTML)
	}
	if m.Headers["X-Kassa-Refund"] != "re_1" {
		t.Fatalf("headers %v", m.Headers)
	}
}
