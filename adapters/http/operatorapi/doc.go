// Package operatorapi implements the operator API (openapi/operator.yaml, D1): onboarding
// merchants and their keys, and the health endpoints, over the shared kit.
package operatorapi
