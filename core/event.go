package core

import "time"

// APIVersion is stamped on every event envelope (D10).
const APIVersion = "2026-11-01"

// Event is a state change to be reported to webhooks. It is written to the outbox in the same
// transaction as the change it reports; delivery happens later.
type Event struct {
	ID      string
	Type    string
	Scope   Scope
	Created time.Time
	// Object is the resource payload at event time, already in its wire (JSON-ready) form.
	Object any
}

// NewEvent builds an event with a fresh evt_ id.
func NewEvent(typ string, scope Scope, at time.Time, object any) Event {
	return Event{ID: NewID(PrefixEvent), Type: typ, Scope: scope, Created: at, Object: object}
}
