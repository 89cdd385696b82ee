package webhooks

import (
	"context"
	"encoding/json"

	"github.com/kassa-pay/kassa/core"
)

// testObject is data.object of a test event: the endpoint it was sent to (never its secret)
// and a note saying what the event is.
type testObject struct {
	ID            string   `json:"id"`
	Object        string   `json:"object"`
	URL           string   `json:"url"`
	EnabledEvents []string `json:"enabled_events"`
	Message       string   `json:"message"`
}

// SendTestEvent sends a synthetic event of type TestEventType to one endpoint, so a merchant
// can check a receiver (reachability, signature verification, headers) without causing a real
// state change. The event has an ordinary envelope (a fresh evt_ id, the scope's environment,
// data.object describing the endpoint) and is signed and retried like any other, but it is not
// written to the events outbox: no other endpoint receives it and GET /v1/events does not list
// it. It is delivered whatever the endpoint subscribes to; a disabled endpoint is refused (422
// webhook_endpoint_disabled), and so is one whose secret cannot be opened (422
// webhook_secret_unavailable). It returns the pending delivery, which the delivery log shows.
func (s *Service) SendTestEvent(ctx context.Context, scope core.Scope, endpointID string) (*Delivery, error) {
	e, err := s.GetEndpoint(ctx, scope, endpointID)
	if err != nil {
		return nil, err
	}
	if !e.Enabled() {
		return nil, ErrEndpointDisabled
	}
	if e.SecretUnavailable() {
		return nil, ErrSecretUnavailable
	}
	now := s.clock.Now()
	data, err := json.Marshal(testObject{
		ID: e.ID(), Object: "webhook_endpoint", URL: e.URL(), EnabledEvents: e.EnabledEvents(),
		Message: "A test event sent from the dashboard. It reports no state change.",
	})
	if err != nil {
		return nil, err
	}
	ev := OutboxEvent{ID: core.NewID(core.PrefixEvent), Type: TestEventType, Scope: scope, Created: now,
		ObjectKind: core.ObjectWebhookEndpoint, ObjectID: e.ID(), Object: data}
	d, err := s.store.InsertTestDelivery(ctx, endpointID, ev, now)
	if err != nil {
		return nil, endpointErr(err, endpointID)
	}
	return d, nil
}
