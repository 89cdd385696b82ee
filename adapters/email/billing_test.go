package email_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/adapters/email"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// sendAndRead sends m through the in-process SMTP server and answers what arrived: subject,
// decoded text and HTML bodies, and the headers.
func sendAndRead(t *testing.T, m ports.Message) (subject, text, html string, hdr map[string][]string) {
	t.Helper()
	ts := newTestServer(t, plainServer, nil)
	s, err := email.NewSMTP(email.SMTPConfig{Host: "127.0.0.1", Port: ts.port, Username: ts.user, Password: ts.pass,
		TLS: email.TLSOpportunistic, Timeout: 5 * time.Second, From: "billing@kassa.example"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(context.Background(), m); err != nil {
		t.Fatalf("Send: %v", err)
	}
	got := ts.messages()
	if len(got) != 1 {
		t.Fatalf("server received %d messages", len(got))
	}
	p := parseMIME(t, got[0].data)
	if p.mediaType != "multipart/alternative" {
		t.Errorf("media type %s, want the text/HTML alternative", p.mediaType)
	}
	return p.subject, p.text, p.html, p.header
}

func TestDunningMailsArriveForEveryStage(t *testing.T) {
	t.Parallel()
	next := time.Date(2026, 4, 4, 10, 0, 0, 0, time.UTC)
	url := "https://pay.example/i/Vb7Qm2Xz9Lk4Tn1Rw8Hs5Pd3Fj6Gc0Ya2Ue7Io4K"
	cases := []struct {
		stage    email.DunningStage
		next     *time.Time
		hard     bool
		subject  string
		wants    []string
		notWants []string
	}{
		{email.DunningNotice, &next, false, "Payment failed for your Acme & Co subscription",
			[]string{"did not go through", "Next attempt", "4 April 2026", "try again on 4 April 2026"}, nil},
		{email.DunningWarning, &next, false, "Second reminder: payment due for your Acme & Co subscription",
			[]string{"failed again", "Next attempt", "4 April 2026"}, nil},
		{email.DunningFinal, &next, false, "Final notice: payment due for your Acme & Co subscription",
			[]string{"Final notice", "will be suspended", "one last attempt on 4 April 2026", "another card or bank account"}, nil},
		{email.DunningFinal, &next, true, "Final notice: payment due for your Acme & Co subscription",
			[]string{"can no longer be charged", "another card or bank account now"}, []string{"Next attempt", "last attempt"}},
		{email.DunningExhausted, nil, false, "Your Acme & Co subscription is suspended",
			[]string{"is suspended", "Paying the invoice resumes it"}, []string{"Next attempt"}},
	}
	for _, c := range cases {
		m, err := email.DunningMessage(testScope, "ada@example.com", email.Dunning{Stage: c.stage, CustomerName: "Ada <b>L</b>",
			MerchantName: "Acme & Co", InvoiceNumber: "ACME-INV-2026-0042", AmountDue: 90000, Currency: "eur", URL: url,
			NextAttempt: c.next, HardDecline: c.hard})
		if err != nil {
			t.Fatalf("%s: %v", c.stage, err)
		}
		subject, text, html, hdr := sendAndRead(t, m)
		if subject != c.subject {
			t.Errorf("%s: subject %q, want %q", c.stage, subject, c.subject)
		}
		for _, body := range []struct{ name, s string }{{"text", text}, {"html", html}} {
			// Every stage: the hosted link, the amount due as on the receipt, the number.
			for _, w := range append([]string{url, "900.00 EUR", "ACME-INV-2026-0042"}, c.wants...) {
				if !strings.Contains(body.s, w) {
					t.Errorf("%s (hard %v) %s part lacks %q", c.stage, c.hard, body.name, w)
				}
			}
			for _, w := range c.notWants {
				if strings.Contains(body.s, w) {
					t.Errorf("%s (hard %v) %s part has %q", c.stage, c.hard, body.name, w)
				}
			}
		}
		if !strings.Contains(html, "Ada &lt;b&gt;L&lt;/b&gt;") || strings.Contains(html, "<b>L</b>") || !strings.Contains(html, "Acme &amp; Co") {
			t.Errorf("%s: names are not escaped in the HTML", c.stage)
		}
		if hdr["X-Kassa-Dunning-Stage"][0] != string(c.stage) || hdr["X-Kassa-Invoice"][0] != "ACME-INV-2026-0042" {
			t.Errorf("%s: headers %v", c.stage, hdr)
		}
	}
}

func TestDunningMailRefusesIncompleteData(t *testing.T) {
	t.Parallel()
	ok := email.Dunning{Stage: email.DunningNotice, MerchantName: "Acme", InvoiceNumber: "N-1", AmountDue: 500, Currency: "EUR", URL: "https://pay.example/i/t"}
	for name, mut := range map[string]func(*email.Dunning){
		"stage":    func(d *email.Dunning) { d.Stage = "reminder" },
		"merchant": func(d *email.Dunning) { d.MerchantName = " \n" },
		"number":   func(d *email.Dunning) { d.InvoiceNumber = "" },
		"link":     func(d *email.Dunning) { d.URL = "" },
		"currency": func(d *email.Dunning) { d.Currency = "XXX" },
		"amount":   func(d *email.Dunning) { d.AmountDue = 0 },
	} {
		d := ok
		mut(&d)
		if _, err := email.DunningMessage(testScope, "ada@example.com", d); !ports.IsPermanent(err) {
			t.Errorf("%s: %v, want a permanent error", name, err)
		}
	}
	if _, err := email.DunningMessage(testScope, "ada@example.com", ok); err != nil {
		t.Fatal(err)
	}
}

func TestTrialEndingMailArrives(t *testing.T) {
	t.Parallel()
	end := time.Date(2026, 3, 8, 23, 30, 0, 0, time.UTC)
	m, err := email.TrialEndingMessage(testScope, "ada@example.com", email.TrialEnding{CustomerName: "Ada", MerchantName: "Acme",
		ProductName: "Pro <plan>", TrialEnd: end, Amount: 900, Currency: "eur", Interval: "month", IntervalCount: 1,
		PaymentMethod: "Visa •••• 4242", URL: "https://shop.example/account"})
	if err != nil {
		t.Fatal(err)
	}
	subject, text, html, hdr := sendAndRead(t, m)
	if subject != "Your Acme trial ends on 8 March 2026" {
		t.Errorf("subject %q", subject)
	}
	for _, body := range []string{text, html} {
		for _, w := range []string{"8 March 2026", "9.00 EUR every month", "Visa •••• 4242", "https://shop.example/account"} {
			if !strings.Contains(body, w) {
				t.Errorf("body lacks %q:\n%s", w, body)
			}
		}
	}
	if !strings.Contains(text, "Pro <plan>") || !strings.Contains(html, "Pro &lt;plan&gt;") {
		t.Error("the product name is not as given in the text or not escaped in the HTML")
	}
	if hdr["X-Kassa-Notice"][0] != "trial_will_end" {
		t.Errorf("headers %v", hdr)
	}
	// Without a link or a method, and every 3 months.
	m, err = email.TrialEndingMessage(testScope, "ada@example.com", email.TrialEnding{MerchantName: "Acme", TrialEnd: end,
		Amount: 2700, Currency: "EUR", Interval: "month", IntervalCount: 3})
	if err != nil {
		t.Fatal(err)
	}
	_, text, html, _ = sendAndRead(t, m)
	for _, body := range []string{text, html} {
		if !strings.Contains(body, "27.00 EUR every 3 months") || !strings.Contains(body, "by contacting Acme") || !strings.Contains(body, "your subscription") {
			t.Errorf("body:\n%s", body)
		}
	}
	for name, tr := range map[string]email.TrialEnding{
		"interval": {MerchantName: "Acme", TrialEnd: end, Amount: 1, Currency: "EUR", Interval: "fortnight"},
		"end":      {MerchantName: "Acme", Amount: 1, Currency: "EUR", Interval: "month"},
		"merchant": {TrialEnd: end, Amount: 1, Currency: "EUR", Interval: "month"},
		"currency": {MerchantName: "Acme", TrialEnd: end, Amount: 1, Currency: "E", Interval: "month"},
	} {
		if _, err := email.TrialEndingMessage(testScope, "ada@example.com", tr); !ports.IsPermanent(err) {
			t.Errorf("%s: %v, want a permanent error", name, err)
		}
	}
	if got := email.PriceEvery(9000, core.Currency("EUR"), "year", 1); got != "90.00 EUR every year" {
		t.Errorf("PriceEvery = %q", got)
	}
}

// A renewal the customer's bank wants authenticated (authentication_required) asks the
// customer to confirm the payment on the invoice page, not to use another card, and still
// announces the next attempt.
func TestDunningMailAsksToConfirmAuthentication(t *testing.T) {
	next := time.Date(2026, 4, 4, 9, 0, 0, 0, time.UTC)
	url := "https://checkout.kassa.example/i/tok"
	for _, stage := range []email.DunningStage{email.DunningNotice, email.DunningWarning, email.DunningFinal} {
		out, err := email.RenderDunning(email.Dunning{Stage: stage, MerchantName: "Acme", InvoiceNumber: "ACME-INV-2026-0042",
			AmountDue: 900, Currency: "eur", URL: url, NextAttempt: &next, AuthenticationRequired: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, body := range []string{out.Text, out.HTML} {
			for _, w := range []string{"confirm the payment", "3-D Secure", "Confirm the payment online", "4 April 2026", url} {
				if !strings.Contains(body, w) {
					t.Errorf("%s: lacks %q", stage, w)
				}
			}
			if strings.Contains(body, "another card") {
				t.Errorf("%s: asks for another card", stage)
			}
		}
		if !strings.Contains(out.HTML, ">Confirm payment</a>") {
			t.Errorf("%s: the button does not say Confirm payment", stage)
		}
	}
}

// A dunning e-mail of an invoice that met the customer's balance shows the total and the
// applied balance before the amount due (10.00 − 7.50 = 2.50), in both parts, through the SMTP
// server; one that met none shows neither.
func TestDunningMailShowsTheAppliedBalance(t *testing.T) {
	t.Parallel()
	url := "https://pay.example/i/Vb7Qm2Xz9Lk4Tn1Rw8Hs5Pd3Fj6Gc0Ya2Ue7Io4K"
	d := email.Dunning{Stage: email.DunningNotice, MerchantName: "Acme", InvoiceNumber: "ACME-INV-2026-0043", AmountDue: 250,
		Currency: "EUR", URL: url, TookBalance: true, Total: 1000, AppliedBalance: -750}
	m, err := email.DunningMessage(testScope, "ada@example.com", d)
	if err != nil {
		t.Fatal(err)
	}
	_, text, html, _ := sendAndRead(t, m)
	if !strings.Contains(strings.ReplaceAll(text, "\r\n", "\n"), "Total: 10.00 EUR\nApplied balance: -7.50 EUR\nAmount due: 2.50 EUR") {
		t.Errorf("text part:\n%s", text)
	}
	for _, w := range []string{">Total<", "10.00 EUR", ">Applied balance<", "-7.50 EUR", "2.50 EUR"} {
		if !strings.Contains(html, w) {
			t.Errorf("html part lacks %q", w)
		}
	}
	if i, j := strings.Index(html, "Applied balance"), strings.Index(html, "Amount due"); i < 0 || j < i {
		t.Errorf("the applied balance is not before the amount due")
	}
	d.TookBalance, d.AmountDue = false, 1000
	m, err = email.DunningMessage(testScope, "ada@example.com", d)
	if err != nil {
		t.Fatal(err)
	}
	if _, text, html, _ := sendAndRead(t, m); strings.Contains(text, "Applied balance") || strings.Contains(html, "Applied balance") {
		t.Errorf("an invoice without a balance shows one:\n%s", text)
	}
}
