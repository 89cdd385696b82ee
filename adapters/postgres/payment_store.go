package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
)

// PaymentStore reads payments, and lists the due ones for the payments sweep
// (payments.DueStore). Payments are written only inside a unit of work, through the
// repository of the bound transaction (Tx.Payments: the charge protocol inserts one in the
// transaction that applies its outcome; the sweep locks due ones with LockDue and writes what
// each reports changed with Save, its disputes through Tx.Disputes, beside their events and
// mail); every query filters by merchant_id and environment.
type PaymentStore struct {
	db handle
}

// NewPaymentStore returns the payment store on db.
func NewPaymentStore(db *sqlx.DB) *PaymentStore { return &PaymentStore{db: wrap(db)} }

var (
	_ payments.Reader   = (*PaymentStore)(nil)
	_ payments.DueStore = (*PaymentStore)(nil)
)

var paymentColumns = strings.Join([]string{
	"id", "merchant_id", "environment", "payable_kind", "session_id", "invoice_id", "amount", "amount_refunded",
	"currency", "status", "previous_status", "dispute_lost", "payment_method",
	"card_brand", "card_last4", "card_country", "card_funding",
	"fee_service_eur", "fee_psp_eur", "fee_service_charge_currency", "fee_currency", "fee_rate_date", "fee_rate",
	"customer_name", "customer_email", "reference", "metadata", "failure_code", "failure_message", "created",
}, ", ")

type paymentRow struct {
	ID                       string    `db:"id"`
	MerchantID               string    `db:"merchant_id"`
	Environment              string    `db:"environment"`
	PayableKind              string    `db:"payable_kind"`
	SessionID                *string   `db:"session_id"`
	InvoiceID                *string   `db:"invoice_id"`
	Amount                   int64     `db:"amount"`
	AmountRefunded           int64     `db:"amount_refunded"`
	Currency                 string    `db:"currency"`
	Status                   string    `db:"status"`
	PreviousStatus           *string   `db:"previous_status"`
	DisputeLost              bool      `db:"dispute_lost"`
	PaymentMethod            string    `db:"payment_method"`
	CardBrand                *string   `db:"card_brand"`
	CardLast4                *string   `db:"card_last4"`
	CardCountry              *string   `db:"card_country"`
	CardFunding              *string   `db:"card_funding"`
	FeeServiceEUR            int64     `db:"fee_service_eur"`
	FeePSPEUR                int64     `db:"fee_psp_eur"`
	FeeServiceChargeCurrency int64     `db:"fee_service_charge_currency"`
	FeeCurrency              string    `db:"fee_currency"`
	FeeRateDate              time.Time `db:"fee_rate_date"`
	FeeRate                  *string   `db:"fee_rate"`
	CustomerName             string    `db:"customer_name"`
	CustomerEmail            string    `db:"customer_email"`
	Reference                *string   `db:"reference"`
	Metadata                 []byte    `db:"metadata"`
	FailureCode              *string   `db:"failure_code"`
	FailureMessage           *string   `db:"failure_message"`
	Created                  time.Time `db:"created"`
}

func (r *paymentRow) payment() (*payments.Payment, error) {
	snap := payments.PaymentSnapshot{
		ID:             r.ID,
		Scope:          core.Scope{MerchantID: r.MerchantID, Env: core.Environment(r.Environment)},
		PayableKind:    payments.PayableKind(r.PayableKind),
		SessionID:      r.SessionID,
		InvoiceID:      r.InvoiceID,
		Amount:         r.Amount,
		AmountRefunded: r.AmountRefunded,
		Currency:       core.Currency(r.Currency),
		Status:         payments.Status(r.Status),
		PaymentMethod:  payments.PaymentMethod(r.PaymentMethod),
		Fee: payments.Fee{
			ServiceFeeEUR: r.FeeServiceEUR, PSPFeeEUR: r.FeePSPEUR,
			ServiceFeeChargeCurrency: r.FeeServiceChargeCurrency, Currency: core.Currency(r.FeeCurrency),
			RateDate: dateUTC(r.FeeRateDate), Rate: deref(r.FeeRate),
		},
		Customer:       payments.Customer{Name: r.CustomerName, Email: r.CustomerEmail},
		Reference:      r.Reference,
		FailureCode:    r.FailureCode,
		FailureMessage: r.FailureMessage,
		DisputeLost:    r.DisputeLost,
		Created:        r.Created.UTC(),
	}
	if r.PreviousStatus != nil {
		snap.StatusBeforeDispute = payments.Status(*r.PreviousStatus)
	}
	if r.CardBrand != nil {
		snap.Card = &payments.Card{Brand: *r.CardBrand, Last4: deref(r.CardLast4),
			Country: deref(r.CardCountry), Funding: deref(r.CardFunding)}
	}
	if err := json.Unmarshal(r.Metadata, &snap.Metadata); err != nil {
		return nil, fmt.Errorf("payments %s: metadata: %w", r.ID, err)
	}
	return payments.RehydratePayment(snap), nil
}

