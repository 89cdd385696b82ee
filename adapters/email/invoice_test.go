package email

import (
	"strings"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
)

func TestInvoiceSentMessage(t *testing.T) {
	m, err := InvoiceSentMessage(core.Scope{MerchantID: "mer_1", Env: core.EnvTest}, "ada@example.com", InvoiceSent{
		CustomerName: "Ada <b>Lovelace</b>", MerchantName: "Acme\r\nBcc: x@y", Number: "ACME-INV-2026-0001",
		AmountDue: 2380, Currency: "EUR", DueDate: time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC), URL: "https://pay.example/i/tok"})
	if err != nil {
		t.Fatal(err)
	}
	if m.Subject != "Invoice ACME-INV-2026-0001 from Acme Bcc: x@y" || strings.ContainsAny(m.Subject, "\r\n") {
		t.Fatalf("subject %q", m.Subject)
	}
	for _, want := range []string{"23.80 EUR", "1 April 2026", "https://pay.example/i/tok", "ACME-INV-2026-0001"} {
		if !strings.Contains(m.Text, want) || !strings.Contains(m.HTML, want) {
			t.Errorf("%q missing from text or HTML", want)
		}
	}
	if strings.Contains(m.HTML, "<b>Lovelace</b>") || !strings.Contains(m.HTML, "Ada &lt;b&gt;Lovelace&lt;/b&gt;") {
		t.Error("the customer's name is not escaped in the HTML")
	}
	if m.Headers["X-Kassa-Invoice"] != "ACME-INV-2026-0001" {
		t.Errorf("headers %v", m.Headers)
	}
	if _, err := RenderInvoiceSent(InvoiceSent{MerchantName: "Acme", Number: "N"}); err == nil {
		t.Error("a missing link must be refused")
	}
}
