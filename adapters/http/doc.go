// Package httpapi is the HTTP driving adapter: the middleware every request passes through
// (request id, access log, recovery, body limits, authentication, rate limits, idempotency,
// validation against the OpenAPI contract), the single table that maps domain errors to HTTP,
// and the handlers that implement the generated strict server interfaces by translating wire
// types into module commands and back. The folder is adapters/http; the package is named
// httpapi so it does not shadow net/http.
package httpapi
