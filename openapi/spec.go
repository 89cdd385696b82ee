package openapi

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// MerchantJSON is the bundled, self-contained OpenAPI document of the merchant API, as served
// at GET /v1/openapi.json.
//
//go:embed gen/merchant.json
var MerchantJSON []byte

// OperatorJSON is the bundled, self-contained OpenAPI document of the operator API, as served
// at GET /operator/v1/openapi.json.
//
//go:embed gen/operator.json
var OperatorJSON []byte

// CheckoutJSON is the bundled, self-contained OpenAPI document of the checkout browser API, as
// served at GET /api/v1/openapi.json on the checkout origin.
//
//go:embed gen/checkout.json
var CheckoutJSON []byte

// LoadCheckout parses and validates the checkout browser API document. Each call returns a
// fresh document.
func LoadCheckout() (*openapi3.T, error) { return load("checkout", CheckoutJSON) }

// DashboardJSON is the bundled, self-contained OpenAPI document of the dashboard JSON API, as
// served at GET /api/v1/openapi.json on the dashboard origin.
//
//go:embed gen/dashboard.json
var DashboardJSON []byte

// LoadMerchant parses and validates the merchant API document. Each call returns a fresh
// document, so callers may modify it (e.g. set Servers) without affecting others.
func LoadMerchant() (*openapi3.T, error) { return load("merchant", MerchantJSON) }

// LoadOperator parses and validates the operator API document. Each call returns a fresh
// document.
func LoadOperator() (*openapi3.T, error) { return load("operator", OperatorJSON) }

// LoadDashboard parses and validates the dashboard API document. Each call returns a fresh
// document.
func LoadDashboard() (*openapi3.T, error) { return load("dashboard", DashboardJSON) }

func load(name string, data []byte) (*openapi3.T, error) {
	doc, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		return nil, fmt.Errorf("openapi: load %s spec: %w", name, err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("openapi: validate %s spec: %w", name, err)
	}
	return doc, nil
}

// Served returns the bundled document doc as a server at baseURL serves it: its servers list
// names baseURL (the URL the server was started with, e.g. KASSA_API_URL) instead of the
// development default the spec is written with. An empty baseURL keeps doc as it is.
func Served(doc []byte, baseURL string) ([]byte, error) {
	if baseURL == "" {
		return doc, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(doc, &top); err != nil {
		return nil, fmt.Errorf("openapi: served document: %w", err)
	}
	servers, err := json.Marshal([]map[string]string{{"url": strings.TrimRight(baseURL, "/"), "description": "This Kassa server."}})
	if err != nil {
		return nil, err
	}
	top["servers"] = servers
	return json.Marshal(top)
}

// AppEventsYAML is the contract of the app events' bodies (envelope and data.object per
// event type, in x-events); the App API's document will include it.
//
//go:embed app-events.yaml
var AppEventsYAML []byte

// LoadAppEvents parses and validates the app events document. Each call returns a fresh
// document.
func LoadAppEvents() (*openapi3.T, error) { return load("app events", AppEventsYAML) }

// AppJSON is the bundled, self-contained OpenAPI document of the App API, as served at
// GET {app_base_url}/v1/openapi.json.
//
//go:embed gen/app.json
var AppJSON []byte

// LoadApp parses and validates the App API document. Each call returns a fresh document.
func LoadApp() (*openapi3.T, error) { return load("app", AppJSON) }
