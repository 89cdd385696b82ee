package webhooks

import (
	"errors"

	"github.com/kassa-pay/kassa/core"
)

// Domain errors of webhook endpoints. They match with errors.Is on type and code.
var (
	// ErrHTTPSRequired: a live endpoint must use https (test endpoints may use http).
	ErrHTTPSRequired = core.NewError(core.TypeInvalidRequest, "url_invalid", "url",
		"Live webhook endpoints must use an https URL.")
	// ErrEndpointLimit: the scope already has MaxEndpoints endpoints.
	ErrEndpointLimit = core.NewError(core.TypeInvalidRequest, "endpoint_limit_reached", "",
		"This environment already has the maximum number of webhook endpoints.")
	// ErrSecretUnavailable: the endpoint's signing secret cannot be opened with the server's
	// sealing key, so nothing can be signed for it.
	ErrSecretUnavailable = core.NewError(core.TypeInvalidState, CodeSecretUnavailable, "",
		"This endpoint's signing secret cannot be opened: the server's webhook secret key (KASSA_WEBHOOK_SECRET_KEY) is missing or is not the key the secret was sealed with. Ask the operator to configure the right key, or rotate the endpoint's secret to get a new one.")
)

// CodeSecretUnavailable is the code of ErrSecretUnavailable.
const CodeSecretUnavailable = "webhook_secret_unavailable"

// SecretUnavailableError is the recorded failure of an attempt that could not be signed: it
// is not sent.
const SecretUnavailableError = "not sent: the signing secret cannot be opened (KASSA_WEBHOOK_SECRET_KEY is missing or wrong); restore the key or rotate the secret"

// Store sentinels: what a Store answers for the outcomes the use cases tell apart. They carry
// no type, code or param; the use cases map them to the documented errors (service.go).
var (
	// ErrNotFound: no endpoint of that id in the scope (unknown, or another merchant's or
	// environment's).
	ErrNotFound = errors.New("webhooks: endpoint not found")
	// ErrDeliveryNotFound: no delivery of that id in the scope (unknown, another scope's, or
	// deleted with its endpoint).
	ErrDeliveryNotFound = errors.New("webhooks: delivery not found")
	// ErrUnknownCursor: a list cursor that is not a delivery of the endpoint's log.
	ErrUnknownCursor = errors.New("webhooks: unknown list cursor")
)

// notFound is the 404 of an endpoint id unknown in the scope.
func notFound(id string) error { return core.NotFound("webhook_endpoint", "id", id) }

// endpointErr maps the store's endpoint sentinel to the documented 404 of id.
func endpointErr(err error, id string) error {
	if errors.Is(err, ErrNotFound) {
		return notFound(id)
	}
	return err
}

// deliveryErr maps the store's delivery sentinels to the documented errors: the 404 of id, or
// the 400 of a list cursor that is not in the log.
func deliveryErr(err error, id string, q core.ListQuery) error {
	switch {
	case errors.Is(err, ErrDeliveryNotFound):
		return deliveryNotFound(id)
	case errors.Is(err, ErrNotFound):
		return notFound(id)
	case errors.Is(err, ErrUnknownCursor):
		return q.UnknownCursor()
	}
	return err
}
