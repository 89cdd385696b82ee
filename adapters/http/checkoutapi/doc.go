// Package checkoutapi implements the browser API of the checkout origin
// (openapi/checkout.yaml): what the hosted and embedded checkout pages call with a session's
// client secret, over the shared kit.
package checkoutapi
