package webhooks

import (
	"context"
	"slices"

	"github.com/kassa-pay/kassa/core"
)

// EndpointChanges names the merchant's choices to change on an endpoint; a nil field keeps
// its current value.
type EndpointChanges struct {
	URL           *string
	EnabledEvents *[]string
	Description   *string
}

// ChangeEndpoint applies the fields of c to an endpoint and checks the result as on create.
// The endpoint is locked for the read and the write, so concurrent changes of different fields
// do not undo each other.
func (s *Service) ChangeEndpoint(ctx context.Context, scope core.Scope, id string, c EndpointChanges) (*Endpoint, error) {
	return s.update(ctx, scope, id, func(e *Endpoint) error {
		p := EndpointParams{URL: e.url, EnabledEvents: slices.Clone(e.enabledEvents), Description: e.description}
		if c.URL != nil {
			p.URL = *c.URL
		}
		if c.EnabledEvents != nil {
			p.EnabledEvents = *c.EnabledEvents
		}
		if c.Description != nil {
			p.Description = *c.Description
		}
		return e.Update(p, s.destinations)
	})
}
