package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/lib/pq"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
)

var _ payments.Lister = (*PaymentStore)(nil)

// List implements payments.Lister with the shared cursor pager (payments_scope index).
func (st *PaymentStore) List(ctx context.Context, scope core.Scope, q core.ListQuery, status payments.Status) (core.Page[*payments.Payment], error) {
	rows, more, err := pageBySeq[paymentRow](ctx, st.db, pageQuery{
		table: "payments", columns: paymentColumns, scope: scope, q: q,
		filter:        when(status != "", cond{"status = ?", string(status)}),
		unknownCursor: payments.ErrUnknownCursor,
	})
	if err != nil {
		return core.Page[*payments.Payment]{}, err
	}
	page := core.Page[*payments.Payment]{HasMore: more, Items: make([]*payments.Payment, 0, len(rows))}
	for i := range rows {
		p, err := rows[i].payment()
		if err != nil {
			return core.Page[*payments.Payment]{}, err
		}
		page.Items = append(page.Items, p)
	}
	return page, nil
}

// Summarize implements payments.Lister in one scan of the scope's payments.
func (st *PaymentStore) Summarize(ctx context.Context, scope core.Scope, captured []payments.Status) (payments.Summary, error) {
	names := make([]string, len(captured))
	for i, s := range captured {
		names[i] = string(s)
	}
	var rows []struct {
		Currency      string `db:"currency"`
		Count         int64  `db:"n"`
		Captured      int64  `db:"captured"`
		Gross         int64  `db:"gross"`
		Disputed      int64  `db:"disputed"`
		DisputedGross int64  `db:"disputed_gross"`
	}
	err := st.db.SelectContext(ctx, &rows, `SELECT currency, count(*) AS n,
			count(*) FILTER (WHERE status = ANY($3)) AS captured,
			COALESCE(sum(amount) FILTER (WHERE status = ANY($3)), 0)::bigint AS gross,
			count(*) FILTER (WHERE status = 'disputed') AS disputed,
			COALESCE(sum(amount) FILTER (WHERE status = 'disputed'), 0)::bigint AS disputed_gross
		FROM payments WHERE merchant_id = $1 AND environment = $2
		GROUP BY currency ORDER BY currency`, scope.MerchantID, string(scope.Env), pq.Array(names))
	if err != nil {
		return payments.Summary{}, fmt.Errorf("payments: summarize: %w", err)
	}
	var s payments.Summary
	for _, r := range rows {
		s.Count += r.Count
		s.SucceededCount += r.Captured
		if r.Captured > 0 {
			s.Gross = append(s.Gross, core.NewMoney(r.Gross, core.Currency(r.Currency)))
		}
		s.DisputedCount += r.Disputed
		if r.Disputed > 0 {
			s.Disputed = append(s.Disputed, core.NewMoney(r.DisputedGross, core.Currency(r.Currency)))
		}
	}
	return s, nil
}

// VolumeByDaySQL sums the scope's captured payments per currency and UTC day of created in
// [$4, $5): an index scan of the scope's rows (payments_pkey leads with merchant_id and
// environment), as Summarize reads them; the planner test holds it to that.
const VolumeByDaySQL = `SELECT currency, (created AT TIME ZONE 'UTC')::date AS day, count(*) AS n,
		COALESCE(sum(amount), 0)::bigint AS amount
	FROM payments WHERE merchant_id = $1 AND environment = $2 AND status = ANY($3)
		AND created >= $4 AND created < $5
	GROUP BY 1, 2 ORDER BY 1, 2`

// VolumeByDay implements payments.Lister.
func (st *PaymentStore) VolumeByDay(ctx context.Context, scope core.Scope, captured []payments.Status, from, to time.Time) ([]payments.DayTotal, error) {
	names := make([]string, len(captured))
	for i, s := range captured {
		names[i] = string(s)
	}
	var rows []struct {
		Currency string    `db:"currency"`
		Day      time.Time `db:"day"`
		Count    int64     `db:"n"`
		Amount   int64     `db:"amount"`
	}
	if err := st.db.SelectContext(ctx, &rows, VolumeByDaySQL, scope.MerchantID, string(scope.Env), pq.Array(names), from, to); err != nil {
		return nil, fmt.Errorf("payments: volume by day: %w", err)
	}
	out := make([]payments.DayTotal, len(rows))
	for i, r := range rows {
		y, m, d := r.Day.Date()
		out[i] = payments.DayTotal{Day: time.Date(y, m, d, 0, 0, 0, 0, time.UTC), Currency: core.Currency(r.Currency), Amount: r.Amount, Count: r.Count}
	}
	return out, nil
}
