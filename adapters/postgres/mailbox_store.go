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
	_ ports.Mailer  = (*MailboxStore)(nil)
	_ ports.Mailbox = (*MailboxStore)(nil)
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
	if err := m.Validate(); err != nil {
		return err
	}
	now, err := s.clocks.Now(ctx, m.Scope)
	if err != nil {
		return fmt.Errorf("mailbox: clock: %w", err)
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
		return ports.Permanent(fmt.Errorf("mailbox: headers: %w", err))
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO mailbox_messages
		(merchant_id, environment, id, from_address, to_address, subject, text_body, html_body, headers, created)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		m.Scope.MerchantID, string(m.Scope.Env), core.NewID(MailboxIDPrefix), from, m.To, m.Subject,
		m.Text, m.HTML, hdr, now.UTC()); err != nil {
		return fmt.Errorf("mailbox_messages: insert: %w", err)
	}
	return nil
}

const mailboxCols = `merchant_id, environment, id, from_address, to_address, subject, text_body, html_body, headers, created`

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
