package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

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
	DisputeID      *string    `db:"dispute_id"`
	AvailableAt    *time.Time `db:"available_at"`
	DueAt          *time.Time `db:"due_at"`
}

const recordExtraColumns = `processor_ref, settles_at, card_exp_month, card_exp_year, sepa_country, sepa_last4,
	dispute_opens_at, dispute_reason, dispute_id, available_at, due_at`

func (r *recordRow) record() (*payments.Record, error) {
	p, err := r.payment()
	if err != nil {
		return nil, err
	}
	rec := &payments.Record{Payment: p, ProcessorRef: r.ProcessorRef, SettlesAt: utcPtr(r.SettlesAt),
		SEPACountry: deref(r.SEPACountry), SEPALast4: deref(r.SEPALast4),
		DisputeOpensAt: utcPtr(r.DisputeOpensAt), DisputeReason: deref(r.DisputeReason), DisputeID: deref(r.DisputeID),
		AvailableAt: utcPtr(r.AvailableAt)}
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

// ListDue reads up to limit payments whose due_at ≤ until, earliest first, without locking
// them (see payments.DueStore). due_at is the stored projection of payments.Record.DueAt.
func (st *PaymentStore) ListDue(ctx context.Context, scope *core.Scope, until time.Time, limit int) ([]*payments.Record, error) {
	inScope, args := sweepScope("p", scope, []any{until})
	where := `p.due_at <= $1 AND ` + inScope
	order := `p.due_at, p.merchant_id, p.environment, p.id`
	if scope != nil {
		order = `p.due_at, p.id`
	}
	args = append(args, limit)
	var rows []recordRow
	if err := st.db.SelectContext(ctx, &rows, fmt.Sprintf(`SELECT %s, %s FROM payments p WHERE %s ORDER BY %s LIMIT $%d`,
		paymentColumns, recordExtraColumns, where, order, len(args)), args...); err != nil {
		return nil, fmt.Errorf("payments: list due: %w", err)
	}
	return recordsOf(rows)
}

func recordsOf(rows []recordRow) ([]*payments.Record, error) {
	out := make([]*payments.Record, len(rows))
	for i := range rows {
		rec, err := rows[i].record()
		if err != nil {
			return nil, err
		}
		out[i] = rec
	}
	return out, nil
}

// lockDuePayments locks the payments of recs that no other transaction holds (FOR UPDATE
// SKIP LOCKED), in due order, and reads them again (payments.PaymentRepository.LockDue).
func lockDuePayments(ctx context.Context, q sqlx.QueryerContext, recs []*payments.Record) ([]*payments.Record, error) {
	if len(recs) == 0 {
		return nil, nil
	}
	merchants, envs, ids := make([]string, len(recs)), make([]string, len(recs)), make([]string, len(recs))
	for i, r := range recs {
		sc := r.Payment.Scope()
		merchants[i], envs[i], ids[i] = sc.MerchantID, string(sc.Env), r.Payment.ID()
	}
	query := fmt.Sprintf(`SELECT %s, %s FROM payments p
		WHERE (p.merchant_id, p.environment, p.id) IN (SELECT * FROM unnest($1::text[], $2::text[], $3::text[]))
		ORDER BY p.due_at, p.merchant_id, p.environment, p.id FOR UPDATE OF p SKIP LOCKED`, paymentColumns, recordExtraColumns)
	var rows []recordRow
	if err := sqlx.SelectContext(ctx, q, &rows, query, pq.Array(merchants), pq.Array(envs), pq.Array(ids)); err != nil {
		return nil, fmt.Errorf("payments: lock due: %w", err)
	}
	return recordsOf(rows)
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

// saveDuePayment writes what the due sweep changed on a locked payment: its new state,
// settlement and availability times, and the dispute it opened (which becomes its dispute_id)
// (payments.PaymentRepository.SaveDue). It decides nothing, and writes no event or mail.
func saveDuePayment(ctx context.Context, tx sqlx.ExecerContext, rec *payments.Record, opened *payments.Dispute) error {
	if rec == nil || rec.Payment == nil {
		return errors.New("payments: save due: no payment")
	}
	after := rec.Payment.Snapshot()
	id := after.ID
	var disputeID *string
	if d := opened; d != nil {
		ds := d.Snapshot()
		if ds.PaymentID != id || ds.Scope != after.Scope || rec.DisputeID != ds.ID {
			return errors.New("payments: apply due: the dispute does not belong to the payment")
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
	res, err := tx.ExecContext(ctx, `UPDATE payments SET status = $4, previous_status = $5, dispute_lost = $6,
		failure_code = $7, failure_message = $8, settles_at = $9, dispute_id = COALESCE($10, dispute_id),
		available_at = $11
		WHERE merchant_id = $1 AND environment = $2 AND id = $3`,
		after.Scope.MerchantID, string(after.Scope.Env), id, string(after.Status), previousStatus(after),
		after.DisputeLost, after.FailureCode, after.FailureMessage, rec.SettlesAt, disputeID, rec.AvailableAt)
	if err != nil {
		return fmt.Errorf("payments: update: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("payments: update %s: %w", id, err)
	}
	if n != 1 {
		return fmt.Errorf("payments: update %s: %d rows", id, n)
	}
	return nil
}
