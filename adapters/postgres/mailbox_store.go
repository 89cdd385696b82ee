package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/mail"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// MailboxIDPrefix is the prefix of development mailbox message ids.
const MailboxIDPrefix = "msg_"

// MailboxStore is the development mailbox: a ports.Mailer that keeps every message in
// mailbox_messages instead of sending it, so that `make run` needs no mail server, and the
// ports.Mailbox the dashboard's test mode reads them through.
type MailboxStore struct {
	db     handle
	clocks ports.Clocks
	from   string
}

var (
	_ ports.BatchMailer = (*MailboxStore)(nil)
	_ ports.Mailbox     = (*MailboxStore)(nil)
)

// NewMailboxStore returns the mailbox on db. clocks dates the messages with the scope's time
// (the sandbox test clock in test mode); defaultFrom is recorded for messages without From.
func NewMailboxStore(db *sqlx.DB, clocks ports.Clocks, defaultFrom string) (*MailboxStore, error) {
	if clocks == nil {
		return nil, errors.New("mailbox: a clock is required")
	}
	if _, err := mail.ParseAddress(defaultFrom); err != nil {
		return nil, fmt.Errorf("mailbox: default sender: %w", err)
	}
	return &MailboxStore{db: wrap(db), clocks: clocks, from: defaultFrom}, nil
}

// Send stores m. An invalid message is a permanent failure (ports.ErrPermanent); a database
// failure is transient.
func (s *MailboxStore) Send(ctx context.Context, m ports.Message) error {
	return s.SendBatch(ctx, []ports.Message{m})[0]
}

// insertMailboxSQL keeps messages, one per element of its arrays, with one statement.
// A message of a queued mail that the mailbox already keeps (the same mail_id: a worker died
// between this statement and marking the mail sent, and the mail was claimed again) is not
// kept twice: ON CONFLICT on mailbox_messages_mail_id skips it, and it counts as delivered.
// insertMailboxSQL keeps messages, one per element of its first eleven arrays, and their
// attachments, one per element of the last five, with one statement.
// A message of a queued mail that the mailbox already keeps (the same mail_id: a worker died
// between this statement and marking the mail sent, and the mail was claimed again) is not
// kept twice: ON CONFLICT on mailbox_messages_mail_id skips it, its attachments join no kept
// row and are skipped with it, and it counts as delivered.
const insertMailboxSQL = `WITH kept AS (
	INSERT INTO mailbox_messages
	(merchant_id, environment, id, mail_id, from_address, to_address, subject, text_body, html_body, headers, created)
	SELECT merchant_id, environment, id, NULLIF(mail_id, ''), from_address, to_address, subject, text_body, html_body, headers::jsonb, created
	FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::timestamptz[], $11::text[])
		AS v (merchant_id, environment, id, from_address, to_address, subject, text_body, html_body, headers, created, mail_id)
	ON CONFLICT (merchant_id, environment, mail_id) WHERE mail_id IS NOT NULL DO NOTHING
	RETURNING merchant_id, environment, id)
	INSERT INTO mailbox_attachments (message_id, position, merchant_id, environment, filename, content_type, data)
	SELECT a.message_id, a.position, kept.merchant_id, kept.environment, a.filename, a.content_type, a.data
	FROM unnest($12::text[], $13::integer[], $14::text[], $15::text[], $16::bytea[])
		AS a (message_id, position, filename, content_type, data)
	JOIN kept ON kept.id = a.message_id`

