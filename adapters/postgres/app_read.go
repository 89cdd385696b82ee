package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/apps"
	"github.com/kassa-pay/kassa/modules/catalog"
	"github.com/kassa-pay/kassa/modules/invoicing"
	"github.com/kassa-pay/kassa/modules/payments"
)

// AppReader is the App API's read side: offset pages of a scope's payments, refunds, products
// and issued invoices, one payment, product or invoice, and the analytics sums. Read-only statements on the pool; nothing here writes.
type AppReader struct {
	db       handle
	payments *PaymentStore
	ledger   *LedgerStore
}

// NewAppReader returns the App API's reader on the pool.
func NewAppReader(db *sqlx.DB) *AppReader {
	return &AppReader{db: wrap(db), payments: NewPaymentStore(db), ledger: NewLedgerStore(db)}
}

var _ apps.VolumeReader = (*AppReader)(nil)

// The App API's page queries ($1 merchant, $2 environment, $3 limit, $4 offset, $5 status):
// exported for the planner tests. The payments page finds where it starts in the list index
// alone (the seq of the row at the offset: an index-only scan that skips offset entries
// without reading their rows) and reads only its own rows from the table; an OFFSET on the
// page query itself reads every skipped row (100,000 at offset 100,000).
// The first page (offset 0) has nothing to skip and takes the plain query: the subquery cost
// it a third of its throughput (docs/performance.md).
var (
	AppFirstPaymentsSQL = `SELECT ` + paymentColumns + ` FROM payments
		WHERE merchant_id = $1 AND environment = $2 AND ` + ListPredicate + ` ORDER BY seq DESC LIMIT $3`
	AppPaymentsSQL = `SELECT ` + paymentColumns + ` FROM payments
		WHERE merchant_id = $1 AND environment = $2 AND ` + ListPredicate + ` AND seq <= (
			SELECT seq FROM payments WHERE merchant_id = $1 AND environment = $2 AND ` + ListPredicate + `
			ORDER BY seq DESC LIMIT 1 OFFSET $4)
		ORDER BY seq DESC LIMIT $3`
	AppPaymentsByStatusSQL = `SELECT ` + paymentColumns + ` FROM payments
		WHERE merchant_id = $1 AND environment = $2 AND ` + ListPredicate + ` AND status = $5 ORDER BY seq DESC LIMIT $3 OFFSET $4`
	AppProductsSQL = `SELECT ` + catalogProductCols + ` FROM products
		WHERE merchant_id = $1 AND environment = $2 AND ` + ListPredicate + ` ORDER BY seq DESC LIMIT $3 OFFSET $4`
)

// sortedByIndex runs a page query with the planner's sorts off, in a transaction of its own:
// the tenant columns have no statistics (migration 00018), so the planner estimates a
// merchant's rows at a fixed fraction of the table, and with an offset beyond that estimate
// it expects to read them all and prefers sorting them to walking the list index in order.
// A merchant with a million payments then had every page with an offset sort all of them.
func sortedByIndex(ctx context.Context, db handle, dest any, query string, args ...any) error {
	return inTx(ctx, db, func(tx *sqlx.Tx) error {
		return sortOff(ctx, tx, func() error { return sqlx.SelectContext(ctx, tx, dest, query, args...) })
	})
}

// Payments returns the scope's payments newest first (the payments_scope index), skipping
// offset rows, at most limit, only those in status when it is not empty; more reports whether
// a row follows the page. The queries state ListPredicate, the predicate of the list index,
// and run with sorts off (sortedByIndex): before, the only index they could use was the
// primary key, and every page (offset 0 too) read and sorted all the scope's payments (5.4 s
// at a million, docs/performance.md). An offset is still paid for: the index walk skips
// offset entries and reads their rows.
func (r *AppReader) Payments(ctx context.Context, scope core.Scope, limit int, offset int64, status payments.Status) (page []*payments.Payment, more bool, err error) {
	var rows []paymentRow
	query, args := AppPaymentsSQL, []any{scope.MerchantID, string(scope.Env), limit + 1, offset}
	switch {
	case status != "":
		query, args = AppPaymentsByStatusSQL, append(args, string(status))
	case offset == 0:
		query, args = AppFirstPaymentsSQL, args[:3]
	}
	if err = sortedByIndex(ctx, r.db, &rows, query, args...); err != nil {
		return nil, false, fmt.Errorf("app api: payments: %w", err)
	}
	if len(rows) > limit {
		rows, more = rows[:limit], true
	}
	page = make([]*payments.Payment, 0, len(rows))
	for i := range rows {
		p, err := rows[i].payment()
		if err != nil {
			return nil, false, err
		}
		page = append(page, p)
	}
	return page, more, nil
}

