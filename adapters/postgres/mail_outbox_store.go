package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/mail"
	"github.com/kassa-pay/kassa/modules/payments"
)

// MailOutboxIDPrefix is the prefix of mail_outbox row ids.
const MailOutboxIDPrefix = "mob_"

// mailColumns is the number of parameters of one mail in mailInsert.
const mailColumns = 6

// mailInsert is the statement that queues mails, starting at placeholder $first, and its
// arguments. Each mail is due at once: the database's time in whole seconds, as the workers'
// clock (core.SystemClock) reads it. A subject has at most one mail of a kind: queueing it
// again is a no-op.
func mailInsert(mails []core.Mail, first int) (string, []any) {
	rows := make([]string, len(mails))
	args := make([]any, 0, mailColumns*len(mails))
	for i, m := range mails {
		n := first + i*mailColumns
		rows[i] = fmt.Sprintf("($%d, $%d, $%d, $%d, $%d, $%d::timestamptz)", n, n+1, n+2, n+3, n+4, n+5)
		args = append(args, m.Scope.MerchantID, string(m.Scope.Env), core.NewID(MailOutboxIDPrefix),
			string(m.Kind), m.SubjectID, m.Created.UTC())
	}
	q := `INSERT INTO mail_outbox (merchant_id, environment, id, kind, subject_id, next_attempt_at, created)
		SELECT v.merchant_id, v.environment, v.id, v.kind, v.subject_id, date_trunc('second', now()), v.created
		FROM (VALUES ` + strings.Join(rows, ", ") + `) AS v (merchant_id, environment, id, kind, subject_id, created)`
	return q + ` ON CONFLICT (merchant_id, environment, subject_id, kind) DO NOTHING`, args
}

// MailOutboxStore is the mail queue the mail worker drains (mail.Store). Rows are written in
// the transactions of their causes (mailInsert, through the unit of work's mail queue); this
// store claims them (SKIP LOCKED with a lease) and records the outcome of each attempt.
type MailOutboxStore struct{ db handle }

// NewMailOutboxStore returns the outbox store on db.
func NewMailOutboxStore(db *sqlx.DB) *MailOutboxStore { return &MailOutboxStore{db: wrap(db)} }

var _ mail.Store = (*MailOutboxStore)(nil)

type mailRow struct {
	MerchantID  string    `db:"merchant_id"`
	Environment string    `db:"environment"`
	ID          string    `db:"id"`
	Kind        string    `db:"kind"`
	SubjectID   string    `db:"subject_id"`
	Attempts    int       `db:"attempts"`
	Created     time.Time `db:"created"`
}

