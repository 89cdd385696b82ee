package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// sessionBody is a realistic create-session request (no idempotency key).
const sessionBody = `{"amount":4990,"currency":"eur","customer_name":"Ada Lovelace",` +
	`"customer_email":"ada@example.com","reference":"order-10042","description":"Two books",` +
	`"success_url":"https://shop.example/thanks","cancel_url":"https://shop.example/cart",` +
	`"line_items":[{"name":"The Analytical Engine","quantity":2,"amount":2495}],` +
	`"metadata":{"order_id":"10042"}}`

// productBody creates a product with an inline price.
const productBody = `{"name":"The Analytical Engine","description":"A book about computing machines.",` +
	`"metadata":{"sku":"AE-1"},"price":{"currency":"eur","unit_amount":2495}}`

// newClient returns a client with a transport of its own, so every worker keeps exactly one
// keep-alive connection to the server.
func newClient(conns int) *http.Client {
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		MaxConnsPerHost:     conns,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// api sends merchant API requests with one key.
type api struct {
	base string
	key  string
}

// do sends one request and returns the status, headers and body; the body is read fully so
// the connection is reused.
func do(ctx context.Context, c *http.Client, method, url, auth string, hdr map[string]string, body string) (int, http.Header, []byte, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, nil, nil, err
	}
	if auth != "" {
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, resp.Header, nil, err
	}
	return resp.StatusCode, resp.Header, b, nil
}

// check turns a non-2xx answer into an error.
func check(status int, body []byte, err error) error {
	if err != nil {
		return err
	}
	if status < 200 || status > 299 {
		return statusError(status, body)
	}
	return nil
}

func (a api) createSession() scenario {
	return scenario{name: "create checkout session", floor: floorInsert, newOp: func(int) op {
		c := newClient(1)
		return func(ctx context.Context) error {
			st, _, b, err := do(ctx, c, http.MethodPost, a.base+"/v1/checkout/sessions", a.key, nil, sessionBody)
			return check(st, b, err)
		}
	}}
}

func (a api) createProduct() scenario {
	return scenario{name: "create product + price", floor: floorInsert, newOp: func(int) op {
		c := newClient(1)
		return func(ctx context.Context) error {
			st, _, b, err := do(ctx, c, http.MethodPost, a.base+"/v1/products", a.key, nil, productBody)
			return check(st, b, err)
		}
	}}
}

func (a api) retrieveSession(ids []string) scenario {
	return scenario{name: "retrieve checkout session", floor: floorSelect, newOp: func(w int) op {
		c := newClient(1)
		i := w * 7919
		return func(ctx context.Context) error {
			i++
			id := ids[i%len(ids)]
			st, _, b, err := do(ctx, c, http.MethodGet, a.base+"/v1/checkout/sessions/"+id, a.key, nil, "")
			return check(st, b, err)
		}
	}}
}

// replay sends the same body with a fixed Idempotency-Key; the key is used once before the
// run, so every measured request is a replay (checked by the Idempotent-Replayed header).
func (a api) replay(key string) scenario {
	hdr := map[string]string{"Idempotency-Key": key}
	return scenario{name: "idempotent replay", floor: floorSelect, newOp: func(int) op {
		c := newClient(1)
		return func(ctx context.Context) error {
			st, h, b, err := do(ctx, c, http.MethodPost, a.base+"/v1/checkout/sessions", a.key, hdr, sessionBody)
			if err := check(st, b, err); err != nil {
				return err
			}
			if h.Get("Idempotent-Replayed") != "true" {
				return fmt.Errorf("HTTP %d without Idempotent-Replayed: true (not a replay)", st)
			}
			return nil
		}
	}}
}