// Payment returns one payment of the scope, or payments.ErrNotFound.
func (r *AppReader) Payment(ctx context.Context, scope core.Scope, id string) (*payments.Payment, error) {
	return r.payments.Get(ctx, scope, id)
}

// Products returns the scope's products newest first (the products_scope index, whose
// predicate ListPredicate is), without their prices, skipping offset rows, at most limit;
// more reports whether a row follows.
func (r *AppReader) Products(ctx context.Context, scope core.Scope, limit int, offset int64) (page []*catalog.Product, more bool, err error) {
	var rows []catalogProductRow
	if err := sortedByIndex(ctx, r.db, &rows, AppProductsSQL, scope.MerchantID, string(scope.Env), limit+1, offset); err != nil {
		return nil, false, fmt.Errorf("app api: products: %w", err)
	}
	if len(rows) > limit {
		rows, more = rows[:limit], true
	}
	page = make([]*catalog.Product, 0, len(rows))
	for i := range rows {
		rec, err := rows[i].record()
		if err != nil {
			return nil, false, err
		}
		page = append(page, catalog.RehydrateProduct(rec, nil))
	}
	return page, more, nil
}

// AppVolumesSQL is Volumes' statement ($1 merchant, $2 environment, [$3, $4) the window,
// [$5, $6) its whole UTC days, $3 ≤ $5 ≤ $6 ≤ $4): the whole days' rows of
// payment_volume_days (migration 00055; at most one per day and currency), and the payments
// of the window's partial days before and after them, [$3, $5) and [$6, $4), from
// payments_volume (migration 00051), whose predicate, the captured statuses
// (payments.CapturedStatuses; the planner test checks they are the same), they state as
// written there. Exported for the planner test.
const AppVolumesSQL = `SELECT currency,
		sum(gross)::bigint AS gross, sum(refunded)::bigint AS refunded,
		sum(fees)::bigint AS fees, sum(n)::bigint AS n
	FROM (
		SELECT currency, gross, refunded, fees, payments AS n FROM payment_volume_days
		WHERE merchant_id = $1 AND environment = $2 AND day >= ($5::timestamptz AT TIME ZONE 'UTC')::date
			AND day < ($6::timestamptz AT TIME ZONE 'UTC')::date
		UNION ALL
		SELECT currency, amount, amount_refunded, fee_service_charge_currency, 1 FROM payments
		WHERE merchant_id = $1 AND environment = $2 AND created >= $3 AND created < $5
			AND status IN ('succeeded', 'partially_refunded', 'refunded', 'disputed')
		UNION ALL
		SELECT currency, amount, amount_refunded, fee_service_charge_currency, 1 FROM payments
		WHERE merchant_id = $1 AND environment = $2 AND created >= $6 AND created < $4
			AND status IN ('succeeded', 'partially_refunded', 'refunded', 'disputed')
	) v
	GROUP BY currency HAVING sum(n) > 0 ORDER BY currency`

// VolumeDays splits the window [from, to) into its whole UTC days [first, last) and the
// partial days around them, [from, first) and [last, to); a window within one day has no
// whole day (first = last = to).
func VolumeDays(from, to time.Time) (first, last time.Time) {
	from, to = from.UTC(), to.UTC()
	first = from.Truncate(24 * time.Hour)
	if first.Before(from) {
		first = first.Add(24 * time.Hour)
	}
	last = to.Truncate(24 * time.Hour)
	if !first.Before(last) {
		return to, to
	}
	return first, last
}

