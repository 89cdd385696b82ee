package billing

import (
	"time"

	"github.com/kassa-pay/kassa/core"
)

// Event types of subscriptions: references into the event catalog (core.EventCatalog).
const (
	EventSubscriptionCreated      = core.EventSubscriptionCreated
	EventSubscriptionUpdated      = core.EventSubscriptionUpdated
	EventSubscriptionDeleted      = core.EventSubscriptionDeleted
	EventSubscriptionTrialWillEnd = core.EventSubscriptionTrialWillEnd
)

// SubscriptionEvent is an event about a subscription: data.object is the subscription at
// event time.
type SubscriptionEvent struct{ Subscription *Subscription }

// EventObjectID is the subscription's id.
func (e SubscriptionEvent) EventObjectID() string { return e.Subscription.ID() }

func subscriptionEvent(typ core.EventType, s *Subscription, at time.Time) core.Event {
	return core.NewEvent(typ, s.Scope(), at, SubscriptionEvent{Subscription: RehydrateSubscription(s.Snapshot())})
}

// changeEvents are the events of a transition's change.
func changeEvents(ch Change, s *Subscription, at time.Time) []core.Event {
	var out []core.Event
	if ch.Updated {
		out = append(out, subscriptionEvent(EventSubscriptionUpdated, s, at))
	}
	if ch.Deleted {
		out = append(out, subscriptionEvent(EventSubscriptionDeleted, s, at))
	}
	if ch.TrialWillEnd {
		out = append(out, subscriptionEvent(EventSubscriptionTrialWillEnd, s, at))
	}
	return out
}
