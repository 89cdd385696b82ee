package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/billing"
	"github.com/kassa-pay/kassa/ports"
)

// BillingStore reads customers and saved payment methods on the pool (billing.Store).
type BillingStore struct{ db handle }

// NewBillingStore returns the billing store over db.
func NewBillingStore(db *sqlx.DB) *BillingStore { return &BillingStore{db: wrap(db)} }

var (
	_ billing.Store = (*BillingStore)(nil)
	_ billing.Tx    = (*Tx)(nil)
)

const customerColumns = `id, merchant_id, environment, name, email, email_key, processor_ref, default_payment_method, created, updated`

type customerRow struct {
	ID            string    `db:"id"`
	MerchantID    string    `db:"merchant_id"`
	Environment   string    `db:"environment"`
	Name          string    `db:"name"`
	Email         string    `db:"email"`
	EmailKey      string    `db:"email_key"`
	ProcessorRef  string    `db:"processor_ref"`
	DefaultMethod *string   `db:"default_payment_method"`
	Created       time.Time `db:"created"`
	Updated       time.Time `db:"updated"`
}

func (r customerRow) customer() *billing.Customer {
	return billing.RehydrateCustomer(billing.CustomerSnapshot{ID: r.ID,
		Scope: core.Scope{MerchantID: r.MerchantID, Env: core.Environment(r.Environment)}, Name: r.Name, Email: r.Email,
		EmailKey: r.EmailKey, ProcessorRef: r.ProcessorRef, DefaultPaymentMethod: r.DefaultMethod,
		Created: r.Created.UTC(), Updated: r.Updated.UTC()})
}

const methodColumns = `id, merchant_id, environment, customer_id, type, processor_ref, brand, last4, country, funding,
	exp_month, exp_year, created`

type methodRow struct {
	ID           string    `db:"id"`
	MerchantID   string    `db:"merchant_id"`
	Environment  string    `db:"environment"`
	Customer     string    `db:"customer_id"`
	Type         string    `db:"type"`
	ProcessorRef string    `db:"processor_ref"`
	Brand        string    `db:"brand"`
	Last4        string    `db:"last4"`
	Country      string    `db:"country"`
	Funding      string    `db:"funding"`
	ExpMonth     int       `db:"exp_month"`
	ExpYear      int       `db:"exp_year"`
	Created      time.Time `db:"created"`
}

func (r methodRow) method() *billing.PaymentMethod {
	return billing.RehydratePaymentMethod(billing.MethodSnapshot{ID: r.ID,
		Scope: core.Scope{MerchantID: r.MerchantID, Env: core.Environment(r.Environment)}, Customer: r.Customer,
		Type: ports.PaymentMethodKind(r.Type), ProcessorRef: r.ProcessorRef, Brand: r.Brand, Last4: r.Last4,
		Country: r.Country, Funding: r.Funding, ExpMonth: r.ExpMonth, ExpYear: r.ExpYear, Created: r.Created.UTC()})
}

func getCustomer(ctx context.Context, q sqlx.QueryerContext, scope core.Scope, where string, arg string, lock bool) (*billing.Customer, error) {
	query := `SELECT ` + customerColumns + ` FROM customers WHERE merchant_id = $1 AND environment = $2 AND ` + where
	if lock {
		query += ` FOR UPDATE`
	}
	var r customerRow
	err := sqlx.GetContext(ctx, q, &r, query, scope.MerchantID, string(scope.Env), arg)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, billing.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("customers: get: %w", err)
	}
	return r.customer(), nil
}

func getMethod(ctx context.Context, q sqlx.QueryerContext, scope core.Scope, where string, arg string) (*billing.PaymentMethod, error) {
	var r methodRow
	err := sqlx.GetContext(ctx, q, &r, `SELECT `+methodColumns+` FROM customer_payment_methods
		WHERE merchant_id = $1 AND environment = $2 AND `+where, scope.MerchantID, string(scope.Env), arg)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, billing.ErrMethodNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("customer_payment_methods: get: %w", err)
	}
	return r.method(), nil
}

// Customer reads one customer of scope.
func (st *BillingStore) Customer(ctx context.Context, scope core.Scope, id string) (*billing.Customer, error) {
	return getCustomer(ctx, st.db, scope, `id = $3`, id, false)
}

// PaymentMethod reads one saved method of scope.
func (st *BillingStore) PaymentMethod(ctx context.Context, scope core.Scope, id string) (*billing.PaymentMethod, error) {
	return getMethod(ctx, st.db, scope, `id = $3`, id)
}

