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
	"github.com/kassa-pay/kassa/modules/payouts"
)

const payoutColumns = `id, merchant_id, environment, currency, amount, status, created, arrival_date, transaction_id,
	rail_ref, sent_at, paid_at`

type payoutRow struct {
	ID            string         `db:"id"`
	MerchantID    string         `db:"merchant_id"`
	Environment   string         `db:"environment"`
	Currency      string         `db:"currency"`
	Amount        int64          `db:"amount"`
	Status        string         `db:"status"`
	Created       time.Time      `db:"created"`
	ArrivalDate   time.Time      `db:"arrival_date"`
	TransactionID string         `db:"transaction_id"`
	RailRef       sql.NullString `db:"rail_ref"`
	SentAt        *time.Time     `db:"sent_at"`
	PaidAt        *time.Time     `db:"paid_at"`
}

func (r payoutRow) payout() *payouts.Payout {
	return payouts.Rehydrate(payouts.Snapshot{ID: r.ID, Scope: core.Scope{MerchantID: r.MerchantID, Env: core.Environment(r.Environment)},
		Currency: core.Currency(r.Currency), Amount: r.Amount, Status: payouts.Status(r.Status), Created: r.Created.UTC(),
		ArrivalDate: r.ArrivalDate.UTC(), TransactionID: r.TransactionID, RailRef: r.RailRef.String, SentAt: utcPtr(r.SentAt),
		PaidAt: utcPtr(r.PaidAt)})
}

func payoutsOf(rows []payoutRow) []*payouts.Payout {
	out := make([]*payouts.Payout, len(rows))
	for i, r := range rows {
		out[i] = r.payout()
	}
	return out
}

// Payouts is the payouts repository on this transaction.
func (t *Tx) Payouts() payouts.Repository { return payoutRepo(*t) }

var _ payouts.Tx = (*Tx)(nil)

type payoutRepo Tx

