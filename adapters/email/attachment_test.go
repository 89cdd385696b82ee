package email_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"strings"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/adapters/email"
	"github.com/kassa-pay/kassa/adapters/web/invoicepdf"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/invoicing"
	"github.com/kassa-pay/kassa/modules/mail/mailtest"
	"github.com/kassa-pay/kassa/ports"
)

// mimePart is one leaf of a received message: its media type, its Content-Disposition file
// name (empty for a body) and its decoded bytes.
type mimePart struct {
	mediaType   string
	disposition string
	filename    string
	body        []byte
}

// mimeTree is a received message taken apart recursively.
type mimeTree struct {
	mediaType string // of the message
	nested    []string
	leaves    []mimePart
}

// walkMIME decodes data (as the SMTP server received it) into its leaves, in order, decoding
// base64 and quoted-printable transfer encodings, and records the media type of every
// multipart container it meets.
func walkMIME(t *testing.T, data []byte) mimeTree {
	t.Helper()
	msg, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("received message does not parse: %v", err)
	}
	var tree mimeTree
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil {
		t.Fatal(err)
	}
	tree.mediaType = mt
	var walk func(mt string, params map[string]string, h map[string][]string, body io.Reader)
	walk = func(mt string, params map[string]string, h map[string][]string, body io.Reader) {
		if strings.HasPrefix(mt, "multipart/") {
			tree.nested = append(tree.nested, mt)
			mr := multipart.NewReader(body, params["boundary"])
			for {
				part, err := mr.NextPart()
				if errors.Is(err, io.EOF) {
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				pmt, pparams, err := mime.ParseMediaType(part.Header.Get("Content-Type"))
				if err != nil {
					t.Fatal(err)
				}
				walk(pmt, pparams, part.Header, part)
			}
		}
		get := func(k string) string {
			if v := h[k]; len(v) > 0 {
				return v[0]
			}
			return ""
		}
		raw, err := io.ReadAll(body) // quoted-printable is decoded by the multipart reader
		if err != nil {
			t.Fatal(err)
		}
		if strings.EqualFold(get("Content-Transfer-Encoding"), "base64") {
			raw, err = io.ReadAll(base64.NewDecoder(base64.StdEncoding, bytes.NewReader(raw)))
			if err != nil {
				t.Fatalf("base64 part: %v", err)
			}
		}
		leaf := mimePart{mediaType: mt, body: raw}
		if d := get("Content-Disposition"); d != "" {
			disp, dp, err := mime.ParseMediaType(d)
			if err != nil {
				t.Fatalf("Content-Disposition %q: %v", d, err)
			}
			// go-mail writes a non-ASCII name as RFC 2047 encoded words, which mail clients decode.
			name, err := new(mime.WordDecoder).DecodeHeader(dp["filename"])
			if err != nil {
				t.Fatalf("file name %q: %v", dp["filename"], err)
			}
			leaf.disposition, leaf.filename = disp, name
		}
		tree.leaves = append(tree.leaves, leaf)
	}
	walk(mt, params, msg.Header, msg.Body)
	return tree
}

// fakePDF is a PDF-looking file with every byte value in it, so that an encoding that is not
// 8-bit clean would change it.
func fakePDF() []byte {
	b := []byte("%PDF-1.7\n")
	for i := 0; i < 3; i++ {
		for c := 0; c < 256; c++ {
			b = append(b, byte(c))
		}
	}
	return append(b, "\n%%EOF\n"...)
}

