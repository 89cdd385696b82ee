package webhooks

import (
	"context"

	"github.com/kassa-pay/kassa/core"
)

// Redeliver queues one more attempt of a delivery, due now (D10: an event can be redelivered
// by hand). Any delivery qualifies — succeeded, failed, disabled or still pending — as long as
// its endpoint is enabled (else 422 webhook_endpoint_disabled); it goes back to pending and the
// next worker round sends it under the next attempt number, with the endpoint's current
// secrets and the event's original body.
//
// A redelivered attempt follows the ordinary policy afterwards: a 2xx ends it succeeded; a
// failure schedules the retry that the schedule gives for its attempt number, or ends it
// failed when the schedule is already used up, so a manual redelivery of an exhausted
// delivery is exactly one attempt. Redelivering a pending delivery only brings its next
// attempt forward; if an attempt is in flight at that moment, the receiver may see both (the
// later one under the higher attempt number): delivery is at least once.
func (s *Service) Redeliver(ctx context.Context, scope core.Scope, id string) (*Delivery, error) {
	if !core.HasIDShape(id, PrefixDelivery) {
		return nil, deliveryNotFound(id)
	}
	d, err := s.store.Redeliver(ctx, scope, id, s.clock.Now())
	if err != nil {
		return nil, deliveryErr(err, id, core.ListQuery{})
	}
	return d, nil
}
