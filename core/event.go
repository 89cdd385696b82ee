package core

import "time"

// APIVersion is stamped on every event envelope (D10).
const APIVersion = "2026-11-01"

// Event is a state change to be reported to webhooks. It is written to the outbox in the same
// transaction as the change it reports; delivery happens later.
type Event struct {
	ID      string
	Type    EventType
	Scope   Scope
	Created time.Time
	// ObjectID is the id of the object the event is about (data.object.id), "" when the
	// payload names none (a declined charge has no payment). The outbox indexes it, so the
	// events about one object are found without reading the scope's other events.
	ObjectID string
	// Object is the resource payload at event time, already in its wire (JSON-ready) form.
	Object any
}

// NewEvent builds an event with a fresh evt_ id about the object objectID (see Event.ObjectID).
func NewEvent(typ EventType, scope Scope, at time.Time, objectID string, object any) Event {
	return Event{ID: NewID(PrefixEvent), Type: typ, Scope: scope, Created: at, ObjectID: objectID, Object: object}
}