// Insert writes a new payout.
func (r payoutRepo) Insert(ctx context.Context, p *payouts.Payout) error {
	s := p.Snapshot()
	return r.q.exec(ctx, write{what: "payouts: insert " + s.ID,
		sql: `INSERT INTO payouts (id, merchant_id, environment, currency, amount, status, created, arrival_date, transaction_id)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		args: []any{s.ID, s.Scope.MerchantID, string(s.Scope.Env), string(s.Currency), s.Amount, string(s.Status), s.Created,
			s.ArrivalDate, s.TransactionID}, one: true})
}

// Lock reads a payout FOR UPDATE.
func (r payoutRepo) Lock(ctx context.Context, scope core.Scope, id string) (*payouts.Payout, error) {
	var row payoutRow
	err := sqlx.GetContext(ctx, r.q, &row, `SELECT `+payoutColumns+` FROM payouts
		WHERE merchant_id = $1 AND environment = $2 AND id = $3 FOR UPDATE`, scope.MerchantID, string(scope.Env), id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, payouts.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("payouts: lock %s: %w", id, r.q.a.note(err))
	}
	return row.payout(), nil
}

// Save writes the payout's rail reference and status.
func (r payoutRepo) Save(ctx context.Context, p *payouts.Payout) error {
	s := p.Snapshot()
	return r.q.exec(ctx, write{what: "payouts: save " + s.ID,
		sql: `UPDATE payouts SET status = $4, rail_ref = $5, sent_at = $6, paid_at = $7
			WHERE merchant_id = $1 AND environment = $2 AND id = $3`,
		args: []any{s.Scope.MerchantID, string(s.Scope.Env), s.ID, string(s.Status), nullable(s.RailRef), s.SentAt, s.PaidAt}, one: true})
}

// ClaimArrived locks sent pending payouts that arrived by until, skipping locked ones.
func (r payoutRepo) ClaimArrived(ctx context.Context, scope *core.Scope, until time.Time, limit int) ([]*payouts.Payout, error) {
	inScope, args := sweepScope("p", scope, []any{until})
	args = append(args, limit)
	var rows []payoutRow
	err := sqlx.SelectContext(ctx, r.q, &rows, fmt.Sprintf(`SELECT %s FROM payouts p
		WHERE p.status = 'pending' AND p.arrival_date <= $1 AND p.sent_at IS NOT NULL AND %s
		ORDER BY p.arrival_date, p.merchant_id, p.environment, p.id LIMIT $%d FOR UPDATE OF p SKIP LOCKED`,
		payoutColumns, inScope, len(args)), args...)
	if err != nil {
		return nil, fmt.Errorf("payouts: claim arrived: %w", r.q.a.note(err))
	}
	return payoutsOf(rows), nil
}

// PayoutStore reads payouts outside units of work.
type PayoutStore struct{ db handle }

var _ payouts.Store = (*PayoutStore)(nil)

// NewPayoutStore returns the payout store on db.
func NewPayoutStore(db *sqlx.DB) *PayoutStore { return &PayoutStore{db: wrap(db)} }

// Get reads one payout of scope.
func (st *PayoutStore) Get(ctx context.Context, scope core.Scope, id string) (*payouts.Payout, error) {
	var row payoutRow
	err := st.db.GetContext(ctx, &row, `SELECT `+payoutColumns+` FROM payouts WHERE merchant_id = $1 AND environment = $2 AND id = $3`,
		scope.MerchantID, string(scope.Env), id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, payouts.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("payouts: get: %w", err)
	}
	return row.payout(), nil
}

// List reads a page of scope's payouts, newest first.
func (st *PayoutStore) List(ctx context.Context, scope core.Scope, q core.ListQuery) (core.Page[*payouts.Payout], error) {
	rows, more, err := pageBySeq[payoutRow](ctx, st.db, pageQuery{table: "payouts", columns: payoutColumns, scope: scope, q: q,
		unknownCursor: payouts.ErrUnknownCursor})
	if err != nil {
		return core.Page[*payouts.Payout]{}, err
	}
	return core.Page[*payouts.Payout]{Items: payoutsOf(rows), HasMore: more}, nil
}

// Unsent lists payouts of envs the rail has not accepted yet, oldest first.
func (st *PayoutStore) Unsent(ctx context.Context, scope *core.Scope, envs []core.Environment, limit int) ([]*payouts.Payout, error) {
	var es pq.StringArray
	for _, e := range envs {
		es = append(es, string(e))
	}
	args := []any{es, limit}
	where := ""
	if scope != nil {
		where = ` AND merchant_id = $3 AND environment = $4`
		args = append(args, scope.MerchantID, string(scope.Env))
	}
	var rows []payoutRow
	if err := st.db.SelectContext(ctx, &rows, `SELECT `+payoutColumns+` FROM payouts
		WHERE sent_at IS NULL AND environment = ANY($1::text[])`+where+` ORDER BY created, merchant_id, environment, id LIMIT $2`,
		args...); err != nil {
		return nil, fmt.Errorf("payouts: unsent: %w", err)
	}
	return payoutsOf(rows), nil
}

// NextStep reads the earliest of scope's unsent payouts' creation and pending payouts'
// arrival, at or before until (one statement, each side on its partial index).
func (st *PayoutStore) NextStep(ctx context.Context, scope core.Scope, until time.Time) (time.Time, bool, error) {
	var at sql.NullTime
	if err := st.db.GetContext(ctx, &at, `SELECT LEAST(
			(SELECT min(created) FROM payouts
				WHERE sent_at IS NULL AND merchant_id = $1 AND environment = $2 AND created <= $3),
			(SELECT min(arrival_date) FROM payouts
				WHERE status = 'pending' AND merchant_id = $1 AND environment = $2 AND arrival_date <= $3))`,
		scope.MerchantID, string(scope.Env), until); err != nil {
		return time.Time{}, false, fmt.Errorf("payouts: next step: %w", err)
	}
	return at.Time.UTC(), at.Valid, nil
}
