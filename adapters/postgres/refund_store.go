package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/ports"
)

const refundColumns = `id, merchant_id, environment, payment_id, amount, currency, reason, status,
	fee_reversed_service_eur, fee_reversed_psp_eur, fee_reversed_charge_currency, processor_ref,
	failure_code, failure_message, created, started_at`

type refundRow struct {
	ID             string         `db:"id"`
	MerchantID     string         `db:"merchant_id"`
	Environment    string         `db:"environment"`
	PaymentID      string         `db:"payment_id"`
	Amount         int64          `db:"amount"`
	Currency       string         `db:"currency"`
	Reason         string         `db:"reason"`
	Status         string         `db:"status"`
	ServiceEUR     int64          `db:"fee_reversed_service_eur"`
	PSPEUR         int64          `db:"fee_reversed_psp_eur"`
	ChargeCurrency int64          `db:"fee_reversed_charge_currency"`
	ProcessorRef   sql.NullString `db:"processor_ref"`
	FailureCode    sql.NullString `db:"failure_code"`
	FailureMessage sql.NullString `db:"failure_message"`
	Created        time.Time      `db:"created"`
	StartedAt      time.Time      `db:"started_at"`
}

func (r refundRow) refund() *payments.Refund {
	cur := core.Currency(r.Currency)
	return payments.RehydrateRefund(payments.RefundSnapshot{
		ID: r.ID, Scope: core.Scope{MerchantID: r.MerchantID, Env: core.Environment(r.Environment)},
		PaymentID: r.PaymentID, Amount: r.Amount, Currency: cur, Reason: payments.RefundReason(r.Reason),
		Status: payments.RefundStatus(r.Status),
		FeeReversed: payments.Fee{ServiceFeeEUR: r.ServiceEUR, PSPFeeEUR: r.PSPEUR,
			ServiceFeeChargeCurrency: r.ChargeCurrency, Currency: cur},
		ProcessorRef: r.ProcessorRef.String, FailureCode: r.FailureCode.String, FailureMessage: r.FailureMessage.String,
		Created: r.Created.UTC(), StartedAt: r.StartedAt.UTC(),
	})
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// refundRepo is payments.RefundRepository on a transaction.
type refundRepo Tx

// Refunds is payments' refund repository on this transaction.
func (t *Tx) Refunds() payments.RefundRepository { return refundRepo(*t) }

var _ payments.RefundTx = (*Tx)(nil)

// Insert writes a new pending refund.
func (r refundRepo) Insert(ctx context.Context, rf *payments.Refund) error {
	s := rf.Snapshot()
	return r.q.exec(ctx, write{
		what: "refunds: insert " + s.ID,
		sql: `INSERT INTO refunds (id, merchant_id, environment, payment_id, amount, currency, reason, status, created, started_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		args: []any{s.ID, s.Scope.MerchantID, string(s.Scope.Env), s.PaymentID, s.Amount, string(s.Currency),
			string(s.Reason), string(s.Status), s.Created, s.StartedAt},
		one: true,
	})
}

// Lock reads a refund FOR UPDATE; an unknown one is payments.ErrRefundUnknown.
func (r refundRepo) Lock(ctx context.Context, scope core.Scope, id string) (*payments.Refund, error) {
	var row refundRow
	err := sqlx.GetContext(ctx, r.q, &row, `SELECT `+refundColumns+` FROM refunds
		WHERE merchant_id = $1 AND environment = $2 AND id = $3 FOR UPDATE`, scope.MerchantID, string(scope.Env), id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("refunds: lock %s: %w", id, payments.ErrRefundUnknown)
	}
	if err != nil {
		return nil, r.q.a.note(fmt.Errorf("refunds: lock %s: %w", id, err))
	}
	return row.refund(), nil
}

// Reserved sums the pending refunds of a payment.
func (r refundRepo) Reserved(ctx context.Context, scope core.Scope, paymentID string) (int64, error) {
	var n int64
	err := sqlx.GetContext(ctx, r.q, &n, `SELECT COALESCE(sum(amount), 0)::bigint FROM refunds
		WHERE merchant_id = $1 AND environment = $2 AND payment_id = $3 AND status = 'pending'`,
		scope.MerchantID, string(scope.Env), paymentID)
	if err != nil {
		return 0, r.q.a.note(fmt.Errorf("refunds: reserved of %s: %w", paymentID, err))
	}
	return n, nil
}

// Save writes the resolution of a pending refund; one no longer pending is an error.
func (r refundRepo) Save(ctx context.Context, rf *payments.Refund) error {
	if !rf.Changed() {
		return nil
	}
	s := rf.Snapshot()
	return r.q.exec(ctx, write{
		what: "refunds: update " + s.ID,
		sql: `UPDATE refunds SET status = $4, fee_reversed_service_eur = $5, fee_reversed_psp_eur = $6,
				fee_reversed_charge_currency = $7, processor_ref = $8, failure_code = $9, failure_message = $10
			WHERE merchant_id = $1 AND environment = $2 AND id = $3 AND status = 'pending'`,
		args: []any{s.Scope.MerchantID, string(s.Scope.Env), s.ID, string(s.Status), s.FeeReversed.ServiceFeeEUR,
			s.FeeReversed.PSPFeeEUR, s.FeeReversed.ServiceFeeChargeCurrency, nullable(s.ProcessorRef),
			nullable(s.FailureCode), nullable(s.FailureMessage)},
		one: true,
	})
}

// RefundStore reads refunds on the pool (payments.RefundStore).
type RefundStore struct{ db handle }

var _ payments.RefundStore = (*RefundStore)(nil)

// NewRefundStore returns the refund store on db.
func NewRefundStore(db *sqlx.DB) *RefundStore { return &RefundStore{db: wrap(db)} }

// Get reads one refund of scope.
func (st *RefundStore) Get(ctx context.Context, scope core.Scope, id string) (*payments.Refund, error) {
	var row refundRow
	err := st.db.GetContext(ctx, &row, `SELECT `+refundColumns+` FROM refunds
		WHERE merchant_id = $1 AND environment = $2 AND id = $3`, scope.MerchantID, string(scope.Env), id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("refunds: get %s: %w", id, payments.ErrRefundUnknown)
	}
	if err != nil {
		return nil, fmt.Errorf("refunds: get %s: %w", id, err)
	}
	return row.refund(), nil
}

// List pages the scope's refunds newest first (refunds_scope, or refunds_payment for one
// payment's).
func (st *RefundStore) List(ctx context.Context, scope core.Scope, q core.ListQuery, paymentID string) (core.Page[*payments.Refund], error) {
	rows, more, err := pageBySeq[refundRow](ctx, st.db, pageQuery{
		table: "refunds", columns: refundColumns, scope: scope, q: q,
		within:        when(paymentID != "", cond{"payment_id = ?", paymentID}),
		unknownCursor: payments.ErrRefundCursorUnknown,
	})
	if err != nil {
		return core.Page[*payments.Refund]{}, err
	}
	page := core.Page[*payments.Refund]{HasMore: more, Items: make([]*payments.Refund, 0, len(rows))}
	for _, r := range rows {
		page.Items = append(page.Items, r.refund())
	}
	return page, nil
}

// Stale reads pending refunds started before `before`, oldest first (refunds_pending).
func (st *RefundStore) Stale(ctx context.Context, scope *core.Scope, before time.Time, limit int) ([]*payments.Refund, error) {
	var rows []refundRow
	var err error
	if scope == nil {
		err = st.db.SelectContext(ctx, &rows, `SELECT `+refundColumns+` FROM refunds
			WHERE status = 'pending' AND started_at < $1 ORDER BY started_at LIMIT $2`, before, limit)
	} else {
		err = st.db.SelectContext(ctx, &rows, `SELECT `+refundColumns+` FROM refunds
			WHERE status = 'pending' AND started_at < $1 AND merchant_id = $3 AND environment = $4
			ORDER BY started_at LIMIT $2`, before, limit, scope.MerchantID, string(scope.Env))
	}
	if err != nil {
		return nil, fmt.Errorf("refunds: stale: %w", err)
	}
	out := make([]*payments.Refund, len(rows))
	for i, r := range rows {
		out[i] = r.refund()
	}
	return out, nil
}

// RememberRefund implements the sandbox's refund journal in sandbox_refunds (migration
// 00027), as Remember does for charges.
func (j *SandboxJournal) RememberRefund(ctx context.Context, scope core.Scope, key string, res ports.RefundResult) (ports.RefundResult, error) {
	body, err := jsonText(res)
	if err != nil {
		return ports.RefundResult{}, err
	}
	var stored []byte
	if err := j.db.GetContext(ctx, &stored, `WITH ins AS (
			INSERT INTO sandbox_refunds (merchant_id, environment, idempotency_key, result)
			VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING result)
		SELECT COALESCE((SELECT result FROM ins), (SELECT result FROM sandbox_refunds
			WHERE merchant_id = $1 AND environment = $2 AND idempotency_key = $3))`,
		scope.MerchantID, string(scope.Env), key, body); err != nil {
		return ports.RefundResult{}, fmt.Errorf("sandbox_refunds: insert: %w", err)
	}
	if stored == nil { // inserted by a call that committed after this statement's snapshot
		old, ok, err := j.RecallRefund(ctx, scope, key)
		if err == nil && !ok {
			err = errors.New("sandbox_refunds: the stored refund vanished")
		}
		return old, err
	}
	var out ports.RefundResult
	if err := json.Unmarshal(stored, &out); err != nil {
		return ports.RefundResult{}, fmt.Errorf("sandbox_refunds: decode: %w", err)
	}
	return out, nil
}

// RecallRefund reads the refund result stored under key.
func (j *SandboxJournal) RecallRefund(ctx context.Context, scope core.Scope, key string) (ports.RefundResult, bool, error) {
	var body []byte
	err := j.db.GetContext(ctx, &body, `SELECT result FROM sandbox_refunds
		WHERE merchant_id = $1 AND environment = $2 AND idempotency_key = $3`, scope.MerchantID, string(scope.Env), key)
	if errors.Is(err, sql.ErrNoRows) {
		return ports.RefundResult{}, false, nil
	}
	if err != nil {
		return ports.RefundResult{}, false, fmt.Errorf("sandbox_refunds: get: %w", err)
	}
	var res ports.RefundResult
	if err := json.Unmarshal(body, &res); err != nil {
		return ports.RefundResult{}, false, fmt.Errorf("sandbox_refunds: decode: %w", err)
	}
	return res, true, nil
}
