package email

import (
	"bytes"
	"errors"
	"fmt"
	htmltemplate "html/template"
	"strings"
	texttemplate "text/template"
	"time"
	"unicode"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// Receipt is what a payment receipt shows. It is plain data, filled by the caller from the
// payment; only the brand and the last four digits of the card (or of the IBAN) ever reach it.
type Receipt struct {
	MerchantName string
	Amount       int64 // minor units
	Currency     core.Currency
	Reference    string // the merchant's reference of the order, optional
	PaymentID    string // py_…, optional
	CardBrand    string // core.Brand*, with CardLast4
	CardLast4    string // exactly four digits, or empty
	IBANLast4    string // SEPA Direct Debit: exactly four characters, or empty
	Date         time.Time
}

// RenderedMail is a rendered message body.
type RenderedMail struct {
	Subject string
	Text    string
	HTML    string
}

// receiptView is the data the templates see: everything already formatted.
type receiptView struct {
	Merchant  string
	Amount    string
	Reference string
	PaymentID string
	Method    string
	Date      string
}

const receiptText = `Receipt from {{.Merchant}}

Amount paid: {{.Amount}}
Date: {{.Date}}
{{- if .Method}}
Payment method: {{.Method}}{{end}}
{{- if .Reference}}
Reference: {{.Reference}}{{end}}
{{- if .PaymentID}}
Payment ID: {{.PaymentID}}{{end}}

Thank you for your payment. If you have questions about it, contact {{.Merchant}}.
`

const receiptHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Receipt from {{.Merchant}}</title>
</head>
<body style="margin:0;padding:24px;background:#f6f7f9;font-family:-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;color:#1a1f36">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="max-width:480px;margin:0 auto;background:#ffffff;border-radius:8px;padding:24px">
<tr><td>
<h1 style="font-size:20px;margin:0 0 16px">Receipt from {{.Merchant}}</h1>
<p style="font-size:28px;font-weight:600;margin:0 0 16px">{{.Amount}}</p>
<table role="presentation" cellpadding="4" cellspacing="0" style="font-size:14px">
<tr><td style="color:#697386">Date</td><td>{{.Date}}</td></tr>
{{- if .Method}}
<tr><td style="color:#697386">Payment method</td><td>{{.Method}}</td></tr>{{end}}
{{- if .Reference}}
<tr><td style="color:#697386">Reference</td><td>{{.Reference}}</td></tr>{{end}}
{{- if .PaymentID}}
<tr><td style="color:#697386">Payment ID</td><td>{{.PaymentID}}</td></tr>{{end}}
</table>
<p style="font-size:14px;color:#697386;margin:16px 0 0">Thank you for your payment. If you have questions about it, contact {{.Merchant}}.</p>
</td></tr>
</table>
</body>
</html>
`

var (
	receiptTextTmpl = texttemplate.Must(texttemplate.New("receipt.txt").Option("missingkey=error").Parse(receiptText))
	receiptHTMLTmpl = htmltemplate.Must(htmltemplate.New("receipt.html").Option("missingkey=error").Parse(receiptHTML))
)

// ErrReceiptInvalid is returned for receipt data that cannot be rendered (it wraps
// ports.ErrPermanent: the same data would fail again).
var ErrReceiptInvalid = errors.New("receipt: invalid data")

// RenderReceipt renders the subject, plain-text and HTML bodies of a payment receipt. The
// merchant's strings are escaped in the HTML; the date is shown in UTC.
func RenderReceipt(r Receipt) (RenderedMail, error) {
	bad := func(format string, args ...any) (RenderedMail, error) {
		return RenderedMail{}, ports.Permanent(fmt.Errorf("%w: "+format, append([]any{ErrReceiptInvalid}, args...)...))
	}
	merchant := oneLine(r.MerchantName)
	if merchant == "" {
		return bad("merchant name is empty")
	}
	if _, err := core.ParseCurrency(string(r.Currency), "currency"); err != nil {
		return bad("currency %q is not supported", r.Currency)
	}
	if r.Date.IsZero() {
		return bad("date is missing")
	}
	v := receiptView{
		Merchant:  merchant,
		Amount:    core.FormatAmount(r.Amount, core.Currency(strings.ToUpper(string(r.Currency)))),
		Reference: oneLine(r.Reference),
		PaymentID: oneLine(r.PaymentID),
		Date:      r.Date.UTC().Format("2 January 2006, 15:04 MST"),
	}
	switch {
	case r.CardLast4 != "" && r.IBANLast4 != "":
		return bad("both a card and an IBAN are given")
	case r.CardLast4 != "":
		if len(r.CardLast4) != 4 || strings.Trim(r.CardLast4, "0123456789") != "" {
			return bad("card last4 must be exactly four digits")
		}
		v.Method = core.BrandName(r.CardBrand) + " •••• " + r.CardLast4
	case r.IBANLast4 != "":
		if len(r.IBANLast4) != 4 || strings.TrimFunc(r.IBANLast4, isAlnum) != "" {
			return bad("IBAN last4 must be exactly four characters")
		}
		v.Method = "SEPA Direct Debit •••• " + r.IBANLast4
	}
	var text, html bytes.Buffer
	if err := receiptTextTmpl.Execute(&text, v); err != nil {
		return RenderedMail{}, fmt.Errorf("receipt: text: %w", err)
	}
	if err := receiptHTMLTmpl.Execute(&html, v); err != nil {
		return RenderedMail{}, fmt.Errorf("receipt: html: %w", err)
	}
	return RenderedMail{
		Subject: "Your receipt from " + merchant,
		Text:    text.String(),
		HTML:    html.String(),
	}, nil
}

// ReceiptMessage renders r as a message to `to` in scope.
func ReceiptMessage(scope core.Scope, to string, r Receipt) (ports.Message, error) {
	out, err := RenderReceipt(r)
	if err != nil {
		return ports.Message{}, err
	}
	m := ports.Message{Scope: scope, To: to, Subject: out.Subject, Text: out.Text, HTML: out.HTML}
	if r.PaymentID != "" {
		m.Headers = map[string]string{"X-Kassa-Payment": oneLine(r.PaymentID)}
	}
	return m, m.Validate()
}

// oneLine turns every control character (line breaks included) into a space and trims, so a
// merchant-provided string cannot add lines to a subject or a header.
func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

func isAlnum(r rune) bool { return r < 128 && (unicode.IsDigit(r) || unicode.IsLetter(r)) }
