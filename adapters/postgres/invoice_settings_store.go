package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/invoicing"
)

// InvoiceSettingsStore reads merchants' invoicing settings (invoice_settings, migration
// 00049) outside any transaction; Tx.InvoiceSettings reads and writes them on a unit of work's.
type InvoiceSettingsStore struct{ db handle }

// NewInvoiceSettingsStore returns the settings reader over db.
func NewInvoiceSettingsStore(db *sqlx.DB) *InvoiceSettingsStore {
	return &InvoiceSettingsStore{db: wrap(db)}
}

var (
	_ invoicing.SettingsReader = (*InvoiceSettingsStore)(nil)
	_ invoicing.SettingsTx     = (*Tx)(nil)
)

// InvoiceSettingsPrefixSQL reads a merchant's chosen prefix (planner cases name it).
const InvoiceSettingsPrefixSQL = `SELECT invoice_prefix, updated FROM invoice_settings WHERE merchant_id = $1`

// InvoicePrefix answers the merchant's chosen prefix and when it was chosen; "" and nil when
// it chose none.
func (s *InvoiceSettingsStore) InvoicePrefix(ctx context.Context, merchantID string) (string, *time.Time, error) {
	var r struct {
		Prefix  string    `db:"invoice_prefix"`
		Updated time.Time `db:"updated"`
	}
	err := s.db.GetContext(ctx, &r, InvoiceSettingsPrefixSQL, merchantID)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil, nil
	}
	if err != nil {
		return "", nil, fmt.Errorf("invoice_settings: get: %w", err)
	}
	u := r.Updated.UTC()
	return r.Prefix, &u, nil
}

// LastNumber answers the last sequence number taken in the scope and year (0: none yet).
func (s *InvoiceSettingsStore) LastNumber(ctx context.Context, scope core.Scope, year int) (int64, error) {
	var last int64
	err := s.db.GetContext(ctx, &last, `SELECT last FROM invoice_number_counters
		WHERE merchant_id = $1 AND environment = $2 AND year = $3`, scope.MerchantID, string(scope.Env), year)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("invoice_number_counters: get: %w", err)
	}
	return last, nil
}

type invoiceSettingsRepo Tx

// InvoiceSettings is invoicing's settings repository on this transaction.
func (t *Tx) InvoiceSettings() invoicing.SettingsRepository { return invoiceSettingsRepo(*t) }

// SetInvoicePrefix makes prefix the merchant's (one upsert).
func (r invoiceSettingsRepo) SetInvoicePrefix(ctx context.Context, merchantID, prefix string, now time.Time) error {
	return r.q.exec(ctx, write{what: "invoice_settings: set " + merchantID, one: true,
		sql: `INSERT INTO invoice_settings (merchant_id, invoice_prefix, updated) VALUES ($1, $2, $3)
			ON CONFLICT (merchant_id) DO UPDATE SET invoice_prefix = EXCLUDED.invoice_prefix, updated = EXCLUDED.updated`,
		args: []any{merchantID, prefix, now.UTC()}})
}

// invoiceSettingsChosenSQL reads a merchant's name and chosen prefix (” when it chose none).
const invoiceSettingsChosenSQL = `SELECT m.name, COALESCE(s.invoice_prefix, '') FROM merchants m
	LEFT JOIN invoice_settings s ON s.merchant_id = m.id WHERE m.id = $1`

// ChosenPrefix reads, on the transaction, the merchant's chosen prefix ("" when it chose none)
// and its name.
func (r invoiceSettingsRepo) ChosenPrefix(ctx context.Context, merchantID string) (string, string, error) {
	var prefix, name string
	if err := r.q.QueryRowxContext(ctx, invoiceSettingsChosenSQL, merchantID).Scan(&name, &prefix); err != nil {
		return "", "", fmt.Errorf("invoice_settings: chosen prefix of %s: %w", merchantID, r.q.a.note(err))
	}
	return prefix, name, nil
}
