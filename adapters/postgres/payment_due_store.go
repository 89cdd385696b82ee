package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
)

// recordRow is a payment row with the processor facts of payments.Record and its due time.
type recordRow struct {
	paymentRow
	ProcessorRef   string     `db:"processor_ref"`
	SettlesAt      *time.Time `db:"settles_at"`
	CardExpMonth   *int       `db:"card_exp_month"`
	CardExpYear    *int       `db:"card_exp_year"`
	SEPACountry    *string    `db:"sepa_country"`
	SEPALast4      *string    `db:"sepa_last4"`
	DisputeOpensAt *time.Time `db:"dispute_opens_at"`
	DisputeReason  *string    `db:"dispute_reason"`
	DueAt          time.Time  `db:"due_at"`
}

const recordExtraColumns = `processor_ref, settles_at, card_exp_month, card_exp_year, sepa_country, sepa_last4,
	dispute_opens_at, dispute_reason, due_at`

func (r *recordRow) record() (*payments.Record, error) {
	p, err := r.payment()
	if err != nil {
		return nil, err
	}
	rec := &payments.Record{Payment: p, ProcessorRef: r.ProcessorRef, SettlesAt: utcPtr(r.SettlesAt),
		SEPACountry: deref(r.SEPACountry), SEPALast4: deref(r.SEPALast4),
		DisputeOpensAt: utcPtr(r.DisputeOpensAt), DisputeReason: deref(r.DisputeReason)}
	if r.CardExpMonth != nil && r.CardExpYear != nil {
		rec.CardExpMonth, rec.CardExpYear = *r.CardExpMonth, *r.CardExpYear
	}
	return rec, nil
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// ClaimDue locks up to limit payments whose due_at ≤ until (FOR UPDATE SKIP LOCKED), earliest
// first, and applies fn to each in one transaction (see payments.DueStore).
func (st *PaymentStore) ClaimDue(ctx context.Context, scope *core.Scope, until time.Time, limit int, fn payments.DueFunc) (int, error) {
	args := []any{until}
	where := `p.due_at <= $1`
	order := `p.due_at, p.merchant_id, p.environment, p.id`
	if scope != nil {
		args = append(args, scope.MerchantID, string(scope.Env))
		where += ` AND p.merchant_id = $2 AND p.environment = $3`
		order = `p.due_at, p.id`
	} else {
		// Test payments of a merchant whose clock is frozen move only with that clock.
		where += ` AND (p.environment = 'live' OR NOT EXISTS (
			SELECT 1 FROM test_clocks c
			WHERE c.merchant_id = p.merchant_id AND c.environment = p.environment AND c.frozen_time IS NOT NULL))`
	}
	args = append(args, limit)
	query := fmt.Sprintf(`SELECT %s, %s FROM payments p WHERE %s ORDER BY %s LIMIT $%d FOR UPDATE OF p SKIP LOCKED`,
		paymentColumns, recordExtraColumns, where, order, len(args))
	claimed := 0
	err := inTx(ctx, st.db, func(tx *sqlx.Tx) error {
		var rows []recordRow
		if err := tx.SelectContext(ctx, &rows, query, args...); err != nil {
			return fmt.Errorf("payments: claim due: %w", err)
		}
		claimed = len(rows)
		for i := range rows {
			rec, err := rows[i].record()
			if err != nil {
				return err
			}
			if err := applyPaymentChange(ctx, tx, rec, fn); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return claimed, nil
}

// NextDue returns the earliest due_at ≤ until of scope's payments.
func (st *PaymentStore) NextDue(ctx context.Context, scope core.Scope, until time.Time) (time.Time, bool, error) {
	var at sql.NullTime
	if err := st.db.GetContext(ctx, &at, `SELECT min(due_at) FROM payments
		WHERE merchant_id = $1 AND environment = $2 AND due_at <= $3`, scope.MerchantID, string(scope.Env), until); err != nil {
		return time.Time{}, false, fmt.Errorf("payments: next due: %w", err)
	}
	return at.Time.UTC(), at.Valid, nil
}

// applyPaymentChange runs fn on a locked payment and writes what changed: the payment's state
// and settlement time, the dispute fn opened, the events, and the mail fn queued (the receipt
// of a payment that succeeded).
func applyPaymentChange(ctx context.Context, tx *sqlx.Tx, rec *payments.Record, fn payments.DueFunc) error {
	id := rec.Payment.ID()
	ch, err := fn(rec)
	if err != nil {
		return err
	}
	if rec.Payment == nil || rec.Payment.ID() != id {
		return errors.New("payments: claim due: the handler replaced the payment")
	}
	after := rec.Payment.Snapshot()
	var disputeID *string
	if d := ch.Dispute; d != nil {
		ds := d.Snapshot()
		if ds.PaymentID != id || ds.Scope != after.Scope || after.Status != payments.StatusDisputed {
			return errors.New("payments: claim due: the dispute does not belong to the disputed payment")
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO disputes
			(merchant_id, environment, id, payment_id, amount, currency, reason, status, evidence_due_by, created)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
			ds.Scope.MerchantID, string(ds.Scope.Env), ds.ID, ds.PaymentID, ds.Amount, string(ds.Currency),
			ds.Reason, string(ds.Status), ds.EvidenceDueBy, ds.Created); err != nil {
			return fmt.Errorf("disputes: insert: %w", err)
		}
		disputeID = &ds.ID
	}
	// A claimed payment changes (its state, its settlement time or its dispute), so the row is
	// written without comparing it with what was read; one the handler left alone is written
	// back as it was.
	if _, err := tx.ExecContext(ctx, `UPDATE payments SET status = $4, previous_status = $5, dispute_lost = $6,
		failure_code = $7, failure_message = $8, settles_at = $9, dispute_id = COALESCE($10, dispute_id)
		WHERE merchant_id = $1 AND environment = $2 AND id = $3`,
		after.Scope.MerchantID, string(after.Scope.Env), id, string(after.Status), previousStatus(after),
		after.DisputeLost, after.FailureCode, after.FailureMessage, rec.SettlesAt, disputeID); err != nil {
		return fmt.Errorf("payments: update: %w", err)
	}
	if err := insertMail(ctx, tx, ch.Mail); err != nil {
		return err
	}
	return insertEvents(ctx, tx, ch.Events)
}
