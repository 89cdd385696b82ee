package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/invoicing"
	"github.com/kassa-pay/kassa/modules/payments"
)

// InvoiceStore reads invoices on the pool (invoicing.Store).
type InvoiceStore struct{ db handle }

// NewInvoiceStore returns the invoice store over db.
func NewInvoiceStore(db *sqlx.DB) *InvoiceStore { return &InvoiceStore{db: wrap(db)} }

var _ invoicing.Store = (*InvoiceStore)(nil)

const invoiceColumns = `seq, id, merchant_id, environment, status, number, currency, customer_name, customer_email,
	lines, days_until_due, memo, metadata, public_token, issue_date, due_date, amount_paid, payment_id, created,
	updated, finalized_at, paid_at, voided_at, uncollectible_at, charging, attempts, pending_action, processing, subscription_id,
	dunning_stage, next_payment_attempt, processing_off_session, saved_method, starting_balance, ending_balance`

type invoiceRow struct {
	Seq           int64      `db:"seq"`
	ID            string     `db:"id"`
	MerchantID    string     `db:"merchant_id"`
	Environment   string     `db:"environment"`
	Status        string     `db:"status"`
	Number        *string    `db:"number"`
	Currency      string     `db:"currency"`
	CustomerName  string     `db:"customer_name"`
	CustomerEmail string     `db:"customer_email"`
	Lines         []byte     `db:"lines"`
	DaysUntilDue  int        `db:"days_until_due"`
	Memo          *string    `db:"memo"`
	Metadata      []byte     `db:"metadata"`
	PublicToken   *string    `db:"public_token"`
	IssueDate     *time.Time `db:"issue_date"`
	DueDate       *time.Time `db:"due_date"`
	AmountPaid    int64      `db:"amount_paid"`
	PaymentID     *string    `db:"payment_id"`
	Created       time.Time  `db:"created"`
	Updated       time.Time  `db:"updated"`
	FinalizedAt   *time.Time `db:"finalized_at"`
	PaidAt        *time.Time `db:"paid_at"`
	VoidedAt      *time.Time `db:"voided_at"`
	Uncollectible *time.Time `db:"uncollectible_at"`
	Charging      string     `db:"charging"`
	Attempts      int        `db:"attempts"`
	Pending       []byte     `db:"pending_action"`
	Processing    string     `db:"processing"`
	SavedMethod   string     `db:"saved_method"`
	Subscription  *string    `db:"subscription_id"`
	DunningStage  *string    `db:"dunning_stage"`
	NextAttempt   *time.Time `db:"next_payment_attempt"`
	ProcessingOff bool       `db:"processing_off_session"`
	StartBalance  int64      `db:"starting_balance"`
	EndBalance    int64      `db:"ending_balance"`
}

// lineJSON is a line as stored.
type lineJSON struct {
	Description string  `json:"description"`
	Quantity    int64   `json:"quantity"`
	UnitAmount  int64   `json:"unit_amount"`
	VATRate     int64   `json:"vat_rate_bp"`
	PriceID     *string `json:"price_id"`
	ProductID   *string `json:"product_id"`
	Locked      bool    `json:"locked"`
	Currency    string  `json:"currency,omitempty"`
}

