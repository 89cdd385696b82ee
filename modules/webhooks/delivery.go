package webhooks

import (
	"time"

	"github.com/kassa-pay/kassa/core"
)

// Delivery is one event × endpoint delivery as the merchant sees it in the dashboard's delivery
// log: where it stands and how many attempts it has had. It is a read model; the worker
// changes deliveries through the Store, never through this type.
type Delivery struct {
	ID         string
	Scope      core.Scope
	EndpointID string
	EventID    string
	EventType  string
	Status     DeliveryStatus
	// Attempts is the number of attempt numbers handed out so far, including one a worker
	// holds right now (claimed, not yet recorded).
	Attempts int
	// NextAttemptAt is when a pending delivery is next tried: its due time, or the end of the
	// lease of the attempt in flight. Nil once the delivery has ended.
	NextAttemptAt *time.Time
	Created       time.Time
	LastAttemptAt *time.Time
	CompletedAt   *time.Time
}

// DeliveryDetail is a delivery with the record of every attempt, oldest first.
type DeliveryDetail struct {
	Delivery
	AttemptLog []Attempt
}

// TestEventType is the type of the synthetic event SendTestEvent delivers. It is outside the
// merchant catalog on purpose: it never reaches an endpoint by subscription, never enters the
// events outbox (GET /v1/events does not list it), and receivers that follow the rule "ignore
// unknown event types" (interface 6.2) acknowledge it without acting on it.
const TestEventType = "webhook.test"

// deliveryNotFound is the 404 of a delivery id unknown in the scope.
func deliveryNotFound(id string) error { return core.NotFound("webhook_delivery", "id", id) }

// ErrEndpointDisabled: nothing is sent to a disabled endpoint, by hand or otherwise; enable it
// first.
var ErrEndpointDisabled = core.NewError(core.TypeInvalidState, "webhook_endpoint_disabled", "",
	"This webhook endpoint is disabled; enable it before sending to it.")
