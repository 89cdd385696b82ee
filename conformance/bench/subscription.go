package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Subscribing: the merchant server creates a subscription to a monthly price (no trial) for a
// new customer (merchant API, POST /v1/subscriptions), then the customer's browser confirms its
// first payment with the client secret (browser API, POST /api/v1/payment_intents/{id}/confirm,
// the sandbox's always-succeeding card): the card saved as the customer's default, the first
// invoice paid (a payment with its fee, the invoice's number), the subscription active, with
// their events. Like the one-off payment it is two requests and many statements, so it is
// compared with creating a session in interleaved windows; its latency is the whole loop's.

const subscriptionName = "subscribe and confirm the first payment"

// setupSubscriptionPrice creates a product with a monthly EUR price for the scenario.
func (a api) setupSubscriptionPrice(ctx context.Context) (string, error) {
	c := newClient(1)
	st, _, b, err := do(ctx, c, http.MethodPost, a.base+"/v1/products", a.key, nil, bareProductBody)
	if err := check(st, b, err); err != nil {
		return "", fmt.Errorf("create product: %w", err)
	}
	var p struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(b, &p); err != nil || p.ID == "" {
		return "", fmt.Errorf("create product: unexpected body %.200s", b)
	}
	st, _, b, err = do(ctx, c, http.MethodPost, a.base+"/v1/products/"+p.ID+"/prices", a.key, nil,
		`{"currency":"eur","unit_amount":900,"recurring":{"interval":"month"}}`)
	if err := check(st, b, err); err != nil {
		return "", fmt.Errorf("create price: %w", err)
	}
	var pr struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(b, &pr); err != nil || pr.ID == "" {
		return "", fmt.Errorf("create price: unexpected body %.200s", b)
	}
	return pr.ID, nil
}

// subscribe is the scenario; each worker's customers are its own (a new e-mail per request).
func (a api) subscribe(checkoutBase, priceID string) scenario {
	return scenario{name: subscriptionName, floor: "create checkout session", newOp: func(w int) op {
		c := newClient(2)
		n := 0
		return func(ctx context.Context) error {
			n++
			body := fmt.Sprintf(`{"price_id":%q,"customer_name":"Ada Lovelace","customer_email":"ada+w%dn%d@example.com"}`, priceID, w, n)
			st, _, b, err := do(ctx, c, http.MethodPost, a.base+"/v1/subscriptions", a.key, nil, body)
			if err := check(st, b, err); err != nil {
				return fmt.Errorf("create subscription: %w", err)
			}
			var s struct {
				ID           string `json:"id"`
				ClientSecret string `json:"client_secret"`
			}
			if err := json.Unmarshal(b, &s); err != nil || s.ClientSecret == "" {
				return fmt.Errorf("create subscription: unexpected body %.200s", b)
			}
			pi, _, ok := strings.Cut(s.ClientSecret, "_secret_")
			if !ok {
				return fmt.Errorf("create subscription: client secret %q", s.ClientSecret)
			}
			st, _, b, err = do(ctx, c, http.MethodPost, checkoutBase+"/api/v1/payment_intents/"+pi+"/confirm",
				s.ClientSecret, nil, payConfirmBody)
			if err := check(st, b, err); err != nil {
				return fmt.Errorf("confirm first payment: %w", err)
			}
			var r struct {
				Status             string `json:"status"`
				SubscriptionStatus string `json:"subscription_status"`
			}
			if err := json.Unmarshal(b, &r); err != nil || r.Status != "succeeded" || r.SubscriptionStatus != "active" {
				return fmt.Errorf("confirm first payment: unexpected body %.200s", b)
			}
			return nil
		}
	}}
}
