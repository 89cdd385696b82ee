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

// DisputeStore reads disputes outside any unit of work (payments.DisputeStore); the unit of
// work's writes are disputeRepo's.
type DisputeStore struct{ db *sqlx.DB }

// NewDisputeStore returns the dispute store over db.
func NewDisputeStore(db *sqlx.DB) *DisputeStore { return &DisputeStore{db: db} }

var _ payments.DisputeStore = (*DisputeStore)(nil)

const disputeColumns = `d.merchant_id, d.environment, d.id, d.payment_id, d.amount, d.currency, d.reason, d.status,
	d.evidence_due_by, d.created, d.evidence, d.evidence_submitted_at, d.closed_at, d.past_due,
	d.fee, d.fee_eur, d.fee_rate, d.fee_rate_date`

type disputeRow struct {
	MerchantID    string         `db:"merchant_id"`
	Environment   string         `db:"environment"`
	ID            string         `db:"id"`
	PaymentID     string         `db:"payment_id"`
	Amount        int64          `db:"amount"`
	Currency      string         `db:"currency"`
	Reason        string         `db:"reason"`
	Status        string         `db:"status"`
	EvidenceDueBy time.Time      `db:"evidence_due_by"`
	Created       time.Time      `db:"created"`
	Evidence      string         `db:"evidence"`
	SubmittedAt   *time.Time     `db:"evidence_submitted_at"`
	ClosedAt      *time.Time     `db:"closed_at"`
	PastDue       bool           `db:"past_due"`
	Fee           sql.NullInt64  `db:"fee"`
	FeeEUR        sql.NullInt64  `db:"fee_eur"`
	FeeRate       sql.NullString `db:"fee_rate"`
	FeeRateDate   *time.Time     `db:"fee_rate_date"`
}

func (r disputeRow) dispute() *payments.Dispute {
	s := payments.DisputeSnapshot{
		ID: r.ID, Scope: core.Scope{MerchantID: r.MerchantID, Env: core.Environment(r.Environment)},
		PaymentID: r.PaymentID, Amount: r.Amount, Currency: core.Currency(r.Currency), Reason: r.Reason,
		Status: payments.DisputeStatus(r.Status), EvidenceDueBy: r.EvidenceDueBy.UTC(), Created: r.Created.UTC(),
		Evidence: r.Evidence, SubmittedAt: utcPtr(r.SubmittedAt), ClosedAt: utcPtr(r.ClosedAt), PastDue: r.PastDue,
		Fee: payments.DisputeFee{Amount: r.Fee.Int64, EUR: r.FeeEUR.Int64, Rate: r.FeeRate.String},
	}
	if r.FeeRateDate != nil {
		s.Fee.RateDate = r.FeeRateDate.UTC()
	}
	return payments.RestoreDispute(s)
}

func disputesOf(rows []disputeRow) []*payments.Dispute {
	out := make([]*payments.Dispute, len(rows))
	for i := range rows {
		out[i] = rows[i].dispute()
	}
	return out
}

// ListDue reads up to limit disputes whose due_at ≤ until, earliest first, without locking
// them. due_at is the stored projection of payments.Dispute.DueAt.
func (st *DisputeStore) ListDue(ctx context.Context, scope *core.Scope, until time.Time, limit int) ([]*payments.Dispute, error) {
	inScope, args := sweepScope("d", scope, []any{until})
	order := `d.due_at, d.merchant_id, d.environment, d.id`
	if scope != nil {
		order = `d.due_at, d.id`
	}
	args = append(args, limit)
	var rows []disputeRow
	if err := st.db.SelectContext(ctx, &rows, fmt.Sprintf(`SELECT %s FROM disputes d WHERE d.due_at <= $1 AND %s ORDER BY %s LIMIT $%d`,
		disputeColumns, inScope, order, len(args)), args...); err != nil {
		return nil, fmt.Errorf("disputes: list due: %w", err)
	}
	return disputesOf(rows), nil
}