// setupSessions creates n sessions for the retrieve pool.
func (a api) setupSessions(ctx context.Context, n int) ([]string, error) {
	c := newClient(1)
	ids := make([]string, 0, n)
	for range n {
		st, _, b, err := do(ctx, c, http.MethodPost, a.base+"/v1/checkout/sessions", a.key, nil, sessionBody)
		if err := check(st, b, err); err != nil {
			return nil, fmt.Errorf("create session for the retrieve pool: %w", err)
		}
		var s struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(b, &s); err != nil || s.ID == "" {
			return nil, fmt.Errorf("create session: unexpected body %s", b)
		}
		ids = append(ids, s.ID)
	}
	return ids, nil
}

// primeReplay makes the first (executing) request of the replay key.
func (a api) primeReplay(ctx context.Context) (string, error) {
	key := "bench-" + core.RandomBase62(16)
	c := newClient(1)
	st, _, b, err := do(ctx, c, http.MethodPost, a.base+"/v1/checkout/sessions", a.key,
		map[string]string{"Idempotency-Key": key}, sessionBody)
	if err := check(st, b, err); err != nil {
		return "", fmt.Errorf("first request of the replay key: %w", err)
	}
	return key, nil
}

// merchant is one merchant created through the operator API.
type merchant struct {
	ID      string `json:"id"`
	TestKey string `json:"test_key"`
}

func createMerchant(ctx context.Context, base, operatorToken, name string) (merchant, error) {
	return createMerchantOwned(ctx, base, operatorToken, name, "bench+"+strings.ToLower(core.RandomBase62(8))+"@example.com", "")
}

// createMerchantOwned creates a merchant; with ownerPassword, email becomes its first
// dashboard user.
func createMerchantOwned(ctx context.Context, base, operatorToken, name, email, ownerPassword string) (merchant, error) {
	var m merchant
	fields := map[string]any{"name": name, "country": "DE", "email": email, "onboarded": true}
	if ownerPassword != "" {
		fields["owner_password"] = ownerPassword
	}
	body, _ := json.Marshal(fields)
	st, _, b, err := do(ctx, newClient(1), http.MethodPost, base+"/operator/v1/merchants", operatorToken, nil, string(body))
	if err := check(st, b, err); err != nil {
		return m, fmt.Errorf("operator API: create merchant: %w", err)
	}
	if err := json.NewDecoder(bytes.NewReader(b)).Decode(&m); err != nil || m.ID == "" || m.TestKey == "" {
		return m, fmt.Errorf("operator API: create merchant: unexpected body %s", b)
	}
	return m, nil
}

// bareProductBody creates a product without a price (the create-price scenario adds them).
const bareProductBody = `{"name":"The Analytical Engine","description":"A book about computing machines."}`

// priceBody adds a price to a product.
const priceBody = `{"currency":"eur","unit_amount":2495,"nickname":"Paperback"}`

// pricesPerProduct is how many requests of the create-price scenario go to one product: the
// first creates the product, the others add a price to it (a catalog import).
const pricesPerProduct = 10

// createPrice is a catalog import: one request in pricesPerProduct creates a product (no
// price), the others each add a price to it, which loads the product and its prices under
// a lock (the price lookup of a product).
func (a api) createPrice() scenario {
	return scenario{name: "create price (catalog import)", floor: floorInsert, newOp: func(int) op {
		c := newClient(1)
		n, product := 0, ""
		return func(ctx context.Context) error {
			defer func() { n++ }()
			if n%pricesPerProduct == 0 {
				product = ""
				st, _, b, err := do(ctx, c, http.MethodPost, a.base+"/v1/products", a.key, nil, bareProductBody)
				if err := check(st, b, err); err != nil {
					return fmt.Errorf("create product: %w", err)
				}
				var p struct {
					ID string `json:"id"`
				}
				if err := json.Unmarshal(b, &p); err != nil || p.ID == "" {
					return fmt.Errorf("create product: unexpected body %.200s", b)
				}
				product = p.ID
				return nil
			}
			if product == "" {
				return fmt.Errorf("create price: the product of this batch was not created")
			}
			st, _, b, err := do(ctx, c, http.MethodPost, a.base+"/v1/products/"+product+"/prices", a.key, nil, priceBody)
			return check(st, b, err)
		}
	}}
}
