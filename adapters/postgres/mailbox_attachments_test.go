package postgres_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/mail/mailtest"
	"github.com/kassa-pay/kassa/ports"
)

// The development mailbox keeps a message's files with it, in order and byte for byte, lists
// what they are without their bytes, and serves one file to its own merchant environment only.
// A second delivery of the same queued mail keeps neither the message nor its files again.
func TestMailboxKeepsAttachments(t *testing.T) {
	t.Parallel()
	mb, scope, other := newMailbox(t)
	ctx := context.Background()
	pdf := append([]byte("%PDF-1.7\n\x00\x01\xff\xfe"), bytes.Repeat([]byte{0, 0xff}, 512)...)
	m := mailMsg(scope, 1)
	m.MailID = "mob_attach1"
	m.Attachments = []ports.Attachment{
		{Filename: "ACME-INV-2026-0001.pdf", ContentType: "application/pdf", Data: pdf},
		{Filename: "terms.txt", ContentType: "text/plain; charset=utf-8", Data: []byte("Terms\n")},
	}
	plain := mailMsg(scope, 2)
	if errs := mb.SendBatch(ctx, []ports.Message{m, plain}); errs[0] != nil || errs[1] != nil {
		t.Fatal(errs)
	}
	if err := mb.Send(ctx, m); err != nil { // the same queued mail delivered again
		t.Fatal(err)
	}
	page, err := mb.ListMailbox(ctx, scope, core.ListQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 2 {
		t.Fatalf("kept %d messages, want 2", len(page.Items))
	}
	got := page.Items[1] // oldest last
	if page.Items[0].Attachments != nil {
		t.Errorf("message without files lists %v", page.Items[0].Attachments)
	}
	want := []ports.MailboxAttachment{
		{Index: 0, Filename: "ACME-INV-2026-0001.pdf", ContentType: "application/pdf", Size: int64(len(pdf))},
		{Index: 1, Filename: "terms.txt", ContentType: "text/plain; charset=utf-8", Size: 6},
	}
	if len(got.Attachments) != 2 || got.Attachments[0] != want[0] || got.Attachments[1] != want[1] {
		t.Fatalf("attachments = %+v, want %+v", got.Attachments, want)
	}
	one, err := mb.GetMailboxMessage(ctx, scope, got.ID)
	if err != nil || len(one.Attachments) != 2 {
		t.Fatalf("GetMailboxMessage: %+v, %v", one.Attachments, err)
	}
	a, err := mb.GetMailboxAttachment(ctx, scope, got.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if a.Filename != "ACME-INV-2026-0001.pdf" || a.ContentType != "application/pdf" || !bytes.Equal(a.Data, pdf) {
		t.Errorf("attachment 0 = %q %q, %d bytes (equal: %v)", a.Filename, a.ContentType, len(a.Data), bytes.Equal(a.Data, pdf))
	}
	var ce *core.Error
	for name, call := range map[string]func() error{
		"past the last":    func() error { _, err := mb.GetMailboxAttachment(ctx, scope, got.ID, 2); return err },
		"unknown message":  func() error { _, err := mb.GetMailboxAttachment(ctx, scope, "msg_unknown", 0); return err },
		"another merchant": func() error { _, err := mb.GetMailboxAttachment(ctx, other(), got.ID, 0); return err },
		"other environment": func() error {
			_, err := mb.GetMailboxAttachment(ctx, core.Scope{MerchantID: scope.MerchantID, Env: core.EnvLive}, got.ID, 0)
			return err
		},
	} {
		if err := call(); !errors.As(err, &ce) || ce.Code != "mailbox_attachment_not_found" {
			t.Errorf("%s: %v, want mailbox_attachment_not_found", name, err)
		}
	}
}

// The development mailbox passes the mailer contract: what it keeps is what the dashboard
// shows and serves.
func TestMailboxMailerContract(t *testing.T) {
	t.Parallel()
	mailtest.RunMailer(t, func(t *testing.T) mailtest.MailerSubject {
		mb, scope, _ := newMailbox(t)
		return mailtest.MailerSubject{
			Mailer: mb,
			Scope:  func(*testing.T) core.Scope { return scope },
			Delivered: func(t *testing.T, scope core.Scope, to string) []ports.Message {
				ctx := context.Background()
				page, err := mb.ListMailbox(ctx, scope, core.ListQuery{Limit: 100})
				if err != nil {
					t.Fatal(err)
				}
				var out []ports.Message
				for i := len(page.Items) - 1; i >= 0; i-- { // oldest first
					m := page.Items[i]
					if m.To != to {
						continue
					}
					msg := ports.Message{Scope: m.Scope, To: m.To, Subject: m.Subject, Text: m.Text, HTML: m.HTML}
					for _, f := range m.Attachments {
						a, err := mb.GetMailboxAttachment(ctx, scope, m.ID, f.Index)
						if err != nil {
							t.Fatal(err)
						}
						if int64(len(a.Data)) != f.Size || a.Filename != f.Filename || a.ContentType != f.ContentType {
							t.Errorf("listed %+v, served %q %q %d bytes", f, a.Filename, a.ContentType, len(a.Data))
						}
						msg.Attachments = append(msg.Attachments, a)
					}
					out = append(out, msg)
				}
				return out
			},
		}
	})
}

// A file of a message is found by the attachments' primary key (the message's id leads it), in
// a database never analysed and after ANALYZE, with the tenant checked on the one row found.
func TestMailboxAttachmentLookupPlan(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	if _, err := db.Exec(`INSERT INTO mailbox_messages (merchant_id, environment, id, from_address, to_address, subject, text_body, created)
		SELECT $1, $2, 'msg_p' || g, 'a@b.example', 'c@d.example', 's', 't', now() FROM generate_series(1, 2000) g`,
		scope.MerchantID, string(scope.Env)); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO mailbox_attachments (message_id, position, merchant_id, environment, filename, content_type, data)
		SELECT 'msg_p' || g, 0, $1, $2, 'f.pdf', 'application/pdf', '\x25504446'::bytea FROM generate_series(1, 2000) g`,
		scope.MerchantID, string(scope.Env)); err != nil {
		t.Fatal(err)
	}
	tenant := []string{"((merchant_id = $3) AND (environment = $4))", "((merchant_id = 'x'::text) AND (environment = 'test'::text))"}
	for _, state := range []string{"never analysed", "analysed"} {
		if state == "analysed" {
			if _, err := db.Exec("ANALYZE mailbox_attachments"); err != nil {
				t.Fatal(err)
			}
		}
		p := plan(t, db, postgres.MailboxAttachmentSQL, "msg_p7", 0, "x", "test")
		ok := strings.Contains(p, "mailbox_attachments_pkey") && !strings.Contains(p, "Seq Scan")
		for _, l := range strings.Split(p, "\n") {
			if f, found := strings.CutPrefix(strings.TrimSpace(l), "Filter: "); found && !slices.Contains(tenant, f) {
				ok = false
			}
		}
		if !ok {
			t.Errorf("%s: want the primary key of mailbox_attachments; plan:\n%s", state, p)
		}
	}
}
