// Package dashboardapi implements the dashboard JSON API (openapi/dashboard.yaml, everything
// under /api/ on the dashboard origin): session-cookie and CSRF authorisation in front of
// handlers that call module use cases, over the shared kit.
package dashboardapi