// CustomerMethods lists the customer's saved methods, newest first.
func (st *BillingStore) CustomerMethods(ctx context.Context, scope core.Scope, customerID string) ([]*billing.PaymentMethod, error) {
	var rows []methodRow
	err := st.db.SelectContext(ctx, &rows, `SELECT `+methodColumns+` FROM customer_payment_methods
		WHERE merchant_id = $1 AND environment = $2 AND customer_id = $3 AND `+ListPredicate+` ORDER BY seq DESC`,
		scope.MerchantID, string(scope.Env), customerID)
	if err != nil {
		return nil, fmt.Errorf("customer_payment_methods: list: %w", err)
	}
	out := make([]*billing.PaymentMethod, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.method())
	}
	return out, nil
}

// customerRepo is billing.CustomerRepository on a transaction.
type customerRepo Tx

// Customers is billing's customer repository on this transaction.
func (t *Tx) Customers() billing.CustomerRepository { return customerRepo(*t) }

// FindOrInsert inserts c unless the scope has a customer with its e-mail, then reads that one
// FOR UPDATE. Under read committed, a concurrent insert of the same e-mail is waited for by
// ON CONFLICT and then seen by the locking read.
func (r customerRepo) FindOrInsert(ctx context.Context, c *billing.Customer) (*billing.Customer, bool, error) {
	s := c.Snapshot()
	res, err := r.q.ExecContext(ctx, `INSERT INTO customers (id, merchant_id, environment, name, email, email_key,
		processor_ref, default_payment_method, created, updated) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
		ON CONFLICT (email_key, merchant_id, environment) DO NOTHING`,
		s.ID, s.Scope.MerchantID, string(s.Scope.Env), s.Name, s.Email, s.EmailKey, s.ProcessorRef, s.DefaultPaymentMethod,
		s.Created, s.Updated)
	if err != nil {
		return nil, false, fmt.Errorf("customers: insert %s: %w", s.ID, r.q.a.note(err))
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return c, true, nil
	}
	found, err := getCustomer(ctx, r.q, s.Scope, `email_key = $3`, s.EmailKey, true)
	return found, false, r.q.a.note(err)
}

// Lock reads the customer FOR UPDATE.
func (r customerRepo) Lock(ctx context.Context, scope core.Scope, id string) (*billing.Customer, error) {
	c, err := getCustomer(ctx, r.q, scope, `id = $3`, id, true)
	return c, r.q.a.note(err)
}

// Save writes the customer's state in one UPDATE of its row.
func (r customerRepo) Save(ctx context.Context, c *billing.Customer) error {
	s := c.Snapshot()
	return r.q.exec(ctx, write{what: "customers: update " + s.ID, one: true,
		sql: `UPDATE customers SET name = $4, email = $5, email_key = $6, processor_ref = $7, default_payment_method = $8,
			updated = $9 WHERE id = $1 AND merchant_id = $2 AND environment = $3`,
		args: []any{s.ID, s.Scope.MerchantID, string(s.Scope.Env), s.Name, s.Email, s.EmailKey, s.ProcessorRef,
			s.DefaultPaymentMethod, s.Updated}})
}

// methodRepo is billing.PaymentMethodRepository on a transaction.
type methodRepo Tx

// PaymentMethods is billing's saved-method repository on this transaction.
func (t *Tx) PaymentMethods() billing.PaymentMethodRepository { return methodRepo(*t) }

// Insert writes a new method; a processor reference kept already writes nothing and answers
// billing.ErrMethodExists (ON CONFLICT, so the transaction stays usable).
func (r methodRepo) Insert(ctx context.Context, m *billing.PaymentMethod) error {
	s := m.Snapshot()
	res, err := r.q.ExecContext(ctx, `INSERT INTO customer_payment_methods (id, merchant_id, environment, customer_id, type,
		processor_ref, brand, last4, country, funding, exp_month, exp_year, created)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
		ON CONFLICT (processor_ref, merchant_id, environment) DO NOTHING`,
		s.ID, s.Scope.MerchantID, string(s.Scope.Env), s.Customer, string(s.Type), s.ProcessorRef, s.Brand, s.Last4,
		s.Country, s.Funding, s.ExpMonth, s.ExpYear, s.Created)
	if err != nil {
		return fmt.Errorf("customer_payment_methods: insert %s: %w", s.ID, r.q.a.note(err))
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return billing.ErrMethodExists
	}
	return nil
}

// ByProcessorRef reads the scope's method with that processor reference.
func (r methodRepo) ByProcessorRef(ctx context.Context, scope core.Scope, ref string) (*billing.PaymentMethod, error) {
	m, err := getMethod(ctx, r.q, scope, `processor_ref = $3`, ref)
	return m, r.q.a.note(err)
}

// Get reads method id of scope.
func (r methodRepo) Get(ctx context.Context, scope core.Scope, id string) (*billing.PaymentMethod, error) {
	m, err := getMethod(ctx, r.q, scope, `id = $3`, id)
	return m, r.q.a.note(err)
}
