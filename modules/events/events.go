// Package events reads the events outbox on behalf of a merchant: every state change writes its
// event in the same transaction (D10), and merchants can list and retrieve the events of their
// own scope through GET /v1/events, the way integrators reconcile missed webhooks.
package events

import (
	"context"
	"errors"

	"github.com/kassa-pay/kassa/core"
)

// Event is one kept event: what it is about and the object at event time. Each channel
// renders its payload from it (adapters/wire RenderEvent; GET /v1/events shows the merchant
// channel's).
type Event = core.EventRecord

// Store sentinels, mapped to the documented errors by the Service.
var (
	// ErrNotFound: no event of that id in the scope.
	ErrNotFound = errors.New("events: not found")
	// ErrUnknownCursor: a list cursor that is not an event of the scope.
	ErrUnknownCursor = errors.New("events: unknown list cursor")
)

// Store reads events of one scope, newest first; an unknown id answers ErrNotFound, an unknown
// list cursor ErrUnknownCursor.
type Store interface {
	ListEvents(ctx context.Context, scope core.Scope, q core.ListQuery, typ string) (core.Page[*Event], error)
	GetEvent(ctx context.Context, scope core.Scope, id string) (*Event, error)
	// EventsAbout returns the scope's events whose data.object.id is one of ids, newest
	// first, at most limit of them.
	EventsAbout(ctx context.Context, scope core.Scope, ids []string, limit int) ([]*Event, error)
}

// Service is the read side of the outbox.
type Service struct{ store Store }

// NewService returns the events service over store.
func NewService(store Store) *Service { return &Service{store: store} }

// List returns a page of the scope's events, optionally of one type.
func (s *Service) List(ctx context.Context, scope core.Scope, q core.ListQuery, typ string) (core.Page[*Event], error) {
	q, err := q.Normalize()
	if err != nil {
		return core.Page[*Event]{}, err
	}
	page, err := s.store.ListEvents(ctx, scope, q, typ)
	if errors.Is(err, ErrUnknownCursor) {
		return core.Page[*Event]{}, q.UnknownCursor()
	}
	return page, err
}

// Get returns one event of the scope; another scope's event is 404 event_not_found.
func (s *Service) Get(ctx context.Context, scope core.Scope, id string) (*Event, error) {
	e, err := s.store.GetEvent(ctx, scope, id)
	if errors.Is(err, ErrNotFound) {
		return nil, core.NotFound("event", "id", id)
	}
	return e, err
}

// MaxEventsAbout bounds the events About returns.
const MaxEventsAbout = 100

// About returns the scope's events about any of the objects ids (their data.object.id), newest
// first, at most MaxEventsAbout: the history of a payment together with its checkout session.
func (s *Service) About(ctx context.Context, scope core.Scope, ids ...string) ([]*Event, error) {
	var keep []string
	for _, id := range ids {
		if id != "" {
			keep = append(keep, id)
		}
	}
	if len(keep) == 0 {
		return nil, nil
	}
	return s.store.EventsAbout(ctx, scope, keep, MaxEventsAbout)
}
