package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
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
	PayableKey     string     `db:"payable_key"`
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

const recordExtraColumns = `processor_ref, payable_key, settles_at, card_exp_month, card_exp_year, sepa_country, sepa_last4,
	dispute_opens_at, dispute_reason, dispute_id, available_at, due_at`

func (r *recordRow) record() (*payments.Record, error) {
	p, err := r.payment()
	if err != nil {
		return nil, err
	}
	rec := (&payments.Record{Payment: p, ProcessorRef: r.ProcessorRef, PayableKey: r.PayableKey,
		SEPACountry: deref(r.SEPACountry), SEPALast4: deref(r.SEPALast4),
		DisputeOpensAt: utcPtr(r.DisputeOpensAt), DisputeReason: deref(r.DisputeReason)}).
		WithDueFacts(payments.DueFacts{SettlesAt: utcPtr(r.SettlesAt), AvailableAt: utcPtr(r.AvailableAt), DisputeID: deref(r.DisputeID)})
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

// lockPayment reads payment id of scope FOR UPDATE (payments.PaymentRepository.Lock).
func lockPayment(ctx context.Context, q sqlx.QueryerContext, scope core.Scope, id string) (*payments.Record, error) {
	var r recordRow
	err := sqlx.GetContext(ctx, q, &r, fmt.Sprintf(`SELECT %s, %s FROM payments
		WHERE merchant_id = $1 AND environment = $2 AND id = $3 FOR UPDATE`, paymentColumns, recordExtraColumns),
		scope.MerchantID, string(scope.Env), id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("payments: lock %s: %w", id, payments.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("payments: lock %s: %w", id, err)
	}
	return r.record()
}

// paymentUpdate is the UPDATE of what rec reports changed (payments.Record.Changes), each part
// a fixed list of columns; changed is false when nothing did. It decides nothing.
func paymentUpdate(rec *payments.Record) (w write, changed bool) {
	ch := rec.Changes()
	if ch == 0 {
		return write{}, false
	}
	p := rec.Payment.Snapshot()
	args := []any{p.Scope.MerchantID, string(p.Scope.Env), p.ID}
	var set []string
	add := func(col string, v any) {
		args = append(args, v)
		set = append(set, fmt.Sprintf("%s = $%d", col, len(args)))
	}
	if ch.Has(payments.ChangedState) {
		add("status", string(p.Status))
		add("previous_status", previousStatus(p))
		add("dispute_lost", p.DisputeLost)
		add("failure_code", p.FailureCode)
		add("failure_message", p.FailureMessage)
		add("amount_refunded", p.AmountRefunded)
	}
	if ch.Has(payments.ChangedSettlesAt) {
		add("settles_at", rec.SettlesAt())
	}
	if ch.Has(payments.ChangedAvailableAt) {
		add("available_at", rec.AvailableAt())
	}
	if ch.Has(payments.ChangedDispute) {
		add("dispute_id", rec.DisputeID())
	}
	return write{
		what: "payments: update " + p.ID,
		sql:  `UPDATE payments SET ` + strings.Join(set, ", ") + ` WHERE merchant_id = $1 AND environment = $2 AND id = $3`,
		args: args,
		one:  true,
	}, true
}
