package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
)

// MailOutboxIDPrefix is the prefix of mail_outbox row ids.
const MailOutboxIDPrefix = "mob_"

// queueReceipt queues the receipt of a payment inside the caller's transaction, dated at (the
// scope's time when the payment succeeded). It is due at once: the database's time in whole
// seconds, as the workers' clock (core.SystemClock) reads it. A payment has at most one
// receipt: a second queueing is a no-op.
func queueReceipt(ctx context.Context, tx *sqlx.Tx, scope core.Scope, paymentID string, at time.Time) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO mail_outbox
		(merchant_id, environment, id, kind, payment_id, next_attempt_at, created)
		VALUES ($1, $2, $3, 'receipt', $4, date_trunc('second', now()), $5)
		ON CONFLICT (merchant_id, environment, payment_id, kind) DO NOTHING`,
		scope.MerchantID, string(scope.Env), core.NewID(MailOutboxIDPrefix), paymentID, at.UTC()); err != nil {
		return fmt.Errorf("mail_outbox: queue receipt: %w", err)
	}
	return nil
}

// MailOutboxStore is the receipt outbox the receipt worker drains (payments.ReceiptStore).
// Rows are written by the payment store; this store claims them (SKIP LOCKED with a lease)
// and records the outcome of each attempt.
type MailOutboxStore struct{ db handle }

// NewMailOutboxStore returns the outbox store on db.
func NewMailOutboxStore(db *sqlx.DB) *MailOutboxStore { return &MailOutboxStore{db: wrap(db)} }

var _ payments.ReceiptStore = (*MailOutboxStore)(nil)

type receiptRow struct {
	MerchantID   string    `db:"merchant_id"`
	Environment  string    `db:"environment"`
	ID           string    `db:"id"`
	PaymentID    string    `db:"payment_id"`
	Attempts     int       `db:"attempts"`
	Created      time.Time `db:"created"`
	MerchantName string    `db:"merchant_name"`
	Email        string    `db:"customer_email"`
	Amount       int64     `db:"amount"`
	Currency     string    `db:"currency"`
	Reference    *string   `db:"reference"`
	CardBrand    *string   `db:"card_brand"`
	CardLast4    *string   `db:"card_last4"`
	SEPALast4    *string   `db:"sepa_last4"`
}

// ClaimReceipts claims up to limit due receipts (see payments.ReceiptStore).
func (s *MailOutboxStore) ClaimReceipts(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]*payments.ReceiptJob, error) {
	var rows []receiptRow
	err := inTx(ctx, s.db, func(tx *sqlx.Tx) error {
		err := tx.SelectContext(ctx, &rows, `WITH due AS (
				SELECT merchant_id, environment, id FROM mail_outbox
				WHERE status = 'pending' AND next_attempt_at <= $1
				ORDER BY next_attempt_at
				LIMIT $3
				FOR UPDATE SKIP LOCKED
			), claimed AS (
				UPDATE mail_outbox o SET attempts = o.attempts + 1, next_attempt_at = $2
				FROM due WHERE o.merchant_id = due.merchant_id AND o.environment = due.environment AND o.id = due.id
				RETURNING o.merchant_id, o.environment, o.id, o.payment_id, o.attempts, o.created
			)
			SELECT c.merchant_id, c.environment, c.id, c.payment_id, c.attempts, c.created,
				m.name AS merchant_name, p.customer_email, p.amount, p.currency, p.reference,
				p.card_brand, p.card_last4, p.sepa_last4
			FROM claimed c
			JOIN merchants m ON m.id = c.merchant_id
			JOIN payments p ON p.merchant_id = c.merchant_id AND p.environment = c.environment AND p.id = c.payment_id
			ORDER BY c.created, c.id`, now, now.Add(lease), limit)
		if err != nil {
			return fmt.Errorf("mail_outbox: claim: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	jobs := make([]*payments.ReceiptJob, len(rows))
	for i, r := range rows {
		jobs[i] = &payments.ReceiptJob{ID: r.ID, Attempt: r.Attempts, Receipt: payments.Receipt{
			Scope:        core.Scope{MerchantID: r.MerchantID, Env: core.Environment(r.Environment)},
			To:           r.Email,
			MerchantName: r.MerchantName,
			PaymentID:    r.PaymentID,
			Amount:       r.Amount,
			Currency:     core.Currency(r.Currency),
			Reference:    deref(r.Reference),
			CardBrand:    deref(r.CardBrand),
			CardLast4:    deref(r.CardLast4),
			IBANLast4:    deref(r.SEPALast4),
			Date:         r.Created.UTC(),
		}}
	}
	return jobs, nil
}

// maxMailError bounds the stored error text.
const maxMailError = 500

// RecordReceipt stores the outcome of a claimed attempt. Only the attempt that claimed the row
// last may record: an attempt that outlived its lease (and was claimed again) is ignored.
func (s *MailOutboxStore) RecordReceipt(ctx context.Context, job *payments.ReceiptJob, o payments.ReceiptOutcome) error {
	sc := job.Receipt.Scope
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
	case payments.ReceiptPending:
		next = &o.NextAttempt
	case payments.ReceiptSent, payments.ReceiptDropped:
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

// NextReceiptDue returns the earliest next attempt among pending receipts.
func (s *MailOutboxStore) NextReceiptDue(ctx context.Context) (time.Time, bool, error) {
	var at sql.NullTime
	if err := s.db.GetContext(ctx, &at, `SELECT min(next_attempt_at) FROM mail_outbox WHERE status = 'pending'`); err != nil {
		return time.Time{}, false, fmt.Errorf("mail_outbox: next due: %w", err)
	}
	return at.Time, at.Valid, nil
}