func TestSMTPSendsAttachmentsIntact(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, plainServer, nil)
	m, err := email.NewSMTP(email.SMTPConfig{Host: "127.0.0.1", Port: ts.port, Username: ts.user, Password: ts.pass,
		TLS: email.TLSOpportunistic, Timeout: 5 * time.Second, From: "receipts@kassa.example"})
	if err != nil {
		t.Fatal(err)
	}
	pdf := fakePDF()
	msg := testMessage()
	msg.Attachments = []ports.Attachment{
		{Filename: "ACME-INV-2026-0001.pdf", ContentType: "application/pdf", Data: pdf},
		{Filename: "notes.txt", ContentType: "text/plain; charset=utf-8", Data: []byte("Grüße\n")},
	}
	if err := m.Send(context.Background(), msg); err != nil {
		t.Fatalf("Send: %v", err)
	}
	got := ts.messages()
	if len(got) != 1 {
		t.Fatalf("server received %d messages, want 1", len(got))
	}
	tree := walkMIME(t, got[0].data)
	if tree.mediaType != "multipart/mixed" {
		t.Errorf("message media type = %s, want multipart/mixed", tree.mediaType)
	}
	if len(tree.nested) < 2 || tree.nested[1] != "multipart/alternative" {
		t.Errorf("containers = %v, want multipart/mixed holding multipart/alternative", tree.nested)
	}
	if len(tree.leaves) != 4 {
		t.Fatalf("leaves = %d, want text, html and two files", len(tree.leaves))
	}
	if l := tree.leaves[0]; l.mediaType != "text/plain" || !strings.Contains(string(l.body), "Amount paid: 10.50 EUR") {
		t.Errorf("first leaf %s %q, want the text body", l.mediaType, l.body)
	}
	if l := tree.leaves[1]; l.mediaType != "text/html" || string(l.body) != msg.HTML {
		t.Errorf("second leaf %s %q, want the HTML body", l.mediaType, l.body)
	}
	a := tree.leaves[2]
	if a.mediaType != "application/pdf" || a.disposition != "attachment" || a.filename != "ACME-INV-2026-0001.pdf" {
		t.Errorf("attachment = %s %s %q", a.mediaType, a.disposition, a.filename)
	}
	if !bytes.HasPrefix(a.body, []byte("%PDF-")) || !bytes.Equal(a.body, pdf) {
		t.Errorf("attachment bytes differ from the sent ones (%d bytes, want %d)", len(a.body), len(pdf))
	}
	if b := tree.leaves[3]; b.filename != "notes.txt" || string(b.body) != "Grüße\n" {
		t.Errorf("second attachment = %q %q", b.filename, b.body)
	}
}

func TestMessageAttachmentsAreValidated(t *testing.T) {
	t.Parallel()
	ok := ports.Attachment{Filename: "a.pdf", ContentType: "application/pdf", Data: []byte("%PDF-")}
	cases := map[string]ports.Attachment{
		"empty name":    {Filename: " ", ContentType: ok.ContentType, Data: ok.Data},
		"path":          {Filename: "../a.pdf", ContentType: ok.ContentType, Data: ok.Data},
		"quote":         {Filename: `a".pdf`, ContentType: ok.ContentType, Data: ok.Data},
		"line break":    {Filename: "a\r\n.pdf", ContentType: ok.ContentType, Data: ok.Data},
		"no media type": {Filename: ok.Filename, ContentType: "pdf", Data: ok.Data},
		"empty file":    {Filename: ok.Filename, ContentType: ok.ContentType},
		"too large":     {Filename: ok.Filename, ContentType: ok.ContentType, Data: make([]byte, ports.MaxMailAttachmentBytes+1)},
	}
	for name, a := range cases {
		m := testMessage()
		m.Attachments = []ports.Attachment{a}
		if err := m.Validate(); !ports.IsPermanent(err) {
			t.Errorf("%s: Validate = %v, want a permanent error", name, err)
		}
	}
	m := testMessage()
	m.Attachments = make([]ports.Attachment, ports.MaxMailAttachments+1)
	for i := range m.Attachments {
		m.Attachments[i] = ok
	}
	if err := m.Validate(); !ports.IsPermanent(err) {
		t.Errorf("too many attachments: Validate = %v", err)
	}
	m.Attachments = []ports.Attachment{ok}
	if err := m.Validate(); err != nil {
		t.Errorf("one attachment: %v", err)
	}
}

