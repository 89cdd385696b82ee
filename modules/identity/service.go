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

// NewService wires the use cases to their store and clock; both are required.
func NewService(store Store, clock core.Clock) (*Service, error) {
	if store == nil {
		return nil, errors.New("identity: NewService: the store is required")
	}
	if clock == nil {
		return nil, errors.New("identity: NewService: the clock is required")
	}
	return &Service{store: store, clock: clock}, nil
}

// notFound translates the store's ErrNotFound into the documented 404 nf; other errors pass.
func notFound(err error, nf *core.Error, param, noun, id string) error {
	if errors.Is(err, ErrNotFound) {
		return nf.At(param).Msg("No such %s: '%s'.", noun, id)
	}
	return err
}
