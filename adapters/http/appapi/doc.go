// Package appapi implements the read-only App API (openapi/app.yaml) that installed apps call
// with their installation's token: its own front (GET only, the token, the installation's
// rate limit and scopes, the App error envelope) in front of the generated strict server,
// over the shared kit. It is mounted under /app on the API listener; its public base URL is
// the server's app base URL.
package appapi
