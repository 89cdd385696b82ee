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
// Who receives an event is decided here, by the fan-out (Store.FanOut, run by the Worker): the
// outbox writer queues every event a channel carries, whoever subscribes, and the fan-out turns
// each into one delivery per subscriber — today a merchant endpoint that is enabled and
// subscribes to the type (Endpoint.Subscribes: the merchant catalog only), or into none. App
// installations are the next kind of subscriber: their endpoints join the same fan-out, and
// their deliveries carry the app channel's rendering (the worker's Render with
// core.ChannelApp, core.AppReadScope for the scope an installation needs). The body of a
// delivery is rendered when it is sent, from the kept event (Render), never stored.
//
// Delivery times run on the wall clock in both environments: a delivery is a real request to a
// real server, so the sandbox test clock (D12) does not move it; the event's `created` is
// stamped by whatever clock its module used.
package webhooks
