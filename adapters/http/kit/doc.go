// Package kit is what every HTTP API of Kassa shares: the middleware each request passes
// through (request id, access log, recovery, body limits, authentication, rate limits,
// idempotency, validation against the OpenAPI contract), client addresses behind trusted
// proxies, the single table that maps domain errors to HTTP and the error envelope (D3). The
// API packages beside it (merchantapi, operatorapi, checkoutapi, dashboardapi) implement the
// generated strict servers over this kit.
package kit