// dateUTC reads a Postgres date (which lib/pq returns at 00:00 of some zone) as 00:00 UTC.
func dateUTC(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func nullIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func nullIfZero(n int) *int {
	if n == 0 {
		return nil
	}
	return &n
}

// paymentInsert writes a new payment; nothing else (its receipt is queued by the payments
// module, through the mail queue). A second payment of a session is refused by
// payments_session, which the repository's Insert answers as payments.ErrPaymentExists.
func paymentInsert(rec *payments.Record) (write, error) {
	args, err := paymentInsertArgs(rec)
	if err != nil {
		return write{}, err
	}
	const insert = `INSERT INTO payments (` + paymentInsertList + `)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20,
		$21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31, $32, $33, $34, $35, $36, $37, $38, $39, $40)`
	return write{what: "payments: insert " + rec.Payment.ID(), sql: insert, args: args}, nil
}

// paymentInsertList is the columns paymentInsert and paymentsInsert write, in the order of
// their arguments (paymentInsertArgs).
const paymentInsertList = `id, merchant_id, environment, session_id, invoice_id, amount, amount_refunded, currency, status,
	previous_status, dispute_lost, payment_method, card_brand, card_last4, card_country, card_funding,
	card_exp_month, card_exp_year, sepa_country, sepa_last4,
	fee_service_eur, fee_psp_eur, fee_service_charge_currency, fee_currency, fee_rate_date,
	customer_name, customer_email, reference, metadata, failure_code, failure_message,
	processor_ref, settles_at, created, dispute_opens_at, dispute_reason, fee_rate, available_at,
	payable_kind, payable_key`

var paymentInsertColumns = columnNames(paymentInsertList)

// paymentInsertArgs checks a new payment and answers the values of paymentInsertColumns.
func paymentInsertArgs(rec *payments.Record) ([]any, error) {
	if rec == nil || rec.Payment == nil {
		return nil, errors.New("payments: insert: no payment")
	}
	if rec.PayableKey == "" || rec.Payment.PayableKind() == "" {
		return nil, errors.New("payments: insert: the payable kind and key are required")
	}
	p := rec.Payment.Snapshot()
	md := p.Metadata
	if md == nil {
		md = map[string]string{}
	}
	metadata, err := jsonText(md)
	if err != nil {
		return nil, err
	}
	var brand, last4, country, funding *string
	if c := p.Card; c != nil {
		brand, last4, country, funding = &c.Brand, &c.Last4, &c.Country, &c.Funding
	}
	prev := previousStatus(p)
	var disputeReason *string
	if rec.DisputeOpensAt != nil {
		if rec.DisputeReason == "" {
			return nil, errors.New("payments: insert: a dispute notice needs a reason")
		}
		disputeReason = &rec.DisputeReason
	}
	return []any{p.ID, p.Scope.MerchantID, string(p.Scope.Env), p.SessionID, p.InvoiceID, p.Amount, p.AmountRefunded,
		string(p.Currency), string(p.Status), prev, p.DisputeLost, string(p.PaymentMethod),
		brand, last4, country, funding, nullIfZero(rec.CardExpMonth), nullIfZero(rec.CardExpYear),
		nullIfEmpty(rec.SEPACountry), nullIfEmpty(rec.SEPALast4),
		p.Fee.ServiceFeeEUR, p.Fee.PSPFeeEUR, p.Fee.ServiceFeeChargeCurrency, string(p.Fee.Currency),
		p.Fee.RateDate.UTC().Format(time.DateOnly),
		p.Customer.Name, p.Customer.Email, p.Reference, metadata, p.FailureCode, p.FailureMessage,
		rec.ProcessorRef, rec.SettlesAt(), p.Created, rec.DisputeOpensAt, disputeReason,
		nullIfEmpty(p.Fee.Rate), rec.AvailableAt(), string(p.PayableKind), rec.PayableKey}, nil
}

// paymentsInsert writes new payments with one statement: the rows of paymentInsert, as one
// JSON array read back with json_populate_recordset over the table's row type (static SQL).
func paymentsInsert(recs []*payments.Record) (write, error) {
	rows := make([][]any, 0, len(recs))
	for _, rec := range recs {
		args, err := paymentInsertArgs(rec)
		if err != nil {
			return write{}, err
		}
		rows = append(rows, args)
	}
	doc, err := jsonRows(paymentInsertColumns, map[string]bool{"metadata": true}, rows)
	if err != nil {
		return write{}, err
	}
	return write{
		what: fmt.Sprintf("payments: insert %d payments", len(recs)),
		sql: `INSERT INTO payments (` + paymentInsertList + `)
		SELECT ` + paymentInsertList + `
		FROM json_populate_recordset(NULL::payments, $1::json)`,
		args: []any{doc},
	}, nil
}

func previousStatus(p payments.PaymentSnapshot) *string {
	if p.StatusBeforeDispute == "" {
		return nil
	}
	s := string(p.StatusBeforeDispute)
	return &s
}

// Get reads one payment of scope.
func (st *PaymentStore) Get(ctx context.Context, scope core.Scope, id string) (*payments.Payment, error) {
	var r paymentRow
	err := st.db.GetContext(ctx, &r, `SELECT `+paymentColumns+` FROM payments
		WHERE merchant_id = $1 AND environment = $2 AND id = $3`, scope.MerchantID, string(scope.Env), id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, payments.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("payments: get: %w", err)
	}
	return r.payment()
}

// GetBySession reads the payment of a checkout session of scope.
func (st *PaymentStore) GetBySession(ctx context.Context, scope core.Scope, sessionID string) (*payments.Payment, error) {
	p, err := paymentBySession(ctx, st.db, scope, sessionID)
	if err != nil {
		return nil, err
	}
	if p == nil {
		return nil, payments.ErrNotFound
	}
	return p, nil
}

// paymentBySession reads the payment of a session, or nil when it has none.
func paymentBySession(ctx context.Context, q sqlx.QueryerContext, scope core.Scope, sessionID string) (*payments.Payment, error) {
	var r paymentRow
	err := sqlx.GetContext(ctx, q, &r, `SELECT `+paymentColumns+` FROM payments
		WHERE merchant_id = $1 AND environment = $2 AND session_id = $3`, scope.MerchantID, string(scope.Env), sessionID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("payments: get by session: %w", err)
	}
	return r.payment()
}

// paymentsBySessions reads the payments of several sessions of one scope, keyed by session id.
func paymentsBySessions(ctx context.Context, q sqlx.QueryerContext, scope core.Scope, sessionIDs []string) (map[string]*payments.Payment, error) {
	out := map[string]*payments.Payment{}
	if len(sessionIDs) == 0 {
		return out, nil
	}
	var rows []paymentRow
	if err := sqlx.SelectContext(ctx, q, &rows, `SELECT `+paymentColumns+` FROM payments
		WHERE merchant_id = $1 AND environment = $2 AND session_id = ANY($3)`,
		scope.MerchantID, string(scope.Env), pq.Array(sessionIDs)); err != nil {
		return nil, fmt.Errorf("payments: get by sessions: %w", err)
	}
	for i := range rows {
		p, err := rows[i].payment()
		if err != nil {
			return nil, err
		}
		out[*rows[i].SessionID] = p
	}
	return out, nil
}
