package ports

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/mail"
	"strings"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// Message is one e-mail to one recipient, sent on behalf of a merchant environment. Text is
// the plain-text part and HTML the optional HTML alternative; adapters send both as
// multipart/alternative. From is optional: empty means the adapter's configured sender.
// Headers are extra headers (e.g. "X-Kassa-Payment"); the structural ones (From, To, Subject,
// Date, Message-ID, MIME and content headers) cannot be set through it. Attachments are files
// sent with the message (an invoice's PDF): adapters then send multipart/mixed, the
// text/HTML alternative first and the files after it, in order.
//
// MailID is the id of the queued mail the message delivers (empty for a message sent outside
// the mail queue). A delivery of the same mail again (a worker that died before it recorded
// the first) carries the same MailID: a mailer that keeps messages (the development mailbox)
// keeps one per MailID, and one that sends them (SMTP) derives the Message-ID from it, so
// that the receiving side can recognise the duplicate.
type Message struct {
	Scope       core.Scope
	MailID      string
	To          string
	Subject     string
	Text        string
	HTML        string
	From        string
	Headers     map[string]string
	Attachments []Attachment
}

// Attachment is one file sent with a message: its name as the recipient sees it (no path), its
// media type (e.g. "application/pdf") and its bytes.
type Attachment struct {
	Filename    string
	ContentType string
	Data        []byte
}

// Mailer sends e-mail. An error that wraps ErrPermanent (see IsPermanent) means this message
// can never be delivered as it is (a malformed address, a recipient the server refuses with a
// 5xx reply, a message over the size limit): drop it. Any other error is transient (the
// server is down or slow, a 4xx reply, a timeout, a database error) and the send may be
// retried later, e.g. by the outbox consumer.
type Mailer interface {
	Send(ctx context.Context, m Message) error
}

// BatchMailer is a Mailer that delivers several messages in one go: the development mailbox
// keeps a batch with one statement. SendBatch answers one error per message, in order, with
// the meaning of Send's (nil: delivered; ErrPermanent: never deliverable as it is; else
// transient). A mailer that talks to a mail server sends one message at a time and does not
// implement it.
type BatchMailer interface {
	Mailer
	SendBatch(ctx context.Context, ms []Message) []error
}

// ErrPermanent marks a failure that retrying will not cure.
var ErrPermanent = errors.New("mail: permanent failure")

// permanentError wraps a cause so that it matches both ErrPermanent and the cause.
type permanentError struct{ err error }

func (e *permanentError) Error() string   { return e.err.Error() }
func (e *permanentError) Unwrap() []error { return []error{ErrPermanent, e.err} }

// Permanent marks err as permanent (nil stays nil). errors.Is(result, ErrPermanent) holds and
// the cause stays reachable with errors.Is / errors.As.
func Permanent(err error) error {
	if err == nil || errors.Is(err, ErrPermanent) {
		return err
	}
	return &permanentError{err: err}
}

// IsPermanent reports whether err is a permanent mail failure.
func IsPermanent(err error) bool { return errors.Is(err, ErrPermanent) }

// Limits of a Message, checked by Validate.
const (
	MaxMailSubjectLen = 998     // one RFC 5322 line
	MaxMailBodyBytes  = 1 << 20 // Text and HTML together
	MaxMailHeaders    = 20
	MaxMailHeaderLen  = 998
	// MaxMailAttachments and MaxMailAttachmentBytes (all attachments together, before
	// encoding) bound the files of one message; MaxMailFilenameLen bounds a file's name.
	MaxMailAttachments     = 10
	MaxMailAttachmentBytes = 10 << 20
	MaxMailFilenameLen     = 255
)

// reservedHeaders are set by the adapters from the Message fields (or by the mail system) and
// may not be overridden; neither may any Content-* header.
var reservedHeaders = map[string]bool{
	"from": true, "to": true, "cc": true, "bcc": true, "subject": true, "date": true,
	"message-id": true, "mime-version": true, "sender": true, "return-path": true,
	"received": true,
}

