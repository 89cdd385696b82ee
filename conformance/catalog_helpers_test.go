package conformance

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
)

// Helpers of the catalog sections (products, prices, their limits and isolation). Their names
// start with cat so they never meet another section's helpers.

var (
	catProductIDRE = regexp.MustCompile(`^prod_[0-9A-Za-z]{24}$`)
	catPriceIDRE   = regexp.MustCompile(`^price_[0-9A-Za-z]{24}$`)
)

var catCtx = context.Background()

// catCreateProduct creates a product through the typed client and fails unless it gets 200.
func catCreateProduct(t *testing.T, c *api.ClientWithResponses, body api.ProductCreate) api.Product {
	t.Helper()
	resp, err := c.CreateProductWithResponse(catCtx, nil, body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.JSON200 == nil {
		t.Fatalf("create product: %d %s", resp.StatusCode(), resp.Body)
	}
	return *resp.JSON200
}

// catProduct creates a minimal product named name.
func catProduct(t *testing.T, c *api.ClientWithResponses, name string) api.Product {
	t.Helper()
	return catCreateProduct(t, c, api.ProductCreate{Name: name})
}

// catCreatePrice adds a price to a product and fails unless it gets 200.
func catCreatePrice(t *testing.T, c *api.ClientWithResponses, productID string, body api.PriceCreate) api.Price {
	t.Helper()
	resp, err := c.CreatePriceWithResponse(catCtx, productID, nil, body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.JSON200 == nil {
		t.Fatalf("create price: %d %s", resp.StatusCode(), resp.Body)
	}
	return *resp.JSON200
}

// catEUR is a one-time EUR price body.
func catEUR(amount int64) api.PriceCreate {
	return api.PriceCreate{Currency: "eur", UnitAmount: amount}
}

// catGetProduct retrieves a product and fails unless it gets 200.
func catGetProduct(t *testing.T, c *api.ClientWithResponses, id string) api.Product {
	t.Helper()
	resp, err := c.RetrieveProductWithResponse(catCtx, id)
	if err != nil {
		t.Fatal(err)
	}
	if resp.JSON200 == nil {
		t.Fatalf("retrieve product: %d %s", resp.StatusCode(), resp.Body)
	}
	return *resp.JSON200
}

// catUpdateProduct updates a product and fails unless it gets 200.
func catUpdateProduct(t *testing.T, c *api.ClientWithResponses, id string, body api.ProductUpdate) api.Product {
	t.Helper()
	resp, err := c.UpdateProductWithResponse(catCtx, id, nil, body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.JSON200 == nil {
		t.Fatalf("update product: %d %s", resp.StatusCode(), resp.Body)
	}
	return *resp.JSON200
}

// catUpdatePrice updates a price and fails unless it gets 200.
func catUpdatePrice(t *testing.T, c *api.ClientWithResponses, productID, priceID string, body api.PriceUpdate) api.Price {
	t.Helper()
	resp, err := c.UpdatePriceWithResponse(catCtx, productID, priceID, nil, body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.JSON200 == nil {
		t.Fatalf("update price: %d %s", resp.StatusCode(), resp.Body)
	}
	return *resp.JSON200
}

// catListProducts lists products and fails unless it gets 200.
func catListProducts(t *testing.T, c *api.ClientWithResponses, params api.ListProductsParams) api.ProductList {
	t.Helper()
	resp, err := c.ListProductsWithResponse(catCtx, &params)
	if err != nil {
		t.Fatal(err)
	}
	if resp.JSON200 == nil {
		t.Fatalf("list products: %d %s", resp.StatusCode(), resp.Body)
	}
	return *resp.JSON200
}

// catListPrices lists a product's prices and fails unless it gets 200.
func catListPrices(t *testing.T, c *api.ClientWithResponses, productID string, params api.ListPricesParams) api.PriceList {
	t.Helper()
	resp, err := c.ListPricesWithResponse(catCtx, productID, &params)
	if err != nil {
		t.Fatal(err)
	}
	if resp.JSON200 == nil {
		t.Fatalf("list prices: %d %s", resp.StatusCode(), resp.Body)
	}
	return *resp.JSON200
}

// catProductIDs are the ids of products, in order.
func catProductIDs(ps []api.Product) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Id
	}
	return out
}

// catPriceIDs are the ids of prices, in order.
func catPriceIDs(ps []api.Price) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Id
	}
	return out
}

// catSameIDs fails unless got equals want, element by element.
func catSameIDs(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
}

// catPost sends body (marshalled) to path with key, through raw.
func catPost(t *testing.T, key, path string, body any) Raw {
	t.Helper()
	return raw(t, http.MethodPost, path, key, rawJSON(t, body), nil)
}

// catGet sends GET path?query with key.
func catGet(t *testing.T, key, path string, query url.Values) Raw {
	t.Helper()
	if len(query) > 0 {
		path += "?" + query.Encode()
	}
	return raw(t, http.MethodGet, path, key, "", nil)
}

// catDecode fails unless r is a 200 and decodes its body into a T.
func catDecode[T any](t *testing.T, r Raw) T {
	t.Helper()
	var v T
	if r.Status != http.StatusOK {
		t.Fatalf("status = %d, want 200; body %s", r.Status, r.Body)
	}
	if err := json.Unmarshal(r.Body, &v); err != nil {
		t.Fatalf("decode: %v; body %s", err, r.Body)
	}
	return v
}

// catWantErr asserts a raw error response (wantError for Raw).
func catWantErr(t *testing.T, r Raw, status int, typ, code, param string) {
	t.Helper()
	wantError(t, r.Status, r.Header, r.Body, status, typ, code, param)
}

// catLimitCase is one request of a limit table: code "" means accepted (200), otherwise the
// expected 400 type, code and param.
type catLimitCase struct {
	name  string
	body  map[string]any
	typ   string
	code  string
	param string
}

// catRunLimits posts every case's body to path with key and checks the outcome.
func catRunLimits(t *testing.T, key, path string, cases []catLimitCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := catPost(t, key, path, c.body)
			if c.code == "" {
				if r.Status != http.StatusOK {
					t.Fatalf("status = %d, want 200; body %s", r.Status, r.Body)
				}
				return
			}
			typ := c.typ
			if typ == "" {
				typ = "invalid_request"
			}
			catWantErr(t, r, http.StatusBadRequest, typ, c.code, c.param)
		})
	}
}

// catProductBody is a valid create-product body with kv (key, value, key, value …) added.
func catProductBody(kv ...any) map[string]any {
	b := map[string]any{"name": "Limit widget"}
	for i := 0; i+1 < len(kv); i += 2 {
		b[kv[i].(string)] = kv[i+1]
	}
	return b
}

// catPriceBody is a valid create-price body (EUR 10.00) with kv added.
func catPriceBody(kv ...any) map[string]any {
	b := map[string]any{"currency": "eur", "unit_amount": 1000}
	for i := 0; i+1 < len(kv); i += 2 {
		b[kv[i].(string)] = kv[i+1]
	}
	return b
}

// catStrings returns n strings made by f(i).
func catStrings(n int, f func(i int) string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

// catMetadata returns n distinct keys, each with value v.
func catMetadata(n int, v string) map[string]string {
	out := make(map[string]string, n)
	for i := range n {
		out["k"+strings.Repeat("x", i%3)+string(rune('a'+i%26))+string(rune('a'+i/26))] = v
	}
	return out
}
