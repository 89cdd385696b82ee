package email

import (
	"bytes"
	"fmt"
	htmltemplate "html/template"
	"strconv"
	"strings"
	texttemplate "text/template"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// The e-mails of recurring billing: dunning notices when a renewal payment fails, and the
// notice that a trial is about to end. Each has a Render function (subject, text, HTML) and a
// Message function (a validated ports.Message). Amounts are formatted as on the receipt
// (core.FormatAmount: "23.80 EUR"), dates as "2 January 2006" in UTC. Merchant- and
// customer-provided strings are kept on one line and escaped in the HTML.

// DunningStage is how far dunning of an invoice has gone.
type DunningStage string

// Dunning stages: the first failed renewal (notice), the retry at +3 days (warning), at +7
// days (final, also at once after a hard decline), and the last failure that suspends the
// subscription (exhausted).
const (
	DunningNotice    DunningStage = "notice"
	DunningWarning   DunningStage = "warning"
	DunningFinal     DunningStage = "final"
	DunningExhausted DunningStage = "exhausted"
)

// Dunning is what a dunning e-mail says: the invoice that could not be paid, the amount due,
// the hosted invoice link where the customer pays it (or changes the card), and when Kassa
// tries again.
type Dunning struct {
	Stage         DunningStage
	CustomerName  string // optional
	MerchantName  string
	InvoiceNumber string
	AmountDue     int64 // minor units
	// TookBalance: the invoice met the customer's balance. The e-mail then shows its Total and
	// the AppliedBalance (credit taken, negative, or an amount owed added) before the amount
	// due, which is Total + AppliedBalance − what was paid.
	TookBalance           bool
	Total, AppliedBalance int64
	Currency              core.Currency
	URL                   string     // {checkout_base}/i/{public_token}
	NextAttempt           *time.Time // the next automatic retry; nil: none (final, exhausted)
	// HardDecline is a decline that retrying cannot cure (lost, stolen or expired card): the
	// customer is asked for another method at once and no retry is announced.
	HardDecline bool
	// AuthenticationRequired: the customer's bank wants them to confirm the payment (3-D
	// Secure), which it cannot ask while they are away: the e-mail asks them to confirm it on
	// the invoice page rather than to use another method.
	AuthenticationRequired bool
}

// dunningWording is what a stage's e-mail says; {merchant}, {number} and {next} (the next
// attempt's date) are filled in. withNext is added to the intro when a next attempt is
// announced (and the date is then listed); hardIntro replaces the intro after a hard decline;
// an empty action or button keeps the default ("Pay invoice").
type dunningWording struct {
	subject, headline, intro string
	withNext, hardIntro      string
	action, button           string
}

var dunningWordings = map[DunningStage]dunningWording{
	DunningNotice: {
		subject:  "Payment failed for your {merchant} subscription",
		headline: "Your payment to {merchant} did not go through",
		intro:    "We could not charge your payment method for invoice {number}.",
		withNext: " We will try again on {next}; to avoid an interruption, pay now or update your payment method.",
	},
	DunningWarning: {
		subject:  "Second reminder: payment due for your {merchant} subscription",
		headline: "Your payment to {merchant} failed again",
		intro:    "We tried again to charge invoice {number} and it was declined.",
		withNext: " The next attempt is on {next}.",
	},
	DunningFinal: {
		subject:  "Final notice: payment due for your {merchant} subscription",
		headline: "Final notice: invoice {number} is still unpaid",
		intro:    "Your payment method was declined again. Unless the invoice is paid, your subscription will be suspended.",
		withNext: " We will make one last attempt on {next}.",
		hardIntro: "Your card can no longer be charged (it was reported lost or stolen, or it has expired). " +
			"Please pay with another card or bank account now, or your subscription will be suspended.",
		action: "Pay the invoice online with another card or bank account:",
	},
	DunningExhausted: {
		subject:  "Your {merchant} subscription is suspended",
		headline: "Your subscription is suspended",
		intro:    "We could not collect invoice {number} after several attempts, so your subscription is suspended. Paying the invoice resumes it.",
		action:   "Pay the invoice online to resume your subscription:",
		button:   "Pay and resume",
	},
}

type dunningView struct {
	Customer, Merchant, Number, Amount, URL, Next string
	Total, AppliedBalance                         string // set when the invoice met a balance
	Headline, Intro, Action, Button               string
}

const dunningText = `Hello{{if .Customer}} {{.Customer}}{{end}},

{{.Headline}}

{{.Intro}}

Invoice: {{.Number}}
{{- if .AppliedBalance}}
Total: {{.Total}}
Applied balance: {{.AppliedBalance}}{{end}}
Amount due: {{.Amount}}
{{- if .Next}}
Next attempt: {{.Next}}{{end}}

{{.Action}}
{{.URL}}

If you have questions, contact {{.Merchant}}.
`

const dunningHTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>{{.Headline}}</title></head>
<body style="font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; color: #1a1f36; background: #f6f8fa; margin: 0; padding: 24px;">
<table role="presentation" style="max-width: 520px; margin: 0 auto; background: #ffffff; border-radius: 8px; padding: 24px; width: 100%;">
<tr><td>
<p style="margin: 0 0 16px;">Hello{{if .Customer}} {{.Customer}}{{end}},</p>
<h1 style="font-size: 20px; margin: 0 0 16px;">{{.Headline}}</h1>
<p style="margin: 0 0 16px;">{{.Intro}}</p>
<table role="presentation" cellpadding="4" cellspacing="0" style="font-size: 14px; margin: 0 0 24px;">
<tr><td style="color: #4f566b;">Invoice</td><td>{{.Number}}</td></tr>
{{- if .AppliedBalance}}
<tr><td style="color: #4f566b;">Total</td><td>{{.Total}}</td></tr>
<tr><td style="color: #4f566b;">Applied balance</td><td>{{.AppliedBalance}}</td></tr>{{end}}
<tr><td style="color: #4f566b;">Amount due</td><td><strong>{{.Amount}}</strong></td></tr>
{{- if .Next}}
<tr><td style="color: #4f566b;">Next attempt</td><td>{{.Next}}</td></tr>{{end}}
</table>
<p style="margin: 0 0 8px;">{{.Action}}</p>
<p style="margin: 0 0 24px;"><a href="{{.URL}}" style="display: inline-block; background: #4f46e5; color: #ffffff; padding: 12px 20px; border-radius: 6px; text-decoration: none;">{{.Button}}</a></p>
<p style="margin: 0; color: #4f566b; font-size: 14px;">If you have questions, contact {{.Merchant}}.</p>
</td></tr></table>
</body></html>
`

var (
	dunningTextTmpl = texttemplate.Must(texttemplate.New("dunning.txt").Option("missingkey=error").Parse(dunningText))
	dunningHTMLTmpl = htmltemplate.Must(htmltemplate.New("dunning.html").Option("missingkey=error").Parse(dunningHTML))
)

func mailDate(t time.Time) string { return t.UTC().Format("2 January 2006") }

// RenderDunning renders the dunning e-mail of stage d.Stage. Every stage carries the amount
// due and the hosted invoice link; notice and warning announce the next attempt, final says
// it is the last one, exhausted that the subscription is suspended until the invoice is paid.
func RenderDunning(d Dunning) (RenderedMail, error) {
	bad := func(format string, args ...any) (RenderedMail, error) {
		return RenderedMail{}, ports.Permanent(fmt.Errorf("dunning e-mail: "+format, args...))
	}
	merchant := oneLine(d.MerchantName)
	if merchant == "" || d.URL == "" || oneLine(d.InvoiceNumber) == "" {
		return bad("merchant, invoice number and link are required")
	}
	cur, err := core.ParseCurrency(string(d.Currency), "currency")
	if err != nil {
		return bad("currency %q is not supported", d.Currency)
	}
	if d.AmountDue <= 0 {
		return bad("the amount due must be positive")
	}
	v := dunningView{Customer: oneLine(d.CustomerName), Merchant: merchant, Number: oneLine(d.InvoiceNumber),
		Amount: core.FormatAmount(d.AmountDue, cur), URL: d.URL,
		Action: "Pay the invoice online, with the same or another card or bank account:", Button: "Pay invoice"}
	if d.TookBalance {
		v.Total, v.AppliedBalance = core.FormatAmount(d.Total, cur), core.FormatAmount(d.AppliedBalance, cur)
	}
	next := ""
	if d.NextAttempt != nil && !d.HardDecline {
		next = mailDate(*d.NextAttempt)
	}
	w, ok := dunningWordings[d.Stage]
	if !ok {
		return bad("stage %q is not notice, warning, final or exhausted", d.Stage)
	}
	fill := strings.NewReplacer("{merchant}", merchant, "{number}", v.Number, "{next}", next).Replace
	subject := fill(w.subject)
	v.Headline, v.Intro = fill(w.headline), fill(w.intro)
	switch {
	case d.AuthenticationRequired && d.Stage != DunningExhausted:
		v.Intro = "Your bank asks you to confirm the payment of invoice " + v.Number + " (3-D Secure), which it cannot do " +
			"while you are away, so we could not charge your card. Please confirm the payment on the invoice page."
		if next != "" {
			v.Intro += " Otherwise we will try again on " + next + "."
			v.Next = next
		}
		w.action, w.button = "Confirm the payment online (your bank will ask you to approve it):", "Confirm payment"
	case d.HardDecline && w.hardIntro != "":
		v.Intro = w.hardIntro
	case next != "" && w.withNext != "":
		v.Intro += fill(w.withNext)
		v.Next = next
	}
	if w.action != "" {
		v.Action = w.action
	}
	if w.button != "" {
		v.Button = w.button
	}
	var text, html bytes.Buffer
	if err := dunningTextTmpl.Execute(&text, v); err != nil {
		return RenderedMail{}, fmt.Errorf("dunning e-mail: text: %w", err)
	}
	if err := dunningHTMLTmpl.Execute(&html, v); err != nil {
		return RenderedMail{}, fmt.Errorf("dunning e-mail: html: %w", err)
	}
	return RenderedMail{Subject: subject, Text: text.String(), HTML: html.String()}, nil
}

// DunningMessage renders d as a message to `to` in scope, with the headers X-Kassa-Invoice
// (the number) and X-Kassa-Dunning-Stage.
func DunningMessage(scope core.Scope, to string, d Dunning) (ports.Message, error) {
	out, err := RenderDunning(d)
	if err != nil {
		return ports.Message{}, err
	}
	m := ports.Message{Scope: scope, To: to, Subject: out.Subject, Text: out.Text, HTML: out.HTML,
		Headers: map[string]string{"X-Kassa-Invoice": oneLine(d.InvoiceNumber), "X-Kassa-Dunning-Stage": string(d.Stage)}}
	return m, m.Validate()
}

// TrialEnding is what the e-mail before a trial's end says: when the trial ends and what will
// be charged from then on, every how often.
type TrialEnding struct {
	CustomerName  string // optional
	MerchantName  string
	ProductName   string // the subscribed product, optional
	TrialEnd      time.Time
	Amount        int64 // minor units, each period (price × quantity)
	Currency      core.Currency
	Interval      string // day, week, month or year
	IntervalCount int    // 1 or more; 0 counts as 1
	// PaymentMethod describes the method that will be charged, e.g. "Visa •••• 4242"
	// (optional).
	PaymentMethod string
	// URL is where the customer manages the subscription (optional).
	URL string
}

type trialView struct {
	Customer, Merchant, Product, End, Price, Method, URL string
}

const trialText = `Hello{{if .Customer}} {{.Customer}}{{end}},

Your free trial of {{.Product}} from {{.Merchant}} ends on {{.End}}.

From then on you will be charged {{.Price}}{{if .Method}} to {{.Method}}{{end}}, starting on {{.End}}.
If you do not want to continue, cancel before {{.End}}{{if .URL}}:
{{.URL}}{{else}} by contacting {{.Merchant}}.{{end}}

If you have questions, contact {{.Merchant}}.
`

const trialHTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Your trial ends on {{.End}}</title></head>
<body style="font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; color: #1a1f36; background: #f6f8fa; margin: 0; padding: 24px;">
<table role="presentation" style="max-width: 520px; margin: 0 auto; background: #ffffff; border-radius: 8px; padding: 24px; width: 100%;">
<tr><td>
<p style="margin: 0 0 16px;">Hello{{if .Customer}} {{.Customer}}{{end}},</p>
<h1 style="font-size: 20px; margin: 0 0 16px;">Your trial ends on {{.End}}</h1>
<p style="margin: 0 0 16px;">Your free trial of <strong>{{.Product}}</strong> from {{.Merchant}} ends on {{.End}}.</p>
<table role="presentation" cellpadding="4" cellspacing="0" style="font-size: 14px; margin: 0 0 24px;">
<tr><td style="color: #4f566b;">Trial ends</td><td>{{.End}}</td></tr>
<tr><td style="color: #4f566b;">Then</td><td><strong>{{.Price}}</strong></td></tr>
{{- if .Method}}
<tr><td style="color: #4f566b;">Charged to</td><td>{{.Method}}</td></tr>{{end}}
</table>
{{- if .URL}}
<p style="margin: 0 0 24px;">If you do not want to continue, cancel before {{.End}}: <a href="{{.URL}}">manage your subscription</a>.</p>
{{- else}}
<p style="margin: 0 0 24px;">If you do not want to continue, cancel before {{.End}} by contacting {{.Merchant}}.</p>
{{- end}}
<p style="margin: 0; color: #4f566b; font-size: 14px;">If you have questions, contact {{.Merchant}}.</p>
</td></tr></table>
</body></html>
`

var (
	trialTextTmpl = texttemplate.Must(texttemplate.New("trial.txt").Option("missingkey=error").Parse(trialText))
	trialHTMLTmpl = htmltemplate.Must(htmltemplate.New("trial.html").Option("missingkey=error").Parse(trialHTML))
)

// PriceEvery writes a recurring price as a person reads it: "9.00 EUR every month",
// "90.00 EUR every year", "5.00 EUR every 3 months".
func PriceEvery(amount int64, c core.Currency, interval string, count int) string {
	s := core.FormatAmount(amount, c) + " every "
	if count <= 1 {
		return s + interval
	}
	return s + strconv.Itoa(count) + " " + interval + "s"
}

// RenderTrialEnding renders the e-mail sent before a trial ends (at the trial_will_end
// notice).
func RenderTrialEnding(tr TrialEnding) (RenderedMail, error) {
	bad := func(format string, args ...any) (RenderedMail, error) {
		return RenderedMail{}, ports.Permanent(fmt.Errorf("trial e-mail: "+format, args...))
	}
	merchant := oneLine(tr.MerchantName)
	if merchant == "" || tr.TrialEnd.IsZero() {
		return bad("merchant and trial end are required")
	}
	cur, err := core.ParseCurrency(string(tr.Currency), "currency")
	if err != nil {
		return bad("currency %q is not supported", tr.Currency)
	}
	switch tr.Interval {
	case "day", "week", "month", "year":
	default:
		return bad("interval %q is not day, week, month or year", tr.Interval)
	}
	if tr.Amount < 0 || tr.IntervalCount < 0 {
		return bad("amount and interval count must not be negative")
	}
	product := oneLine(tr.ProductName)
	if product == "" {
		product = "your subscription"
	}
	v := trialView{Customer: oneLine(tr.CustomerName), Merchant: merchant, Product: product, End: mailDate(tr.TrialEnd),
		Price: PriceEvery(tr.Amount, cur, tr.Interval, tr.IntervalCount), Method: oneLine(tr.PaymentMethod), URL: tr.URL}
	var text, html bytes.Buffer
	if err := trialTextTmpl.Execute(&text, v); err != nil {
		return RenderedMail{}, fmt.Errorf("trial e-mail: text: %w", err)
	}
	if err := trialHTMLTmpl.Execute(&html, v); err != nil {
		return RenderedMail{}, fmt.Errorf("trial e-mail: html: %w", err)
	}
	return RenderedMail{Subject: "Your " + merchant + " trial ends on " + v.End, Text: text.String(), HTML: html.String()}, nil
}

// TrialEndingMessage renders tr as a message to `to` in scope.
func TrialEndingMessage(scope core.Scope, to string, tr TrialEnding) (ports.Message, error) {
	out, err := RenderTrialEnding(tr)
	if err != nil {
		return ports.Message{}, err
	}
	m := ports.Message{Scope: scope, To: to, Subject: out.Subject, Text: out.Text, HTML: out.HTML,
		Headers: map[string]string{"X-Kassa-Notice": "trial_will_end"}}
	return m, m.Validate()
}