func (r *invoiceRow) invoice() (*invoicing.Invoice, error) {
	var ls []lineJSON
	if err := json.Unmarshal(r.Lines, &ls); err != nil {
		return nil, fmt.Errorf("invoices: %s: lines: %w", r.ID, err)
	}
	s := invoicing.Snapshot{ID: r.ID, Scope: core.Scope{MerchantID: r.MerchantID, Env: core.Environment(r.Environment)},
		Status: invoicing.Status(r.Status), Number: r.Number, Currency: core.Currency(r.Currency),
		CustomerName: r.CustomerName, CustomerEmail: r.CustomerEmail, DaysUntilDue: r.DaysUntilDue, Memo: r.Memo,
		PublicToken: r.PublicToken, IssueDate: utcp(r.IssueDate), DueDate: utcp(r.DueDate), AmountPaid: r.AmountPaid,
		PaymentID: r.PaymentID, Created: r.Created.UTC(), Updated: r.Updated.UTC(), FinalizedAt: utcp(r.FinalizedAt),
		PaidAt: utcp(r.PaidAt), VoidedAt: utcp(r.VoidedAt), Uncollectible: utcp(r.Uncollectible), Subscription: r.Subscription,
		DunningStage: r.DunningStage, NextPaymentAttempt: utcp(r.NextAttempt),
		StartingBalance: r.StartBalance, EndingBalance: r.EndBalance,
		Charge: invoicing.ChargeState{Charging: r.Charging, Attempts: r.Attempts, Processing: r.Processing,
			ProcessingOffSession: r.ProcessingOff, SavedMethod: r.SavedMethod}}
	for _, l := range ls {
		s.Lines = append(s.Lines, invoicing.Line{Description: l.Description, Quantity: l.Quantity, UnitAmount: l.UnitAmount,
			VATRate: invoicing.Rate(l.VATRate), PriceID: l.PriceID, ProductID: l.ProductID, Locked: l.Locked, Currency: core.Currency(l.Currency)})
	}
	if err := json.Unmarshal(r.Metadata, &s.Metadata); err != nil {
		return nil, fmt.Errorf("invoices: %s: metadata: %w", r.ID, err)
	}
	if len(r.Pending) > 0 {
		var act payments.CustomerAction
		if err := json.Unmarshal(r.Pending, &act); err != nil {
			return nil, fmt.Errorf("invoices: %s: pending action: %w", r.ID, err)
		}
		s.Charge.Pending = &act
	}
	return invoicing.Rehydrate(s), nil
}

func utcp(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// invoiceStateList is an invoice's stored state: the columns Save and SaveMany write, in
// invoiceArgs' order.
const invoiceStateList = `status, number, currency, customer_name, customer_email, lines, days_until_due, memo, metadata,
	public_token, issue_date, due_date, amount_paid, payment_id, created, updated, finalized_at, paid_at, voided_at,
	uncollectible_at, charging, attempts, pending_action, processing, dunning_stage, next_payment_attempt,
	processing_off_session, saved_method`

// invoiceInsertList is the columns Insert and InsertMany write: the key, the state, and what
// an invoice is created with and keeps (its subscription and balances).
const invoiceInsertList = `id, merchant_id, environment, ` + invoiceStateList + `, subscription_id, starting_balance, ending_balance`

// invoiceArgs are the stored columns of inv after id, merchant_id, environment (invoiceStateList).
func invoiceArgs(inv *invoicing.Invoice) ([]any, error) {
	s := inv.Snapshot()
	ls := make([]lineJSON, 0, len(s.Lines))
	for _, l := range s.Lines {
		ls = append(ls, lineJSON{Description: l.Description, Quantity: l.Quantity, UnitAmount: l.UnitAmount,
			VATRate: int64(l.VATRate), PriceID: l.PriceID, ProductID: l.ProductID, Locked: l.Locked, Currency: string(l.Currency)})
	}
	lines, err := json.Marshal(ls)
	if err != nil {
		return nil, err
	}
	md := s.Metadata
	if md == nil {
		md = map[string]string{} // the column is NOT NULL: '{}', never JSON null
	}
	mdJSON, err := json.Marshal(md)
	if err != nil {
		return nil, err
	}
	var pending *string // JSON text (a []byte would be sent as bytea)
	if s.Charge.Pending != nil {
		b, err := json.Marshal(s.Charge.Pending)
		if err != nil {
			return nil, err
		}
		p := string(b)
		pending = &p
	}
	return []any{string(s.Status), s.Number, string(s.Currency), s.CustomerName, s.CustomerEmail, string(lines), s.DaysUntilDue,
		s.Memo, string(mdJSON), s.PublicToken, s.IssueDate, s.DueDate, s.AmountPaid, s.PaymentID, s.Created, s.Updated,
		s.FinalizedAt, s.PaidAt, s.VoidedAt, s.Uncollectible, s.Charge.Charging, s.Charge.Attempts, pending,
		s.Charge.Processing, s.DunningStage, s.NextPaymentAttempt, s.Charge.ProcessingOffSession, s.Charge.SavedMethod}, nil
}

func getInvoice(ctx context.Context, q sqlx.QueryerContext, scope core.Scope, id string, lock bool) (*invoicing.Invoice, error) {
	query := `SELECT ` + invoiceColumns + ` FROM invoices WHERE merchant_id = $1 AND environment = $2 AND id = $3`
	if lock {
		query += ` FOR UPDATE`
	}
	var r invoiceRow
	err := sqlx.GetContext(ctx, q, &r, query, scope.MerchantID, string(scope.Env), id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, invoicing.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("invoices: get: %w", err)
	}
	return r.invoice()
}

// Get reads one invoice of scope.
func (st *InvoiceStore) Get(ctx context.Context, scope core.Scope, id string) (*invoicing.Invoice, error) {
	return getInvoice(ctx, st.db, scope, id, false)
}

// ByToken reads the invoice with public token t.
func (st *InvoiceStore) ByToken(ctx context.Context, t string) (*invoicing.Invoice, error) {
	var r invoiceRow
	err := st.db.GetContext(ctx, &r, `SELECT `+invoiceColumns+` FROM invoices WHERE public_token = $1`, t)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, invoicing.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("invoices: by token: %w", err)
	}
	return r.invoice()
}

