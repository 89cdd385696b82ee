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
}

// NewAppReader returns the App API's reader on the pool.
func NewAppReader(db *sqlx.DB) *AppReader {
	return &AppReader{db: wrap(db), payments: NewPaymentStore(db)}
}

var _ apps.VolumeReader = (*AppReader)(nil)

// Payments returns the scope's payments newest first (the payments_scope index), skipping
// offset rows, at most limit, only those in status when it is not empty; more reports whether
// a row follows the page.
func (r *AppReader) Payments(ctx context.Context, scope core.Scope, limit int, offset int64, status payments.Status) (page []*payments.Payment, more bool, err error) {
	var rows []paymentRow
	if status == "" {
		err = sqlx.SelectContext(ctx, r.db, &rows, `SELECT `+paymentColumns+` FROM payments
			WHERE merchant_id = $1 AND environment = $2 ORDER BY seq DESC LIMIT $3 OFFSET $4`,
			scope.MerchantID, string(scope.Env), limit+1, offset)
	} else {
		err = sqlx.SelectContext(ctx, r.db, &rows, `SELECT `+paymentColumns+` FROM payments
			WHERE merchant_id = $1 AND environment = $2 AND status = $5 ORDER BY seq DESC LIMIT $3 OFFSET $4`,
			scope.MerchantID, string(scope.Env), limit+1, offset, string(status))
	}
	if err != nil {
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

// Products returns the scope's products newest first (the products_scope index), without
// their prices, skipping offset rows, at most limit; more reports whether a row follows.
func (r *AppReader) Products(ctx context.Context, scope core.Scope, limit int, offset int64) (page []*catalog.Product, more bool, err error) {
	var rows []catalogProductRow
	if err := sqlx.SelectContext(ctx, r.db, &rows, `SELECT `+catalogProductCols+` FROM products
		WHERE merchant_id = $1 AND environment = $2 ORDER BY seq DESC LIMIT $3 OFFSET $4`,
		scope.MerchantID, string(scope.Env), limit+1, offset); err != nil {
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

// Volumes implements apps.VolumeReader in one scan of the window's payments.
func (r *AppReader) Volumes(ctx context.Context, scope core.Scope, from, to time.Time) ([]apps.Volume, error) {
	names := make([]string, len(payments.CapturedStatuses))
	for i, s := range payments.CapturedStatuses {
		names[i] = string(s)
	}
	var rows []struct {
		Currency string `db:"currency"`
		Gross    int64  `db:"gross"`
		Refunded int64  `db:"refunded"`
		Fees     int64  `db:"fees"`
		Count    int64  `db:"n"`
	}
	if err := sqlx.SelectContext(ctx, r.db, &rows, `SELECT currency,
			sum(amount)::bigint AS gross, sum(amount_refunded)::bigint AS refunded,
			sum(fee_service_charge_currency)::bigint AS fees, count(*) AS n
		FROM payments
		WHERE merchant_id = $1 AND environment = $2 AND created >= $3 AND created < $4 AND status = ANY($5)
		GROUP BY currency ORDER BY currency`,
		scope.MerchantID, string(scope.Env), from, to, pq.Array(names)); err != nil {
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
