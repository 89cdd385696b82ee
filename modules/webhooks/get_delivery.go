package webhooks

import (
	"context"

	"github.com/kassa-pay/kassa/core"
)

// GetDelivery returns one delivery of the scope with every attempt it has had (status code,
// latency, response excerpt or transport error), oldest first. Unknown and foreign ids are
// 404 webhook_delivery_not_found.
func (s *Service) GetDelivery(ctx context.Context, scope core.Scope, id string) (*DeliveryDetail, error) {
	if !core.HasIDShape(id, PrefixDelivery) {
		return nil, deliveryNotFound(id)
	}
	d, err := s.store.GetDelivery(ctx, scope, id)
	if err != nil {
		return nil, deliveryErr(err, id, core.ListQuery{})
	}
	return d, nil
}