// Validate checks a message before it is sent or stored. Every failure wraps ErrPermanent,
// since the same message would fail again. Error texts never contain the addresses or
// bodies.
func (m Message) Validate() error {
	bad := func(format string, args ...any) error {
		return Permanent(fmt.Errorf("mail: invalid message: "+format, args...))
	}
	if m.Scope.MerchantID == "" || !m.Scope.Env.Valid() {
		return bad("scope is missing")
	}
	if !core.ValidEmail(m.To) {
		return bad("recipient is not a bare e-mail address")
	}
	if m.From != "" {
		if strings.ContainsAny(m.From, "\r\n") {
			return bad("sender contains a line break")
		}
		if _, err := mail.ParseAddress(m.From); err != nil {
			return bad("sender is not an e-mail address")
		}
	}
	if strings.TrimSpace(m.Subject) == "" || len(m.Subject) > MaxMailSubjectLen || strings.ContainsAny(m.Subject, "\r\n") {
		return bad("subject must be one non-empty line of at most %d bytes", MaxMailSubjectLen)
	}
	if m.Text == "" {
		return bad("the plain-text part is missing")
	}
	if len(m.Text)+len(m.HTML) > MaxMailBodyBytes {
		return bad("body exceeds %d bytes", MaxMailBodyBytes)
	}
	if len(m.Headers) > MaxMailHeaders {
		return bad("more than %d extra headers", MaxMailHeaders)
	}
	for k, v := range m.Headers {
		if !validHeaderName(k) {
			return bad("header name %q is not a valid field name", k)
		}
		if reservedHeaders[strings.ToLower(k)] || strings.HasPrefix(strings.ToLower(k), "content-") {
			return bad("header %q is set by the mailer", k)
		}
		if len(v) > MaxMailHeaderLen || strings.ContainsAny(v, "\r\n") {
			return bad("header %q must be one line of at most %d bytes", k, MaxMailHeaderLen)
		}
	}
	return validateAttachments(m.Attachments)
}

// validateAttachments checks the files of a message: at most MaxMailAttachments, each with a
// one-line name without a path and a media type of the form type/subtype, none empty, all
// together at most MaxMailAttachmentBytes.
func validateAttachments(as []Attachment) error {
	bad := func(format string, args ...any) error {
		return Permanent(fmt.Errorf("mail: invalid attachment: "+format, args...))
	}
	if len(as) > MaxMailAttachments {
		return bad("more than %d attachments", MaxMailAttachments)
	}
	total := 0
	for i, a := range as {
		if strings.TrimSpace(a.Filename) == "" || len(a.Filename) > MaxMailFilenameLen ||
			strings.ContainsAny(a.Filename, "/\\\"\x00\r\n") || a.Filename == "." || a.Filename == ".." {
			return bad("attachment %d: the file name must be one line of at most %d bytes without a path or quote", i, MaxMailFilenameLen)
		}
		if mt, _, err := mime.ParseMediaType(a.ContentType); err != nil || !strings.Contains(mt, "/") || strings.ContainsAny(a.ContentType, "\r\n") {
			return bad("attachment %d: content type is not a media type", i)
		}
		if len(a.Data) == 0 {
			return bad("attachment %d is empty", i)
		}
		total += len(a.Data)
	}
	if total > MaxMailAttachmentBytes {
		return bad("attachments exceed %d bytes", MaxMailAttachmentBytes)
	}
	return nil
}

// validHeaderName: RFC 5322 field names are printable US-ASCII except colon.
func validHeaderName(k string) bool {
	if k == "" || len(k) > 76 {
		return false
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; c < 33 || c > 126 || c == ':' {
			return false
		}
	}
	return true
}

// MailboxMessage is a message kept by the development mailbox instead of being sent; the
// dashboard's test mode shows them.
type MailboxMessage struct {
	ID      string // msg_…
	Scope   core.Scope
	From    string
	To      string
	Subject string
	Text    string
	HTML    string
	Headers map[string]string
	// Attachments are the message's files, in order, without their bytes (GetMailboxAttachment
	// reads one).
	Attachments []MailboxAttachment
	Created     time.Time
}

// MailboxAttachment describes one file of a kept message; Index is its position (from 0).
type MailboxAttachment struct {
	Index       int
	Filename    string
	ContentType string
	Size        int64
}

// Mailbox reads the messages the development mailbox kept for a scope.
type Mailbox interface {
	// ListMailbox returns one page of the scope's messages, newest first (D8 cursors).
	ListMailbox(ctx context.Context, scope core.Scope, q core.ListQuery) (core.Page[MailboxMessage], error)
	// GetMailboxMessage returns one message of the scope, or core.NotFound("mailbox_message").
	GetMailboxMessage(ctx context.Context, scope core.Scope, id string) (MailboxMessage, error)
	// GetMailboxAttachment returns file index of message id of the scope, with its bytes, or
	// core.NotFound("mailbox_attachment") (an unknown message included).
	GetMailboxAttachment(ctx context.Context, scope core.Scope, id string, index int) (Attachment, error)
}

// MailComposer writes the message of one kind of queued mail from its subject, when it is
// sent. An error that wraps ErrPermanent drops the mail; any other error is retried.
type MailComposer interface {
	ComposeMail(ctx context.Context, m core.Mail) (Message, error)
}

// BatchMailComposer is a MailComposer that writes several mails of its kind with one read of
// their subjects. ComposeMails answers one message and one error per mail, in order, each with
// the meaning of ComposeMail's.
type BatchMailComposer interface {
	MailComposer
	ComposeMails(ctx context.Context, ms []core.Mail) ([]Message, []error)
}
