package catalog

import (
	"context"
	"errors"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// Service runs the catalog's use cases.
type Service struct {
	store  Store
	uow    ports.UnitOfWorkOf[Tx]
	clocks ports.Clocks
}

// NewService wires the catalog to its store (reads), its unit of work (every change) and
// clocks; all are required.
func NewService(store Store, uow ports.UnitOfWorkOf[Tx], clocks ports.Clocks) (*Service, error) {
	if store == nil {
		return nil, errors.New("catalog: NewService: the store is required")
	}
	if uow == nil {
		return nil, errors.New("catalog: NewService: the unit of work is required")
	}
	if clocks == nil {
		return nil, errors.New("catalog: NewService: the clocks are required")
	}
	return &Service{store: store, uow: uow, clocks: clocks}, nil
}

// updateProduct runs Writer.UpdateProduct in a unit of work of its own (or the one ctx is
// part of: a keyed request's).
func (s *Service) updateProduct(ctx context.Context, scope core.Scope, id string, fn func(ctx context.Context, w Writer, p *Product) error) (*Product, error) {
	var out *Product
	err := s.uow.Do(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		out, err = tx.Catalog().UpdateProduct(ctx, scope, id, func(p *Product) error { return fn(ctx, tx.Catalog(), p) })
		return err
	})
	return out, err
}

func (s *Service) now(ctx context.Context, scope core.Scope) (time.Time, error) {
	return s.clocks.Now(ctx, scope)
}

// lookupKeyTaken maps the store's ErrLookupKeyInUse to lookup_key_taken with param (the
// request field: `lookup_key`, or `price.lookup_key` for the inline price); other errors pass.
func lookupKeyTaken(err error, param string) error {
	if errors.Is(err, ErrLookupKeyInUse) {
		return ErrLookupKeyTaken.At(param)
	}
	return err
}

// unknownCursor maps the store's ErrUnknownCursor to the documented 400 of q's cursor; other
// errors pass.
func unknownCursor(err error, q core.ListQuery) error {
	if errors.Is(err, ErrUnknownCursor) {
		return q.UnknownCursor()
	}
	return err
}

// productNotFound maps the store's ErrNotFound for a product id to product_not_found with
// param `id` (the path parameter, as for every other resource); other errors pass.
func productNotFound(err error, id string) error {
	if errors.Is(err, ErrNotFound) {
		return core.NotFound("product", "id", id)
	}
	return err
}
