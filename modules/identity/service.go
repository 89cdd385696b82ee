package identity

import (
	"errors"

	"github.com/kassa-pay/kassa/core"
)

// Service is the identity use cases.
type Service struct {
	store Store
	clock core.Clock
}

// NewService wires the use cases to their store and clock.
func NewService(store Store, clock core.Clock) *Service {
	return &Service{store: store, clock: clock}
}

// notFound translates the store's ErrNotFound into the documented 404 nf; other errors pass.
func notFound(err error, nf *core.Error, param, noun, id string) error {
	if errors.Is(err, ErrNotFound) {
		return nf.At(param).Msg("No such %s: '%s'.", noun, id)
	}
	return err
}
