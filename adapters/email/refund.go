package email

import (
	"fmt"
	"html"
	"strings"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// RefundReceipt is what the payer's refund e-mail says.
type RefundReceipt struct {
	MerchantName  string
	Amount        int64 // this refund, minor units
	Currency      core.Currency
	PaymentAmount int64 // what was paid
	Refunded      int64 // refunded of the payment so far, this refund included
	Reference     string
	RefundID      string // re_…
	Date          time.Time
}

// RefundMessage renders the refund e-mail to `to`. Merchant-provided strings are kept on one
// line in the subject and escaped in the HTML part.
func RefundMessage(scope core.Scope, to string, r RefundReceipt) (ports.Message, error) {
	merchant := oneLine(r.MerchantName)
	amount := core.FormatAmount(r.Amount, r.Currency)
	subject := fmt.Sprintf("Refund of %s from %s", amount, merchant)
	var t strings.Builder
	fmt.Fprintf(&t, "%s has refunded %s to you.\n\n", merchant, amount)
	fmt.Fprintf(&t, "Paid:      %s\n", core.FormatAmount(r.PaymentAmount, r.Currency))
	fmt.Fprintf(&t, "Refunded:  %s in total\n", core.FormatAmount(r.Refunded, r.Currency))
	if ref := oneLine(r.Reference); ref != "" {
		fmt.Fprintf(&t, "Order:     %s\n", ref)
	}
	fmt.Fprintf(&t, "Date:      %s\n", r.Date.UTC().Format("2 January 2006"))
	fmt.Fprintf(&t, "Refund:    %s\n\n", r.RefundID)
	t.WriteString("The money reaches your account within 5 to 10 business days, depending on your bank.\n")
	text := t.String()
	body := "<p>" + strings.ReplaceAll(html.EscapeString(strings.TrimSpace(text)), "\n", "<br>") + "</p>"
	m := ports.Message{Scope: scope, To: to, Subject: subject, Text: text,
		HTML:    "<!doctype html><html lang=\"en\"><body>" + body + "</body></html>",
		Headers: map[string]string{"X-Kassa-Refund": oneLine(r.RefundID)}}
	return m, m.Validate()
}
