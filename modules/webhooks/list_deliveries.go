package webhooks

import (
	"context"

	"github.com/kassa-pay/kassa/core"
)

// ListDeliveries returns a page of the delivery log of one endpoint, newest first. An endpoint
// of another merchant or environment is 404 webhook_endpoint_not_found, like an unknown one.
func (s *Service) ListDeliveries(ctx context.Context, scope core.Scope, endpointID string, q core.ListQuery) (core.Page[*Delivery], error) {
	q, err := q.Normalize()
	if err != nil {
		return core.Page[*Delivery]{}, err
	}
	if _, err := s.GetEndpoint(ctx, scope, endpointID); err != nil {
		return core.Page[*Delivery]{}, err
	}
	page, err := s.store.ListDeliveries(ctx, scope, endpointID, q)
	if err != nil {
		return core.Page[*Delivery]{}, deliveryErr(err, endpointID, q)
	}
	return page, nil
}