// List pages scope's invoices newest first (page.go), optionally of one status.
func (st *InvoiceStore) List(ctx context.Context, scope core.Scope, q core.ListQuery, f invoicing.ListFilter) (core.Page[*invoicing.Invoice], error) {
	pq := pageQuery{table: "invoices", columns: invoiceColumns, scope: scope, q: q, unknownCursor: invoicing.ErrUnknownCursor}
	if f.Status != nil {
		pq.filter = append(pq.filter, cond{"status = ?", string(*f.Status)})
	}
	if f.Subscription != "" {
		pq.filter = append(pq.filter, cond{"subscription_id = ?", f.Subscription})
	}
	rows, hasMore, err := pageBySeq[invoiceRow](ctx, st.db, pq)
	if err != nil {
		return core.Page[*invoicing.Invoice]{}, err
	}
	out := core.Page[*invoicing.Invoice]{HasMore: hasMore, Items: make([]*invoicing.Invoice, 0, len(rows))}
	for i := range rows {
		inv, err := rows[i].invoice()
		if err != nil {
			return core.Page[*invoicing.Invoice]{}, err
		}
		out.Items = append(out.Items, inv)
	}
	return out, nil
}

// invoiceRepo is invoicing.InvoiceRepository on a transaction.
type invoiceRepo Tx

// Invoices is invoicing's invoice repository on this transaction.
func (t *Tx) Invoices() invoicing.InvoiceRepository { return invoiceRepo(*t) }

// Lock reads the invoice FOR UPDATE.
func (r invoiceRepo) Lock(ctx context.Context, scope core.Scope, id string) (*invoicing.Invoice, error) {
	inv, err := getInvoice(ctx, r.q, scope, id, true)
	return inv, r.q.a.note(err)
}

