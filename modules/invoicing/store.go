package invoicing

import (
	"context"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
)

// Tx is what invoicing needs inside a unit of work: payments' repositories (an invoice is a
// payable: the charge protocol runs in invoicing's units of work), the outbox, the mail queue,
// the invoices and the merchants' settings (an invoice is numbered with the prefix read there).
type Tx interface {
	payments.Tx
	SettingsTx
	Invoices() InvoiceRepository
}

// InvoiceRepository keeps invoices inside a unit of work. Every call runs its statement where
// it is called.
type InvoiceRepository interface {
	Insert(ctx context.Context, inv *Invoice) error
	// Lock reads invoice id of scope FOR UPDATE; an unknown one is ErrNotFound.
	Lock(ctx context.Context, scope core.Scope, id string) (*Invoice, error)
	// LockMany reads the invoices refs name FOR UPDATE in one statement (locked in the order
	// of merchant, environment and id) and answers them in the order of refs; an unknown one
	// is ErrNotFound.
	LockMany(ctx context.Context, refs []payments.PayableRef) ([]*Invoice, error)
	// Save writes the invoice's state in one UPDATE that must change its one row.
	Save(ctx context.Context, inv *Invoice) error
	// SaveMany writes the state of each of invs (each once) as Save does, in one UPDATE for
	// all of them, all or none: one that is not there is ErrNotFound and nothing is written.
	SaveMany(ctx context.Context, invs []*Invoice) error
	// Delete removes a draft; no row is ErrNotFound.
	Delete(ctx context.Context, scope core.Scope, id string) error
	// NextNumber takes the next sequence number of scope and year: the counter row is
	// incremented (created at 1) and read back in one statement, and stays locked until the
	// unit of work ends, so that numbers are gap-free and never shared.
	NextNumber(ctx context.Context, scope core.Scope, year int) (int64, error)
	// NextNumbers reserves, in one statement, Count consecutive numbers of each block's scope
	// and year (each counter row incremented by Count, created at Count, and locked until the
	// unit of work ends, in the order of merchant, environment and year), and answers the
	// first number of each block, in the blocks' order. Each scope and year appears once.
	// The numbers are gap-free as long as the unit of work uses them all or rolls back.
	NextNumbers(ctx context.Context, blocks []NumberBlock) ([]int64, error)
	// InsertMany writes new invoices in one statement.
	InsertMany(ctx context.Context, invs []*Invoice) error
}

// NumberBlock asks for Count consecutive invoice numbers of a scope and year.
type NumberBlock struct {
	Scope core.Scope
	Year  int
	Count int
}

// Store reads invoices outside a unit of work.
type Store interface {
	// Get reads invoice id of scope; ErrNotFound.
	Get(ctx context.Context, scope core.Scope, id string) (*Invoice, error)
	// ByToken reads the sent invoice with public token t, of any scope; ErrNotFound.
	ByToken(ctx context.Context, token string) (*Invoice, error)
	// List pages the scope's invoices newest first, those f selects; a cursor that is not an
	// invoice of the scope is ErrUnknownCursor.
	List(ctx context.Context, scope core.Scope, q core.ListQuery, f ListFilter) (core.Page[*Invoice], error)
}

// ListFilter selects the invoices of a list: nil or "" selects all.
type ListFilter struct {
	Status       *Status
	Subscription string // the subscription's invoices (sub_…)
}

// PriceInfo is what a catalog line needs of a price.
type PriceInfo struct {
	ID          string
	Active      bool
	Recurring   bool
	UnitAmount  int64
	Currency    core.Currency
	ProductID   string
	ProductName string
}

// PriceLookup reads a price of the scope's catalog; an unknown price answers a not_found
// core.Error (price_not_found).
type PriceLookup interface {
	LookupPrice(ctx context.Context, scope core.Scope, priceID string) (*PriceInfo, error)
}

// Merchant is what invoices show of their merchant.
type Merchant struct {
	Name string
}

// Merchants reads a merchant.
type Merchants interface {
	InvoiceMerchant(ctx context.Context, merchantID string) (Merchant, error)
}
