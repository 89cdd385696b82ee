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
