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
	clocks ports.Clocks
}

// NewService wires the catalog to its store and clocks.
func NewService(store Store, clocks ports.Clocks) *Service {
	return &Service{store: store, clocks: clocks}
}

func (s *Service) now(ctx context.Context, scope core.Scope) (time.Time, error) {
	return s.clocks.Now(ctx, scope)
}

// productNotFound maps the store's ErrNotFound for a product id to product_not_found with
// param `id` (the path parameter, as for every other resource); other errors pass.
func productNotFound(err error, id string) error {
	if errors.Is(err, ErrNotFound) {
		return core.NotFound("product", "id", id)
	}
	return err
}

// listQuery normalizes q and names the cursor error for the store's ErrUnknownCursor.
func listQuery(q core.ListQuery) (core.ListQuery, error) {
	return q.Normalize()
}

func cursorError(err error, q core.ListQuery) error {
	if !errors.Is(err, ErrUnknownCursor) {
		return err
	}
	if q.EndingBefore != "" {
		return core.InvalidField("ending_before", "No such object: '%s'.", q.EndingBefore)
	}
	return core.InvalidField("starting_after", "No such object: '%s'.", q.StartingAfter)
}
