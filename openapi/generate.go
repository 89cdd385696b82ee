// Package openapi holds Kassa's API contracts: merchant.yaml, operator.yaml, checkout.yaml
// (the browser API of the checkout origin) and dashboard.yaml (OpenAPI 3.0.3), the components
// they share (shared.yaml), the bundled self-contained JSON documents (gen/*.json) and the
// oapi-codegen configurations of the generated Go packages (gen/merchantapi, gen/operatorapi,
// gen/checkoutapi, gen/dashboardapi). Run "go generate ./openapi/" after editing a YAML file.
package openapi

// Bundle each API into one self-contained JSON document, then generate Go from it.
//go:generate go run ./internal/bundle merchant.yaml gen/merchant.json
//go:generate go run ./internal/bundle operator.yaml gen/operator.json
//go:generate go run ./internal/bundle checkout.yaml gen/checkout.json
//go:generate go run ./internal/bundle dashboard.yaml gen/dashboard.json
//go:generate go tool oapi-codegen -config oapi-codegen.merchantapi.yaml gen/merchant.json
//go:generate go tool oapi-codegen -config oapi-codegen.operatorapi.yaml gen/operator.json
//go:generate go tool oapi-codegen -config oapi-codegen.checkoutapi.yaml gen/checkout.json
//go:generate go tool oapi-codegen -config oapi-codegen.dashboardapi.yaml gen/dashboard.json
