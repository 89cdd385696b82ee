// Package merchantapi implements the merchant API (openapi/merchant.yaml, D1): the generated
// strict server's handlers translate wire types into module calls and back, over the shared
// kit (gate, error table, idempotency).
package merchantapi