// Volumes implements apps.VolumeReader: the whole days of the window from the daily totals,
// its partial first and last days from their payments (AppVolumesSQL).
func (r *AppReader) Volumes(ctx context.Context, scope core.Scope, from, to time.Time) ([]apps.Volume, error) {
	var rows []struct {
		Currency string `db:"currency"`
		Gross    int64  `db:"gross"`
		Refunded int64  `db:"refunded"`
		Fees     int64  `db:"fees"`
		Count    int64  `db:"n"`
	}
	first, last := VolumeDays(from, to)
	if err := sqlx.SelectContext(ctx, r.db, &rows, AppVolumesSQL, scope.MerchantID, string(scope.Env), from, to,
		first, last); err != nil {
		return nil, fmt.Errorf("app api: volumes: %w", err)
	}
	out := make([]apps.Volume, 0, len(rows))
	for _, v := range rows {
		out = append(out, apps.Volume{Currency: core.Currency(v.Currency), Gross: v.Gross, Refunded: v.Refunded, Fees: v.Fees, Count: v.Count})
	}
	return out, nil
}

// Refunds returns the scope's refunds newest first (the refunds_scope index), skipping offset
// rows, at most limit; more reports whether a row follows.
func (r *AppReader) Refunds(ctx context.Context, scope core.Scope, limit int, offset int64) (page []*payments.Refund, more bool, err error) {
	var rows []refundRow
	if err := sqlx.SelectContext(ctx, r.db, &rows, `SELECT `+refundColumns+` FROM refunds
		WHERE merchant_id = $1 AND environment = $2 AND `+ListPredicate+` ORDER BY seq DESC LIMIT $3 OFFSET $4`,
		scope.MerchantID, string(scope.Env), limit+1, offset); err != nil {
		return nil, false, fmt.Errorf("app api: refunds: %w", err)
	}
	if len(rows) > limit {
		rows, more = rows[:limit], true
	}
	page = make([]*payments.Refund, len(rows))
	for i := range rows {
		page[i] = rows[i].refund()
	}
	return page, more, nil
}

// Product returns one product of the scope without its prices, or catalog.ErrNotFound.
func (r *AppReader) Product(ctx context.Context, scope core.Scope, id string) (*catalog.Product, error) {
	var row catalogProductRow
	err := sqlx.GetContext(ctx, r.db, &row, `SELECT `+catalogProductCols+` FROM products
		WHERE id = $1 AND merchant_id = $2 AND environment = $3`, id, scope.MerchantID, string(scope.Env))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, catalog.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("app api: product: %w", err)
	}
	rec, err := row.record()
	if err != nil {
		return nil, err
	}
	return catalog.RehydrateProduct(rec, nil), nil
}

// Invoices returns the scope's issued invoices (not drafts) newest first (the invoices_list
// index), skipping offset rows, at most limit; more reports whether a row follows.
func (r *AppReader) Invoices(ctx context.Context, scope core.Scope, limit int, offset int64) (page []*invoicing.Invoice, more bool, err error) {
	var rows []invoiceRow
	if err := sqlx.SelectContext(ctx, r.db, &rows, `SELECT `+invoiceColumns+` FROM invoices
		WHERE merchant_id = $1 AND environment = $2 AND `+ListPredicate+` AND status <> 'draft'
		ORDER BY seq DESC LIMIT $3 OFFSET $4`,
		scope.MerchantID, string(scope.Env), limit+1, offset); err != nil {
		return nil, false, fmt.Errorf("app api: invoices: %w", err)
	}
	if len(rows) > limit {
		rows, more = rows[:limit], true
	}
	page = make([]*invoicing.Invoice, 0, len(rows))
	for i := range rows {
		inv, err := rows[i].invoice()
		if err != nil {
			return nil, false, err
		}
		page = append(page, inv)
	}
	return page, more, nil
}

// Invoice returns one issued invoice of the scope, or invoicing.ErrNotFound (for a draft too).
func (r *AppReader) Invoice(ctx context.Context, scope core.Scope, id string) (*invoicing.Invoice, error) {
	inv, err := getInvoice(ctx, r.db, scope, id, false)
	if err != nil {
		return nil, err
	}
	if inv.Status() == invoicing.StatusDraft {
		return nil, invoicing.ErrNotFound
	}
	return inv, nil
}