// LockMany reads invoices FOR UPDATE in one statement, locked in the order of merchant,
// environment and id, answered in the order of refs; an unknown one is invoicing.ErrNotFound.
func (r invoiceRepo) LockMany(ctx context.Context, refs []payments.PayableRef) ([]*invoicing.Invoice, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	mers, envs, ids := make([]string, len(refs)), make([]string, len(refs)), make([]string, len(refs))
	for i, ref := range refs {
		mers[i], envs[i], ids[i] = ref.Scope.MerchantID, string(ref.Scope.Env), ref.ID
	}
	var rows []invoiceRow
	if err := sqlx.SelectContext(ctx, r.q, &rows, `SELECT `+invoiceColumns+` FROM invoices
		WHERE (merchant_id, environment, id) IN (SELECT * FROM unnest($1::text[], $2::text[], $3::text[]))
		ORDER BY merchant_id, environment, id FOR UPDATE`, pq.Array(mers), pq.Array(envs), pq.Array(ids)); err != nil {
		return nil, fmt.Errorf("invoices: lock many: %w", r.q.a.note(err))
	}
	byRef := make(map[payments.PayableRef]*invoicing.Invoice, len(rows))
	for i := range rows {
		inv, err := rows[i].invoice()
		if err != nil {
			return nil, err
		}
		byRef[payments.PayableRef{Scope: inv.Scope(), ID: inv.ID()}] = inv
	}
	out := make([]*invoicing.Invoice, len(refs))
	for i, ref := range refs {
		inv, ok := byRef[ref]
		if !ok {
			return nil, fmt.Errorf("invoices: %s: %w", ref.ID, invoicing.ErrNotFound)
		}
		out[i] = inv
	}
	return out, nil
}

// Insert writes a new invoice.
func (r invoiceRepo) Insert(ctx context.Context, inv *invoicing.Invoice) error {
	args, err := invoiceArgs(inv)
	if err != nil {
		return err
	}
	return r.q.exec(ctx, write{what: "invoices: insert " + inv.ID(), one: true,
		sql: `INSERT INTO invoices (` + invoiceInsertList + `)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22,
			$23, $24, $25, $26, $27, $28, $29, $30, $31, $32, $33, $34)`,
		args: append(append([]any{inv.ID(), inv.Scope().MerchantID, string(inv.Scope().Env)}, args...), inv.Subscription(),
			inv.StartingBalance(), inv.EndingBalance())})
}

// Save writes the invoice's state in one UPDATE of its row.
func (r invoiceRepo) Save(ctx context.Context, inv *invoicing.Invoice) error {
	args, err := invoiceArgs(inv)
	if err != nil {
		return err
	}
	return r.q.exec(ctx, write{what: "invoices: update " + inv.ID(), one: true,
		sql: `UPDATE invoices SET (` + invoiceStateList + `) = ($4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14,
			$15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31)
			WHERE id = $1 AND merchant_id = $2 AND environment = $3`,
		args: append([]any{inv.ID(), inv.Scope().MerchantID, string(inv.Scope().Env)}, args...)})
}

// Delete removes a draft's row.
func (r invoiceRepo) Delete(ctx context.Context, scope core.Scope, id string) error {
	res, err := r.q.ExecContext(ctx, `DELETE FROM invoices WHERE merchant_id = $1 AND environment = $2 AND id = $3`,
		scope.MerchantID, string(scope.Env), id)
	if err != nil {
		return fmt.Errorf("invoices: delete: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return invoicing.ErrNotFound
	}
	return nil
}

// NextNumber increments the counter of scope and year (created at 1) and reads it back; the
// row stays locked until the unit of work ends.
func (r invoiceRepo) NextNumber(ctx context.Context, scope core.Scope, year int) (int64, error) {
	var n int64
	err := r.q.QueryRowxContext(ctx, `INSERT INTO invoice_number_counters (merchant_id, environment, year, last)
		VALUES ($1, $2, $3, 1)
		ON CONFLICT (merchant_id, environment, year) DO UPDATE SET last = invoice_number_counters.last + 1
		RETURNING last`, scope.MerchantID, string(scope.Env), year).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("invoice_number_counters: next: %w", r.q.a.note(err))
	}
	return n, nil
}
