// Package webhooks delivers the events of the outbox to the merchant's webhook endpoints
// (D10): the Endpoint aggregate (url, subscribed events, signing secrets and their rotation,
// enabled or disabled), the delivery policy (retry schedule with jitter, what acknowledges,
// when an endpoint is disabled), the event envelope, and the Worker that fans new events out
// into deliveries, sends the due ones and records every attempt.
//
// It is pure: storage, the HTTP sender (which signs) and the wake-up signal come through the
// ports in store.go and worker.go; adapters/postgres, adapters/webhookhttp and
// adapters/signing implement them and cmd/kassa wires them.
//
// Delivery times run on the wall clock in both environments: a delivery is a real request to a
// real server, so the sandbox test clock (D12) does not move it; the event's `created` is
// stamped by whatever clock its module used.
package webhooks
