package catalog

import (
	"context"

	"github.com/kassa-pay/kassa/core"
)

// Store keeps products and prices. Every method works inside one scope: a row of another
// merchant or of the other environment is ErrNotFound, exactly like a missing one.
//
// Lists are newest first. A cursor (q.StartingAfter / q.EndingBefore) is the id of a row of the
// same scope (and, for prices, of the same product); any other id gives ErrUnknownCursor. The
// query given to a Store is already normalized.
//
// Writing a price whose lookup_key is already used by another active price of the scope gives
// ErrLookupKeyInUse, and the whole write is rolled back.
//
// A Store returns only these sentinels (or errors of its own that are not the caller's fault,
// which the API answers with an opaque 500), never a documented *core.Error: the Service
// decides what the API says. catalogtest.RunStore is the behaviour every Store shows; the
// postgres adapter and the module's in-memory fake both pass it.
type Store interface {
	// CreateProduct inserts p and all of p.Prices() (and p's default price link) atomically.
	CreateProduct(ctx context.Context, p *Product) error
	// GetProduct returns the product with all its prices.
	GetProduct(ctx context.Context, scope core.Scope, id string) (*Product, error)
	// ListProducts pages the scope's products (only those whose active equals *active when
	// active is set), each with all its prices.
	ListProducts(ctx context.Context, scope core.Scope, q core.ListQuery, active *bool) (core.Page[*Product], error)
	// UpdateProduct locks the product and its prices, hands them to fn, and — when fn returns
	// nil — writes back what the product says changed (Product.Changes: its own fields, the
	// prices added, the prices changed), in one transaction.
	// When fn fails nothing is written and its error is returned as is. It returns the product
	// as written.
	UpdateProduct(ctx context.Context, scope core.Scope, id string, fn func(p *Product) error) (*Product, error)
	// GetPrice returns a price of any product of the scope.
	GetPrice(ctx context.Context, scope core.Scope, id string) (*Price, error)
	// ListPrices pages the prices of a product; ErrNotFound when the product is unknown.
	ListPrices(ctx context.Context, scope core.Scope, productID string, q core.ListQuery, active *bool) (core.Page[*Price], error)
}

// Writer is the catalog inside a unit of work (Tx.Catalog): its writes commit with the unit of
// work and nothing else does, and a read made inside UpdateProduct's closure (the price a new
// default names) runs on the same transaction.
type Writer interface {
	// CreateProduct is Store.CreateProduct in the unit of work.
	CreateProduct(ctx context.Context, p *Product) error
	// UpdateProduct is Store.UpdateProduct in the unit of work.
	UpdateProduct(ctx context.Context, scope core.Scope, id string, fn func(p *Product) error) (*Product, error)
	// GetPrice is Store.GetPrice in the unit of work.
	GetPrice(ctx context.Context, scope core.Scope, id string) (*Price, error)
}

// Tx is what the catalog needs inside a unit of work (ports.UnitOfWorkOf[Tx]): every change
// of a product or a price is written through it, so that a keyed request's change commits
// with its stored response (the idempotency gate's one-transaction shape).
type Tx interface {
	Catalog() Writer
}
