// Package openapi holds Kassa's API contracts: merchant.yaml, operator.yaml, checkout.yaml
// (the browser API of the checkout origin), dashboard.yaml and app.yaml (the App API) (OpenAPI 3.0.3), the components
// they share (shared.yaml), the bundled self-contained JSON documents (gen/*.json) and the
// oapi-codegen configurations of the generated Go packages (gen/merchantapi, gen/operatorapi,
// gen/checkoutapi, gen/dashboardapi, gen/appapi). Run "go generate ./openapi/" after editing a YAML file.
package openapi

// Bundle each API into one self-contained JSON document (served as it is). Then generate Go:
// the schemas the APIs share once (gen/schemas, from the merchant API's schemas, which include
// shared.yaml's), and each API's package from a copy of its document in which every schema
// equal to a shared one refers to gen/schemas.json, so the API package aliases the shared type
// (the dashboard's payment is the merchant API's payment, the same Go type).
//go:generate go run ./internal/bundle merchant.yaml gen/merchant.json
//go:generate go run ./internal/bundle operator.yaml gen/operator.json
//go:generate go run ./internal/bundle checkout.yaml gen/checkout.json
//go:generate go run ./internal/bundle dashboard.yaml gen/dashboard.json
//go:generate go run ./internal/bundle app.yaml gen/app.json
//go:generate go run ./internal/link schemas gen/schemas.json gen/merchant.json
//go:generate go run ./internal/link api gen/schemas.json gen/merchant.json gen/codegen/merchant.json
//go:generate go run ./internal/link api gen/schemas.json gen/operator.json gen/codegen/operator.json
//go:generate go run ./internal/link api gen/schemas.json gen/checkout.json gen/codegen/checkout.json
//go:generate go run ./internal/link api gen/schemas.json gen/dashboard.json gen/codegen/dashboard.json
//go:generate go tool oapi-codegen -config oapi-codegen.schemas.yaml gen/schemas.json
//go:generate go tool oapi-codegen -config oapi-codegen.merchantapi.yaml gen/codegen/merchant.json
//go:generate go tool oapi-codegen -config oapi-codegen.operatorapi.yaml gen/codegen/operator.json
//go:generate go tool oapi-codegen -config oapi-codegen.checkoutapi.yaml gen/codegen/checkout.json
//go:generate go tool oapi-codegen -config oapi-codegen.dashboardapi.yaml gen/codegen/dashboard.json
//go:generate go tool oapi-codegen -config oapi-codegen.appapi.yaml gen/app.json