// NextDue returns the earliest due_at ≤ until of scope's disputes.
func (st *DisputeStore) NextDue(ctx context.Context, scope core.Scope, until time.Time) (time.Time, bool, error) {
	var at sql.NullTime
	if err := st.db.GetContext(ctx, &at, `SELECT min(due_at) FROM disputes
		WHERE merchant_id = $1 AND environment = $2 AND due_at <= $3`, scope.MerchantID, string(scope.Env), until); err != nil {
		return time.Time{}, false, fmt.Errorf("disputes: next due: %w", err)
	}
	return at.Time.UTC(), at.Valid, nil
}

// Get reads one dispute of scope.
func (st *DisputeStore) Get(ctx context.Context, scope core.Scope, id string) (*payments.Dispute, error) {
	var r disputeRow
	err := st.db.GetContext(ctx, &r, `SELECT `+disputeColumns+` FROM disputes d
		WHERE d.merchant_id = $1 AND d.environment = $2 AND d.id = $3`, scope.MerchantID, string(scope.Env), id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, payments.ErrNoDispute
	}
	if err != nil {
		return nil, fmt.Errorf("disputes: get %s: %w", id, err)
	}
	return r.dispute(), nil
}

// OfPayment reads the dispute of a payment of scope.
func (st *DisputeStore) OfPayment(ctx context.Context, scope core.Scope, paymentID string) (*payments.Dispute, error) {
	var r disputeRow
	err := st.db.GetContext(ctx, &r, `SELECT `+disputeColumns+` FROM disputes d
		WHERE d.payment_id = $3 AND d.merchant_id = $1 AND d.environment = $2`, scope.MerchantID, string(scope.Env), paymentID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, payments.ErrNoDispute
	}
	if err != nil {
		return nil, fmt.Errorf("disputes: of payment %s: %w", paymentID, err)
	}
	return r.dispute(), nil
}

// DisputeListSQL lists a scope's disputes: those that need a response first, earliest deadline
// first, then the others newest first. $3 is the cursor's id (NULL for the first page), $4 its
// status, $5 its deadline and $6 its seq: the page continues after the cursor in that order.
const DisputeListSQL = `SELECT ` + disputeColumns + ` FROM disputes d
	WHERE d.merchant_id = $1 AND d.environment = $2 AND d.` + ListPredicate + `
	AND ($3::text IS NULL OR CASE WHEN $4::text = 'needs_response'
		THEN d.status <> 'needs_response' OR (d.evidence_due_by, d.seq) > ($5::timestamptz, $6::bigint)
		ELSE d.status <> 'needs_response' AND d.seq < $6::bigint END)
	ORDER BY (d.status = 'needs_response') DESC,
		CASE WHEN d.status = 'needs_response' THEN d.evidence_due_by END,
		CASE WHEN d.status = 'needs_response' THEN d.seq END, d.seq DESC
	LIMIT $7`

// List reads up to limit disputes of scope after the dispute `after` ("" for the first page;
// one that is not a dispute of the scope is payments.ErrUnknownCursor), in DisputeListSQL's order.
func (st *DisputeStore) List(ctx context.Context, scope core.Scope, after string, limit int) ([]*payments.Dispute, bool, error) {
	var cursor struct {
		ID     *string    `db:"id"`
		Status *string    `db:"status"`
		DueBy  *time.Time `db:"evidence_due_by"`
		Seq    *int64     `db:"seq"`
	}
	if after != "" {
		err := st.db.GetContext(ctx, &cursor, `SELECT id, status, evidence_due_by, seq FROM disputes
			WHERE merchant_id = $1 AND environment = $2 AND id = $3`, scope.MerchantID, string(scope.Env), after)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, false, payments.ErrUnknownCursor
		}
		if err != nil {
			return nil, false, fmt.Errorf("disputes: list cursor: %w", err)
		}
	}
	var rows []disputeRow
	if err := st.db.SelectContext(ctx, &rows, DisputeListSQL, scope.MerchantID, string(scope.Env),
		cursor.ID, cursor.Status, cursor.DueBy, cursor.Seq, limit+1); err != nil {
		return nil, false, fmt.Errorf("disputes: list: %w", err)
	}
	more := len(rows) > limit
	if more {
		rows = rows[:limit]
	}
	return disputesOf(rows), more, nil
}

