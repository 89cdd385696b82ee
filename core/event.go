package core

import (
	"encoding/json"
	"time"
)

// APIVersion is stamped on every event envelope (D10).
const APIVersion = "2026-11-01"

// DomainEvent is a module's typed report of a change to one object (a session that expired, a
// payment that succeeded). Modules never build payloads: the outbox renders a domain event
// into what each channel carries (adapters/wire, the one place that knows the wire forms).
type DomainEvent interface {
	// EventObjectID is the id of the object the event is about (data.object.id), "" when its
	// payload names none (a declined charge has no payment).
	EventObjectID() string
}

// Event is a state change to be reported to webhooks. It is written to the outbox in the same
// transaction as the change it reports; delivery happens later.
type Event struct {
	ID      string
	Type    EventType
	Scope   Scope
	Created time.Time
	// ObjectID is the id of the object the event is about (Subject.EventObjectID()). The
	// outbox indexes it, so the events about one object are found without reading the scope's
	// other events.
	ObjectID string
	// Subject is what happened, as the module knows it; the outbox renders it per channel.
	Subject DomainEvent
}

// NewEvent builds an event with a fresh evt_ id reporting subject.
func NewEvent(typ EventType, scope Scope, at time.Time, subject DomainEvent) Event {
	return Event{ID: NewID(PrefixEvent), Type: typ, Scope: scope, Created: at,
		ObjectID: subject.EventObjectID(), Subject: subject}
}

// EventRecord is an event as the outbox keeps it: what it is about (its type, the kind and id
// of its object) and the object at event time, in the API form of APIVersion. Nothing of a
// channel is stored: each channel's payload (merchant webhooks and GET /v1/events, app
// events) is rendered from the record when it is read (adapters/wire).
type EventRecord struct {
	ID      string
	Type    EventType
	Scope   Scope
	Created time.Time
	// ObjectKind is the kind of Object.
	ObjectKind ObjectKind
	// ObjectID is Object's id, "" when the object has none (a charge that created no payment).
	ObjectID string
	// Object is the object at event time, as JSON.
	Object json.RawMessage
}
