package mailtest

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// MailerSubject is one ports.Mailer under test (the SMTP adapter against an in-process
// server, the development mailbox), fresh for each case.
type MailerSubject struct {
	Mailer ports.Mailer
	// Scope makes a merchant environment for the case.
	Scope func(t *testing.T) core.Scope
	// Delivered reads back what the mailer delivered to address to in scope, in order, as the
	// recipient would see it: subject, text and HTML bodies and the attachments with their
	// bytes (decoded from the wire, for a mailer that sends).
	Delivered func(t *testing.T, scope core.Scope, to string) []ports.Message
}

// RunMailer runs the mailer contract: files sent with a message arrive intact and in order,
// beside both bodies; a message without files arrives without any; a message with an invalid
// file is a permanent failure and delivers nothing; inside a unit of work nothing is sent.
func RunMailer(t *testing.T, newSubject func(t *testing.T) MailerSubject) {
	cases := []struct {
		name string
		run  func(t *testing.T, s MailerSubject)
	}{
		{"attachments arrive intact and in order beside both bodies", attachmentsIntact},
		{"a message without attachments arrives without any", noAttachments},
		{"an invalid attachment is permanent and delivers nothing", invalidAttachment},
		{"nothing is sent inside a unit of work", insideTransaction},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, newSubject(t))
		})
	}
}

// samplePDF has the PDF magic and every byte value, so that an encoding that is not 8-bit
// clean changes it.
func samplePDF() []byte {
	b := []byte("%PDF-1.7\n")
	for c := 0; c < 256; c++ {
		b = append(b, byte(c), byte(255-c))
	}
	return append(b, "\n%%EOF\n"...)
}

func contractMessage(scope core.Scope, to string) ports.Message {
	return ports.Message{Scope: scope, To: to, Subject: "Invoice ACME-INV-2026-0001 from Acme",
		Text: "Amount due: 23.80 EUR\n", HTML: "<p>Amount due: <b>23.80 EUR</b></p>"}
}

func deliveredOne(t *testing.T, s MailerSubject, scope core.Scope, to string) ports.Message {
	t.Helper()
	got := s.Delivered(t, scope, to)
	if len(got) != 1 {
		t.Fatalf("delivered %d messages to the recipient, want 1", len(got))
	}
	return got[0]
}

func attachmentsIntact(t *testing.T, s MailerSubject) {
	scope := s.Scope(t)
	m := contractMessage(scope, "files@example.com")
	pdf := samplePDF()
	m.Attachments = []ports.Attachment{
		{Filename: "ACME-INV-2026-0001.pdf", ContentType: "application/pdf", Data: pdf},
		{Filename: "Bedingungen für Müller.txt", ContentType: "text/plain; charset=utf-8", Data: []byte("Grüße\r\n")},
	}
	if err := s.Mailer.Send(context.Background(), m); err != nil {
		t.Fatalf("Send: %v", err)
	}
	got := deliveredOne(t, s, scope, m.To)
	if got.Subject != m.Subject || !strings.Contains(got.Text, "23.80 EUR") || got.HTML != m.HTML {
		t.Errorf("bodies: subject %q, text %q, html %q", got.Subject, got.Text, got.HTML)
	}
	if len(got.Attachments) != 2 {
		t.Fatalf("%d attachments arrived, want 2", len(got.Attachments))
	}
	for i, want := range m.Attachments {
		a := got.Attachments[i]
		if a.Filename != want.Filename || !sameMediaType(a.ContentType, want.ContentType) || !bytes.Equal(a.Data, want.Data) {
			t.Errorf("attachment %d: %q %q, %d bytes; want %q %q, %d bytes (equal bytes: %v)", i,
				a.Filename, a.ContentType, len(a.Data), want.Filename, want.ContentType, len(want.Data), bytes.Equal(a.Data, want.Data))
		}
	}
	if !bytes.HasPrefix(got.Attachments[0].Data, []byte("%PDF-")) {
		t.Error("the PDF lost its magic")
	}
}

// sameMediaType compares the type/subtype of two media types (a mailer may add or reorder
// parameters such as charset).
func sameMediaType(a, b string) bool {
	cut := func(s string) string {
		s, _, _ = strings.Cut(s, ";")
		return strings.ToLower(strings.TrimSpace(s))
	}
	return cut(a) == cut(b)
}

func noAttachments(t *testing.T, s MailerSubject) {
	scope := s.Scope(t)
	m := contractMessage(scope, "plain@example.com")
	if err := s.Mailer.Send(context.Background(), m); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if got := deliveredOne(t, s, scope, m.To); len(got.Attachments) != 0 {
		t.Errorf("%d attachments arrived, want none", len(got.Attachments))
	}
}

func invalidAttachment(t *testing.T, s MailerSubject) {
	scope := s.Scope(t)
	for i, a := range []ports.Attachment{
		{Filename: "../etc/passwd", ContentType: "text/plain", Data: []byte("x")},
		{Filename: "a.pdf", ContentType: "not a type", Data: []byte("x")},
		{Filename: "a.pdf", ContentType: "application/pdf"},
	} {
		m := contractMessage(scope, "refused@example.com")
		m.Attachments = []ports.Attachment{a}
		if err := s.Mailer.Send(context.Background(), m); !ports.IsPermanent(err) {
			t.Errorf("case %d: Send = %v, want a permanent failure", i, err)
		}
	}
	if got := s.Delivered(t, scope, "refused@example.com"); len(got) != 0 {
		t.Errorf("delivered %d messages with invalid attachments", len(got))
	}
}

func insideTransaction(t *testing.T, s MailerSubject) {
	scope := s.Scope(t)
	m := contractMessage(scope, "inside@example.com")
	m.Attachments = []ports.Attachment{{Filename: "a.pdf", ContentType: "application/pdf", Data: samplePDF()}}
	ctx := ports.WithinTransaction(context.Background())
	if err := s.Mailer.Send(ctx, m); !errors.Is(err, ports.ErrInsideTransaction) {
		t.Errorf("Send inside a unit of work = %v, want ports.ErrInsideTransaction", err)
	}
	if got := s.Delivered(t, scope, m.To); len(got) != 0 {
		t.Errorf("delivered %d messages from inside a unit of work", len(got))
	}
}
