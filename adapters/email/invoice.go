package email

import (
	"bytes"
	"fmt"
	htmltemplate "html/template"
	texttemplate "text/template"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// InvoiceSent is the e-mail that brings a customer the link to their invoice.
type InvoiceSent struct {
	CustomerName string
	MerchantName string
	Number       string
	AmountDue    int64
	Currency     core.Currency
	DueDate      time.Time
	URL          string
	// PDF is attached when its Data is not empty (the invoice's PDF).
	PDF ports.Attachment
}

type invoiceView struct {
	Customer, Merchant, Number, Amount, Due, URL, Attachment string
}

const invoiceText = `Hello {{.Customer}},

{{.Merchant}} sent you invoice {{.Number}}.

Amount due: {{.Amount}}
Due date: {{.Due}}

View and pay the invoice online:
{{.URL}}
{{- if .Attachment}}

The invoice is attached as a PDF ({{.Attachment}}).{{end}}

If you have questions about this invoice, contact {{.Merchant}}.
`

const invoiceHTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Invoice {{.Number}} from {{.Merchant}}</title></head>
<body style="font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; color: #1a1f36; background: #f6f8fa; margin: 0; padding: 24px;">
<table role="presentation" style="max-width: 520px; margin: 0 auto; background: #ffffff; border-radius: 8px; padding: 24px; width: 100%;">
<tr><td>
<p style="margin: 0 0 16px;">Hello {{.Customer}},</p>
<p style="margin: 0 0 16px;"><strong>{{.Merchant}}</strong> sent you invoice <strong>{{.Number}}</strong>.</p>
<p style="margin: 0 0 4px;">Amount due: <strong>{{.Amount}}</strong></p>
<p style="margin: 0 0 24px;">Due date: {{.Due}}</p>
<p style="margin: 0 0 24px;"><a href="{{.URL}}" style="display: inline-block; background: #4f46e5; color: #ffffff; padding: 12px 20px; border-radius: 6px; text-decoration: none;">View and pay invoice</a></p>
{{- if .Attachment}}
<p style="margin: 0 0 16px;">The invoice is attached as a PDF ({{.Attachment}}).</p>{{end}}
<p style="margin: 0; color: #4f566b; font-size: 14px;">If you have questions about this invoice, contact {{.Merchant}}.</p>
</td></tr></table>
</body></html>
`

var (
	invoiceTextTmpl = texttemplate.Must(texttemplate.New("invoice.txt").Option("missingkey=error").Parse(invoiceText))
	invoiceHTMLTmpl = htmltemplate.Must(htmltemplate.New("invoice.html").Option("missingkey=error").Parse(invoiceHTML))
)

// RenderInvoiceSent renders the subject, plain-text and HTML bodies of the e-mail of a sent
// invoice. The merchant's and customer's strings are escaped in the HTML.
func RenderInvoiceSent(inv InvoiceSent) (RenderedMail, error) {
	merchant := oneLine(inv.MerchantName)
	if merchant == "" || inv.URL == "" || inv.Number == "" {
		return RenderedMail{}, ports.Permanent(fmt.Errorf("invoice e-mail: merchant, number and link are required"))
	}
	v := invoiceView{Customer: oneLine(inv.CustomerName), Merchant: merchant, Number: oneLine(inv.Number),
		Amount: core.FormatAmount(inv.AmountDue, inv.Currency), Due: inv.DueDate.UTC().Format("2 January 2006"), URL: inv.URL}
	if len(inv.PDF.Data) > 0 {
		v.Attachment = oneLine(inv.PDF.Filename)
	}
	var text, html bytes.Buffer
	if err := invoiceTextTmpl.Execute(&text, v); err != nil {
		return RenderedMail{}, fmt.Errorf("invoice e-mail: text: %w", err)
	}
	if err := invoiceHTMLTmpl.Execute(&html, v); err != nil {
		return RenderedMail{}, fmt.Errorf("invoice e-mail: html: %w", err)
	}
	return RenderedMail{Subject: "Invoice " + v.Number + " from " + merchant, Text: text.String(), HTML: html.String()}, nil
}

// InvoiceSentMessage renders inv as a message to `to` in scope.
func InvoiceSentMessage(scope core.Scope, to string, inv InvoiceSent) (ports.Message, error) {
	out, err := RenderInvoiceSent(inv)
	if err != nil {
		return ports.Message{}, err
	}
	m := ports.Message{Scope: scope, To: to, Subject: out.Subject, Text: out.Text, HTML: out.HTML,
		Headers: map[string]string{"X-Kassa-Invoice": oneLine(inv.Number)}}
	if len(inv.PDF.Data) > 0 {
		m.Attachments = []ports.Attachment{inv.PDF}
	}
	return m, m.Validate()
}
