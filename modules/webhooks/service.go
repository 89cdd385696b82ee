package webhooks

import (
	"context"
	"errors"

	"github.com/kassa-pay/kassa/core"
)

// Service is the management use cases of webhook endpoints and their deliveries, exposed by
// the dashboard API (/api/v1/{env}/webhook_endpoints); nothing here renders a secret except
// the values CreateEndpoint and RotateSecret return.
type Service struct {
	store        Store
	clock        core.Clock
	destinations Destinations
}

// NewService returns the endpoint use cases over store; clock is the wall clock in
// production (webhooks run on real time in both environments). Endpoint URLs must point at
// public addresses unless destinations.AllowPrivate (the development flag,
// KASSA_WEBHOOK_ALLOW_PRIVATE) lifts that; its zero value is the production rule. A nil
// dependency is an error.
func NewService(store Store, clock core.Clock, destinations Destinations) (*Service, error) {
	switch {
	case store == nil:
		return nil, errors.New("webhooks: NewService: nil store")
	case clock == nil:
		return nil, errors.New("webhooks: NewService: nil clock")
	}
	return &Service{store: store, clock: clock, destinations: destinations}, nil
}

// CreateEndpoint validates p and saves a new enabled endpoint. The returned secret is shown to
// the merchant once.
func (s *Service) CreateEndpoint(ctx context.Context, scope core.Scope, p EndpointParams) (e *Endpoint, secret string, err error) {
	e, err = newEndpoint(scope, p, s.destinations, s.clock.Now())
	if err != nil {
		return nil, "", err
	}
	if err := s.store.InsertEndpoint(ctx, e); err != nil {
		return nil, "", err
	}
	return e, e.Secret(), nil
}

// GetEndpoint returns one endpoint of the scope.
func (s *Service) GetEndpoint(ctx context.Context, scope core.Scope, id string) (*Endpoint, error) {
	if !core.HasIDShape(id, PrefixEndpoint) {
		return nil, notFound(id)
	}
	e, err := s.store.GetEndpoint(ctx, scope, id)
	if err != nil {
		return nil, endpointErr(err, id)
	}
	return e, nil
}

// ListEndpoints returns the scope's endpoints, newest first.
func (s *Service) ListEndpoints(ctx context.Context, scope core.Scope) ([]*Endpoint, error) {
	return s.store.ListEndpoints(ctx, scope)
}

// RotateSecret gives the endpoint a new secret (returned, to be shown once); the previous one
// keeps signing for SecretOverlap.
func (s *Service) RotateSecret(ctx context.Context, scope core.Scope, id string) (e *Endpoint, secret string, err error) {
	now := s.clock.Now()
	e, err = s.update(ctx, scope, id, func(e *Endpoint) error {
		secret = e.RotateSecret(now)
		return nil
	})
	return e, secret, err
}

// DisableEndpoint stops deliveries to the endpoint; its pending deliveries become disabled.
func (s *Service) DisableEndpoint(ctx context.Context, scope core.Scope, id string) (*Endpoint, error) {
	return s.update(ctx, scope, id, func(e *Endpoint) error { e.Disable(DisabledByMerchant); return nil })
}

// EnableEndpoint resumes deliveries of events written from now on. Deliveries disabled
// meanwhile are not resent by it; the merchant can redeliver them one by one (Redeliver).
func (s *Service) EnableEndpoint(ctx context.Context, scope core.Scope, id string) (*Endpoint, error) {
	return s.update(ctx, scope, id, func(e *Endpoint) error { e.Enable(); return nil })
}

// DeleteEndpoint removes the endpoint, its deliveries and their attempts.
func (s *Service) DeleteEndpoint(ctx context.Context, scope core.Scope, id string) error {
	if !core.HasIDShape(id, PrefixEndpoint) {
		return notFound(id)
	}
	return endpointErr(s.store.DeleteEndpoint(ctx, scope, id), id)
}

func (s *Service) update(ctx context.Context, scope core.Scope, id string, fn func(*Endpoint) error) (*Endpoint, error) {
	if !core.HasIDShape(id, PrefixEndpoint) {
		return nil, notFound(id)
	}
	e, err := s.store.UpdateEndpoint(ctx, scope, id, s.clock.Now(), fn)
	if err != nil {
		return nil, endpointErr(err, id)
	}
	return e, nil
}