// ClaimMail claims up to limit due mails (see mail.Store).
func (s *MailOutboxStore) ClaimMail(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]*mail.Job, error) {
	var rows []mailRow
	err := s.db.SelectContext(ctx, &rows, `WITH due AS (
			SELECT merchant_id, environment, id FROM mail_outbox
			WHERE status = 'pending' AND next_attempt_at <= $1
			ORDER BY next_attempt_at
			LIMIT $3
			FOR UPDATE SKIP LOCKED
		)
		UPDATE mail_outbox o SET attempts = o.attempts + 1, next_attempt_at = $2
		FROM due WHERE o.merchant_id = due.merchant_id AND o.environment = due.environment AND o.id = due.id
		RETURNING o.merchant_id, o.environment, o.id, o.kind, o.subject_id, o.attempts, o.created`,
		now, now.Add(lease), limit)
	if err != nil {
		return nil, fmt.Errorf("mail_outbox: claim: %w", err)
	}
	jobs := make([]*mail.Job, len(rows))
	for i, r := range rows {
		jobs[i] = &mail.Job{ID: r.ID, Attempt: r.Attempts, Mail: core.Mail{
			Kind:      core.MailKind(r.Kind),
			Scope:     core.Scope{MerchantID: r.MerchantID, Env: core.Environment(r.Environment)},
			SubjectID: r.SubjectID,
			Created:   r.Created.UTC(),
		}}
	}
	// Oldest first, as they were queued (RETURNING keeps no order).
	slices.SortFunc(jobs, func(a, b *mail.Job) int {
		if c := a.Mail.Created.Compare(b.Mail.Created); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return jobs, nil
}

// maxMailError bounds the stored error text.
const maxMailError = 500

// RecordMail stores the outcome of a claimed attempt. Only the attempt that claimed the row
// last may record: an attempt that outlived its lease (and was claimed again) is ignored.
func (s *MailOutboxStore) RecordMail(ctx context.Context, job *mail.Job, o mail.Outcome) error {
	sc := job.Mail.Scope
	var lastErr *string
	if o.Error != "" {
		e := o.Error
		if len(e) > maxMailError {
			e = e[:maxMailError]
		}
		lastErr = &e
	}
	var next, completed *time.Time
	switch o.Status {
	case mail.Pending:
		next = &o.NextAttempt
	case mail.Sent, mail.Dropped:
		completed = &o.At
	default:
		return fmt.Errorf("mail_outbox: record: unknown status %q", o.Status)
	}
	_, err := s.db.ExecContext(ctx, `UPDATE mail_outbox SET status = $5,
			next_attempt_at = COALESCE($6, next_attempt_at), last_error = $7, completed_at = $8
		WHERE merchant_id = $1 AND environment = $2 AND id = $3 AND attempts = $4 AND status = 'pending'`,
		sc.MerchantID, string(sc.Env), job.ID, job.Attempt, string(o.Status), next, lastErr, completed)
	if err != nil {
		return fmt.Errorf("mail_outbox: record: %w", err)
	}
	return nil
}

// NextMailDue returns the earliest next attempt among pending mails.
func (s *MailOutboxStore) NextMailDue(ctx context.Context) (time.Time, bool, error) {
	var at sql.NullTime
	if err := s.db.GetContext(ctx, &at, `SELECT min(next_attempt_at) FROM mail_outbox WHERE status = 'pending'`); err != nil {
		return time.Time{}, false, fmt.Errorf("mail_outbox: next due: %w", err)
	}
	return at.Time, at.Valid, nil
}

// ReceiptSource reads what a receipt is composed from (payments.ReceiptSource).
type ReceiptSource struct{ db handle }

// NewReceiptSource returns the receipt source on db.
func NewReceiptSource(db *sqlx.DB) *ReceiptSource { return &ReceiptSource{db: wrap(db)} }

var _ payments.ReceiptSource = (*ReceiptSource)(nil)

// ReceiptRecord reads a payment of scope with its SEPA account and its merchant's name.
func (s *ReceiptSource) ReceiptRecord(ctx context.Context, scope core.Scope, paymentID string) (*payments.Record, string, error) {
	var r struct {
		paymentRow
		SEPALast4    *string `db:"sepa_last4"`
		MerchantName string  `db:"merchant_name"`
	}
	err := s.db.GetContext(ctx, &r, `SELECT `+qualified("p", paymentColumns)+`, p.sepa_last4, m.name AS merchant_name
		FROM payments p JOIN merchants m ON m.id = p.merchant_id
		WHERE p.merchant_id = $1 AND p.environment = $2 AND p.id = $3`, scope.MerchantID, string(scope.Env), paymentID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, "", core.NotFound("payment", "id", paymentID)
	}
	if err != nil {
		return nil, "", fmt.Errorf("payments: receipt: %w", err)
	}
	p, err := r.payment()
	if err != nil {
		return nil, "", err
	}
	return &payments.Record{Payment: p, SEPALast4: deref(r.SEPALast4)}, r.MerchantName, nil
}

// qualified prefixes each column of a comma-separated list with alias.
func qualified(alias, columns string) string {
	cols := strings.Split(columns, ", ")
	for i, c := range cols {
		cols[i] = alias + "." + c
	}
	return strings.Join(cols, ", ")
}