// lockDisputes locks the disputes of ds that no other transaction holds (FOR UPDATE SKIP
// LOCKED), in due order, and reads them again (payments.DisputeRepository.LockDue).
func lockDueDisputes(ctx context.Context, q sqlx.QueryerContext, ds []*payments.Dispute) ([]*payments.Dispute, error) {
	if len(ds) == 0 {
		return nil, nil
	}
	merchants, envs, ids := make([]string, len(ds)), make([]string, len(ds)), make([]string, len(ds))
	for i, d := range ds {
		sc := d.Scope()
		merchants[i], envs[i], ids[i] = sc.MerchantID, string(sc.Env), d.ID()
	}
	var rows []disputeRow
	if err := sqlx.SelectContext(ctx, q, &rows, `SELECT `+disputeColumns+` FROM disputes d
		WHERE (d.merchant_id, d.environment, d.id) IN (SELECT * FROM unnest($1::text[], $2::text[], $3::text[]))
		ORDER BY d.due_at, d.merchant_id, d.environment, d.id FOR UPDATE OF d SKIP LOCKED`,
		pq.Array(merchants), pq.Array(envs), pq.Array(ids)); err != nil {
		return nil, fmt.Errorf("disputes: lock due: %w", err)
	}
	return disputesOf(rows), nil
}

// lockDispute reads dispute id of scope FOR UPDATE (payments.DisputeRepository.Lock).
func lockDispute(ctx context.Context, q sqlx.QueryerContext, scope core.Scope, id string) (*payments.Dispute, error) {
	var r disputeRow
	err := sqlx.GetContext(ctx, q, &r, `SELECT `+disputeColumns+` FROM disputes d
		WHERE d.merchant_id = $1 AND d.environment = $2 AND d.id = $3 FOR UPDATE`, scope.MerchantID, string(scope.Env), id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, payments.ErrNoDispute
	}
	if err != nil {
		return nil, fmt.Errorf("disputes: lock %s: %w", id, err)
	}
	return r.dispute(), nil
}

// disputeInsert writes a new dispute with its fee; a second one of a payment is refused by
// its unique key.
func disputeInsert(d *payments.Dispute) write {
	ds := d.Snapshot()
	return write{
		what: "disputes: insert " + ds.ID,
		sql: `INSERT INTO disputes
			(merchant_id, environment, id, payment_id, amount, currency, reason, status, evidence_due_by, created,
			 fee, fee_eur, fee_rate, fee_rate_date)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
		args: []any{ds.Scope.MerchantID, string(ds.Scope.Env), ds.ID, ds.PaymentID, ds.Amount, string(ds.Currency),
			ds.Reason, string(ds.Status), ds.EvidenceDueBy, ds.Created,
			ds.Fee.Amount, ds.Fee.EUR, nullable(ds.Fee.Rate), ds.Fee.RateDate},
		one: true,
	}
}

// disputeUpdate writes the changing part of a dispute: its status, evidence and outcome
// (decides_at is the projection of payments.Dispute.DueAt for a dispute under review).
func disputeUpdate(d *payments.Dispute) write {
	ds := d.Snapshot()
	var decides *time.Time
	if ds.Status == payments.DisputeUnderReview {
		decides = d.DueAt()
	}
	return write{
		what: "disputes: update " + ds.ID,
		sql: `UPDATE disputes SET status = $4, evidence = $5, evidence_submitted_at = $6, decides_at = $7,
			closed_at = $8, past_due = $9 WHERE merchant_id = $1 AND environment = $2 AND id = $3`,
		args: []any{ds.Scope.MerchantID, string(ds.Scope.Env), ds.ID, string(ds.Status), ds.Evidence, ds.SubmittedAt,
			decides, ds.ClosedAt, ds.PastDue},
		one: true,
	}
}
