package webhooks

import "github.com/kassa-pay/kassa/core"

// Domain errors of webhook endpoints. They match with errors.Is on type and code.
var (
	// ErrHTTPSRequired: a live endpoint must use https (test endpoints may use http).
	ErrHTTPSRequired = core.NewError(core.TypeInvalidRequest, "url_invalid", "url",
		"Live webhook endpoints must use an https URL.")
	// ErrEndpointLimit: the scope already has MaxEndpoints endpoints.
	ErrEndpointLimit = core.NewError(core.TypeInvalidRequest, "endpoint_limit_reached", "",
		"This environment already has the maximum number of webhook endpoints.")
)

// notFound is the 404 of an endpoint id unknown in the scope.
func notFound(id string) error { return core.NotFound("webhook_endpoint", "id", id) }