// SendBatch stores ms with one statement (ports.BatchMailer), each dated with its scope's
// clock (read once per scope), at most once per MailID. An invalid message is a permanent failure of its own; a
// database failure is a transient failure of every message the statement would have kept.
//
// Inside a unit of work it keeps nothing: every message answers ports.ErrInsideTransaction
// (the development mailbox stands in for a mail server, and is refused where SMTP would be).
func (s *MailboxStore) SendBatch(ctx context.Context, ms []ports.Message) []error {
	errs := make([]error, len(ms))
	if err := ports.OutsideTransaction(ctx); err != nil {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	n := len(ms)
	merchants, envs, ids, froms, tos := make([]string, 0, n), make([]string, 0, n), make([]string, 0, n), make([]string, 0, n), make([]string, 0, n)
	subjects, texts, htmls, hdrs, created := make([]string, 0, n), make([]string, 0, n), make([]string, 0, n), make([]string, 0, n), make([]string, 0, n)
	mailIDs := make([]string, 0, n)
	var attMsg, attName, attType []string
	var attPos []int64
	var attData pq.ByteaArray
	var kept []int
	nows := map[core.Scope]time.Time{}
	for i, m := range ms {
		if errs[i] = m.Validate(); errs[i] != nil {
			continue
		}
		now, ok := nows[m.Scope]
		if !ok {
			t, err := s.clocks.Now(ctx, m.Scope)
			if err != nil {
				errs[i] = fmt.Errorf("mailbox: clock: %w", err)
				continue
			}
			now, nows[m.Scope] = t, t
		}
		from := m.From
		if from == "" {
			from = s.from
		}
		headers := m.Headers
		if headers == nil {
			headers = map[string]string{}
		}
		hdr, err := jsonText(headers)
		if err != nil {
			errs[i] = ports.Permanent(fmt.Errorf("mailbox: headers: %w", err))
			continue
		}
		kept = append(kept, i)
		id := core.NewID(MailboxIDPrefix)
		for pos, a := range m.Attachments {
			attMsg, attPos, attName = append(attMsg, id), append(attPos, int64(pos)), append(attName, a.Filename)
			attType, attData = append(attType, a.ContentType), append(attData, a.Data)
		}
		merchants, envs, ids = append(merchants, m.Scope.MerchantID), append(envs, string(m.Scope.Env)), append(ids, id)
		froms, tos, subjects = append(froms, from), append(tos, m.To), append(subjects, m.Subject)
		texts, htmls, hdrs = append(texts, m.Text), append(htmls, m.HTML), append(hdrs, hdr)
		created, mailIDs = append(created, now.UTC().Format(time.RFC3339Nano)), append(mailIDs, m.MailID)
	}
	if len(kept) == 0 {
		return errs
	}
	_, err := s.db.ExecContext(ctx, insertMailboxSQL, pq.Array(merchants), pq.Array(envs), pq.Array(ids), pq.Array(froms),
		pq.Array(tos), pq.Array(subjects), pq.Array(texts), pq.Array(htmls), pq.Array(hdrs), pq.Array(created), pq.Array(mailIDs),
		pq.Array(attMsg), pq.Array(attPos), pq.Array(attName), pq.Array(attType), attData)
	var pe *pq.Error
	if err != nil && len(kept) > 1 && errors.As(err, &pe) && (pe.Code.Class() == "22" || pe.Code.Class() == "23") {
		// A message the database refuses (a NUL byte in a body: data exception) must not fail
		// the others: each is kept on its own, and only the refused one fails.
		for _, i := range kept {
			errs[i] = s.SendBatch(ctx, []ports.Message{ms[i]})[0]
		}
		return errs
	}
	if err != nil {
		err = fmt.Errorf("mailbox_messages: insert: %w", err)
		for _, i := range kept {
			errs[i] = err
		}
	}
	return errs
}

// mailboxCols are a message's columns and, as a JSON array, what its attachments are (not
// their bytes), in order.
const mailboxCols = `merchant_id, environment, id, from_address, to_address, subject, text_body, html_body, headers, created,
	(SELECT COALESCE(jsonb_agg(jsonb_build_object('index', a.position, 'filename', a.filename,
		'content_type', a.content_type, 'size', octet_length(a.data)) ORDER BY a.position), '[]'::jsonb)
	 FROM mailbox_attachments a
	 WHERE a.message_id = mailbox_messages.id AND a.merchant_id = mailbox_messages.merchant_id
	   AND a.environment = mailbox_messages.environment) AS attachments`

type mailboxRow struct {
	MerchantID  string    `db:"merchant_id"`
	Environment string    `db:"environment"`
	ID          string    `db:"id"`
	From        string    `db:"from_address"`
	To          string    `db:"to_address"`
	Subject     string    `db:"subject"`
	Text        string    `db:"text_body"`
	HTML        string    `db:"html_body"`
	Headers     []byte    `db:"headers"`
	Created     time.Time `db:"created"`
	Attachments []byte    `db:"attachments"`
}

type mailboxAttachmentJSON struct {
	Index       int    `json:"index"`
	Filename    string `json:"filename"`
	ContentType string `json:"content_type"`
	Size        int64  `json:"size"`
}

func (r *mailboxRow) message() (ports.MailboxMessage, error) {
	m := ports.MailboxMessage{
		ID: r.ID, Scope: core.Scope{MerchantID: r.MerchantID, Env: core.Environment(r.Environment)},
		From: r.From, To: r.To, Subject: r.Subject, Text: r.Text, HTML: r.HTML, Created: r.Created.UTC(),
	}
	if err := json.Unmarshal(r.Headers, &m.Headers); err != nil {
		return ports.MailboxMessage{}, fmt.Errorf("mailbox message %s: headers: %w", r.ID, err)
	}
	if len(m.Headers) == 0 {
		m.Headers = nil
	}
	var as []mailboxAttachmentJSON
	if err := json.Unmarshal(r.Attachments, &as); err != nil {
		return ports.MailboxMessage{}, fmt.Errorf("mailbox message %s: attachments: %w", r.ID, err)
	}
	for _, a := range as {
		m.Attachments = append(m.Attachments, ports.MailboxAttachment(a))
	}
	return m, nil
}

// ListMailbox returns one page of the scope's messages, newest first. A cursor that is not a
// message of the scope is 400 starting_after_invalid / ending_before_invalid.
func (s *MailboxStore) ListMailbox(ctx context.Context, scope core.Scope, q core.ListQuery) (core.Page[ports.MailboxMessage], error) {
	q, err := q.Normalize()
	if err != nil {
		return core.Page[ports.MailboxMessage]{}, err
	}
	rows, more, err := pageBySeq[mailboxRow](ctx, s.db, pageQuery{table: "mailbox_messages", columns: mailboxCols, scope: scope, q: q})
	if err != nil {
		return core.Page[ports.MailboxMessage]{}, err
	}
	page := core.Page[ports.MailboxMessage]{Items: make([]ports.MailboxMessage, 0, len(rows)), HasMore: more}
	for i := range rows {
		m, err := rows[i].message()
		if err != nil {
			return core.Page[ports.MailboxMessage]{}, err
		}
		page.Items = append(page.Items, m)
	}
	return page, nil
}

// GetMailboxMessage returns one message of the scope, or 404 mailbox_message_not_found.
func (s *MailboxStore) GetMailboxMessage(ctx context.Context, scope core.Scope, id string) (ports.MailboxMessage, error) {
	var r mailboxRow
	err := s.db.GetContext(ctx, &r, `SELECT `+mailboxCols+` FROM mailbox_messages
		WHERE merchant_id = $1 AND environment = $2 AND id = $3`, scope.MerchantID, string(scope.Env), id)
	if errors.Is(err, sql.ErrNoRows) {
		return ports.MailboxMessage{}, core.NotFound("mailbox_message", "id", id)
	}
	if err != nil {
		return ports.MailboxMessage{}, fmt.Errorf("mailbox_messages: get: %w", err)
	}
	return r.message()
}

// MailboxAttachmentSQL reads one file of a message by the attachments' primary key, the tenant
// checked on the row (planner cases name it).
const MailboxAttachmentSQL = `SELECT filename, content_type, data FROM mailbox_attachments
	WHERE message_id = $1 AND position = $2 AND merchant_id = $3 AND environment = $4`

// GetMailboxAttachment returns file index of message id of the scope with its bytes, or 404
// mailbox_attachment_not_found (for an unknown message too).
func (s *MailboxStore) GetMailboxAttachment(ctx context.Context, scope core.Scope, id string, index int) (ports.Attachment, error) {
	var r struct {
		Filename    string `db:"filename"`
		ContentType string `db:"content_type"`
		Data        []byte `db:"data"`
	}
	err := s.db.GetContext(ctx, &r, MailboxAttachmentSQL, id, index, scope.MerchantID, string(scope.Env))
	if errors.Is(err, sql.ErrNoRows) {
		return ports.Attachment{}, core.NotFound("mailbox_attachment", "id", id)
	}
	if err != nil {
		return ports.Attachment{}, fmt.Errorf("mailbox_attachments: get: %w", err)
	}
	return ports.Attachment{Filename: r.Filename, ContentType: r.ContentType, Data: r.Data}, nil
}
