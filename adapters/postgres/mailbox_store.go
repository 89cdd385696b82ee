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
const insertMailboxSQL = `INSERT INTO mailbox_messages
	(merchant_id, environment, id, from_address, to_address, subject, text_body, html_body, headers, created)
	SELECT merchant_id, environment, id, from_address, to_address, subject, text_body, html_body, headers::jsonb, created
	FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::timestamptz[])
		AS v (merchant_id, environment, id, from_address, to_address, subject, text_body, html_body, headers, created)`

// SendBatch stores ms with one statement (ports.BatchMailer), each dated with its scope's
// clock (read once per scope). An invalid message is a permanent failure of its own; a
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
		merchants, envs, ids = append(merchants, m.Scope.MerchantID), append(envs, string(m.Scope.Env)), append(ids, core.NewID(MailboxIDPrefix))
		froms, tos, subjects = append(froms, from), append(tos, m.To), append(subjects, m.Subject)
		texts, htmls, hdrs = append(texts, m.Text), append(htmls, m.HTML), append(hdrs, hdr)
		created = append(created, now.UTC().Format(time.RFC3339Nano))
	}
	if len(kept) == 0 {
		return errs
	}
	_, err := s.db.ExecContext(ctx, insertMailboxSQL, pq.Array(merchants), pq.Array(envs), pq.Array(ids), pq.Array(froms),
		pq.Array(tos), pq.Array(subjects), pq.Array(texts), pq.Array(htmls), pq.Array(hdrs), pq.Array(created))
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
