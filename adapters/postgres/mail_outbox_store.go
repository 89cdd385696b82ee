package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

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

// mailErrorText is e as stored: at most maxMailError bytes of valid UTF-8 without NUL bytes,
// so that one mail's error text can never fail the statement that records a whole batch.
func mailErrorText(e string) string {
	if len(e) > maxMailError {
		e = e[:maxMailError]
	}
	return strings.ReplaceAll(strings.ToValidUTF8(e, ""), "\x00", "")
}

// recordMailsSQL records the outcomes of claimed attempts, one per element of its arrays:
// merchant, environment, id, the attempt that claimed the row, status, next attempt (pending),
// error, completion (sent, dropped). A row whose attempt is not the one that claimed it last
// is left alone.
const recordMailsSQL = `UPDATE mail_outbox o SET status = v.status,
		next_attempt_at = COALESCE(v.next_attempt_at, o.next_attempt_at), last_error = v.last_error,
		completed_at = v.completed_at
	FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::text[], $6::timestamptz[], $7::text[], $8::timestamptz[])
		AS v (merchant_id, environment, id, attempts, status, next_attempt_at, last_error, completed_at)
	WHERE o.merchant_id = v.merchant_id AND o.environment = v.environment AND o.id = v.id
		AND o.attempts = v.attempts AND o.status = 'pending'`

// RecordMails stores the outcomes of claimed attempts with one statement. Only the attempt
// that claimed a row last may record: an attempt that outlived its lease (and was claimed
// again) is ignored.
func (s *MailOutboxStore) RecordMails(ctx context.Context, rs []mail.Result) error {
	if len(rs) == 0 {
		return nil
	}
	n := len(rs)
	merchants, envs, ids, statuses := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	attempts := make([]int64, n)
	nexts, errs, completed := make([]sql.NullString, n), make([]sql.NullString, n), make([]sql.NullString, n)
	stamp := func(t time.Time) sql.NullString {
		return sql.NullString{String: t.UTC().Format(time.RFC3339Nano), Valid: true}
	}
	for i, r := range rs {
		sc, o := r.Job.Mail.Scope, r.Outcome
		merchants[i], envs[i], ids[i], attempts[i], statuses[i] = sc.MerchantID, string(sc.Env), r.Job.ID, int64(r.Job.Attempt), string(o.Status)
		if o.Error != "" {
			errs[i] = sql.NullString{String: mailErrorText(o.Error), Valid: true}
		}
		switch o.Status {
		case mail.Pending:
			nexts[i] = stamp(o.NextAttempt)
		case mail.Sent, mail.Dropped:
			completed[i] = stamp(o.At)
		default:
			return fmt.Errorf("mail_outbox: record: unknown status %q", o.Status)
		}
	}
	_, err := s.db.ExecContext(ctx, recordMailsSQL, pq.Array(merchants), pq.Array(envs), pq.Array(ids), pq.Array(attempts),
		pq.Array(statuses), pq.Array(nexts), pq.Array(errs), pq.Array(completed))
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

// receiptRecordsSQL reads payments of any scopes, named by three arrays (merchant,
// environment, id), with their SEPA account and their merchant's name.
var receiptRecordsSQL = `SELECT ` + qualified("p", paymentColumns) + `, p.sepa_last4, m.name AS merchant_name
	FROM payments p JOIN merchants m ON m.id = p.merchant_id
	WHERE (p.merchant_id, p.environment, p.id) IN (SELECT * FROM unnest($1::text[], $2::text[], $3::text[]))`

// ReceiptRecords reads the payments of keys with one statement (see payments.ReceiptSource).
func (s *ReceiptSource) ReceiptRecords(ctx context.Context, keys []payments.ReceiptKey) (map[payments.ReceiptKey]payments.ReceiptFacts, error) {
	merchants, envs, ids := make([]string, len(keys)), make([]string, len(keys)), make([]string, len(keys))
	for i, k := range keys {
		merchants[i], envs[i], ids[i] = k.Scope.MerchantID, string(k.Scope.Env), k.PaymentID
	}
	var rows []struct {
		paymentRow
		SEPALast4    *string `db:"sepa_last4"`
		MerchantName string  `db:"merchant_name"`
	}
	if err := s.db.SelectContext(ctx, &rows, receiptRecordsSQL, pq.Array(merchants), pq.Array(envs), pq.Array(ids)); err != nil {
		return nil, fmt.Errorf("payments: receipts: %w", err)
	}
	out := make(map[payments.ReceiptKey]payments.ReceiptFacts, len(rows))
	for i := range rows {
		r := &rows[i]
		p, err := r.payment()
		if err != nil {
			return nil, err
		}
		out[payments.ReceiptKey{Scope: p.Scope(), PaymentID: p.ID()}] = payments.ReceiptFacts{
			Record: &payments.Record{Payment: p, SEPALast4: deref(r.SEPALast4)}, MerchantName: r.MerchantName}
	}
	return out, nil
}

// qualified prefixes each column of a comma-separated list with alias.
func qualified(alias, columns string) string {
	cols := strings.Split(columns, ", ")
	for i, c := range cols {
		cols[i] = alias + "." + c
	}
	return strings.Join(cols, ", ")
}