// The e-mail of a sent invoice carries the invoice's PDF, as rendered by the PDF adapter, and
// it arrives through SMTP byte for byte, beside the text and HTML bodies with the link.
func TestInvoiceSentMailArrivesWithItsPDF(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	inv := invoicing.NewDraft(testScope, invoicing.Draft{Currency: "EUR", CustomerName: "Ada", CustomerEmail: "ada@example.com",
		Lines: []invoicing.Line{{Description: "Beratung", Quantity: 2, UnitAmount: 12345, VATRate: 1900}}, DaysUntilDue: 30}, now)
	if err := inv.Finalize("ACME", 1, "tok", now); err != nil {
		t.Fatal(err)
	}
	h := &invoicing.Hosted{Invoice: inv, Merchant: invoicing.Merchant{Name: "Acme GmbH"}}
	pdf, err := invoicepdf.Render(h)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := email.InvoiceSentMessage(testScope, "ada@example.com", email.InvoiceSent{CustomerName: "Ada",
		MerchantName: "Acme GmbH", Number: *inv.Number(), AmountDue: inv.Total(), Currency: "EUR", DueDate: *inv.DueDate(),
		URL: "https://pay.example/i/tok", PDF: ports.Attachment{Filename: invoicepdf.FileName(inv), ContentType: "application/pdf", Data: pdf}})
	if err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, plainServer, nil)
	m, err := email.NewSMTP(email.SMTPConfig{Host: "127.0.0.1", Port: ts.port, Username: ts.user, Password: ts.pass,
		TLS: email.TLSOpportunistic, Timeout: 5 * time.Second, From: "invoices@kassa.example"})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Send(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	got := ts.messages()
	if len(got) != 1 {
		t.Fatalf("server received %d messages", len(got))
	}
	tree := walkMIME(t, got[0].data)
	if tree.mediaType != "multipart/mixed" || len(tree.leaves) != 3 {
		t.Fatalf("message %s with %d leaves, want multipart/mixed with text, HTML and the PDF", tree.mediaType, len(tree.leaves))
	}
	for _, l := range tree.leaves[:2] {
		if !strings.Contains(string(l.body), "https://pay.example/i/tok") {
			t.Errorf("%s body lacks the hosted link", l.mediaType)
		}
		if !strings.Contains(string(l.body), "attached as a PDF ("+*inv.Number()+".pdf)") {
			t.Errorf("%s body does not mention the attachment", l.mediaType)
		}
	}
	a := tree.leaves[2]
	if a.mediaType != "application/pdf" || a.filename != *inv.Number()+".pdf" || a.disposition != "attachment" {
		t.Errorf("attachment = %s %s %q", a.mediaType, a.disposition, a.filename)
	}
	if !bytes.HasPrefix(a.body, []byte("%PDF-")) || !bytes.Equal(a.body, pdf) {
		t.Errorf("the PDF did not arrive intact (%d bytes, want %d)", len(a.body), len(pdf))
	}
	// Without a PDF the message stays the text/HTML alternative.
	msg, err = email.InvoiceSentMessage(testScope, "ada@example.com", email.InvoiceSent{MerchantName: "Acme GmbH",
		Number: "N-1", Currency: "EUR", DueDate: now, URL: "https://pay.example/i/tok"})
	if err != nil || len(msg.Attachments) != 0 || strings.Contains(msg.Text, "attached") {
		t.Errorf("without a PDF: %d attachments, %v; text %q", len(msg.Attachments), err, msg.Text)
	}
}

// The SMTP adapter passes the mailer contract against the in-process server.
func TestSMTPMailerContract(t *testing.T) {
	t.Parallel()
	mailtest.RunMailer(t, func(t *testing.T) mailtest.MailerSubject {
		ts := newTestServer(t, plainServer, nil)
		m, err := email.NewSMTP(email.SMTPConfig{Host: "127.0.0.1", Port: ts.port, Username: ts.user, Password: ts.pass,
			TLS: email.TLSOpportunistic, Timeout: 5 * time.Second, From: "receipts@kassa.example"})
		if err != nil {
			t.Fatal(err)
		}
		return mailtest.MailerSubject{
			Mailer: m,
			Scope:  func(*testing.T) core.Scope { return testScope },
			Delivered: func(t *testing.T, _ core.Scope, to string) []ports.Message {
				var out []ports.Message
				for _, r := range ts.messages() {
					if len(r.to) != 1 || r.to[0] != to {
						continue
					}
					p := parseHeaderOnly(t, r.data)
					tree := walkMIME(t, r.data)
					msg := ports.Message{To: to, Subject: p}
					for _, l := range tree.leaves {
						switch {
						case l.disposition == "attachment":
							msg.Attachments = append(msg.Attachments, ports.Attachment{Filename: l.filename, ContentType: l.mediaType, Data: l.body})
						case l.mediaType == "text/plain":
							msg.Text = string(l.body)
						case l.mediaType == "text/html":
							msg.HTML = string(l.body)
						}
					}
					out = append(out, msg)
				}
				return out
			},
		}
	})
}

// parseHeaderOnly answers the decoded Subject of a received message.
func parseHeaderOnly(t *testing.T, data []byte) string {
	t.Helper()
	msg, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	s, err := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}
