package main

import (
	"context"
	"fmt"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/identity"
)

const (
	demoEmail    = "demo@kassa.example"
	demoPassword = "kassa-demo-password"
)

// demo makes sure a demo merchant exists and prints a fresh test key with a curl that works.
// Secrets are stored hashed, so a key can only be printed when it is made: every start under
// `make run` makes one (named "make run") and prints it.
func demo(ctx context.Context, a *app, cfg config) error {
	id, err := postgres.MerchantIDByEmail(ctx, a.db, demoEmail)
	if err != nil {
		return err
	}
	var secret string
	if id == "" {
		pw := demoPassword
		m, testKey, _, err := a.identity.CreateMerchant(ctx, identity.NewMerchant{
			Name: "Demo Shop", Country: "DE", Email: demoEmail, Onboarded: true, OwnerPassword: &pw,
		})
		if err != nil {
			return err
		}
		id, secret = m.ID, testKey
	} else {
		_, secret, err = a.identity.CreateKey(ctx, id, "make run", core.EnvTest)
		if err != nil {
			return err
		}
	}
	fmt.Printf(`
Kassa is running.
  API        %s   (OpenAPI: %s/v1/openapi.json)
  Checkout   %s
  Dashboard  %s
  Demo merchant %s (dashboard login %s / %s)
  Test key   %s   (shown once; stored only as a hash)

Create a checkout session:

curl -s %s/v1/checkout/sessions \
  -H "Authorization: Bearer %s" \
  -H "Content-Type: application/json" \
  -H "Idempotency-Key: $(date +%%s%%N)" \
  -d '{"amount": 2500, "currency": "eur", "customer_name": "Ada Lovelace", "customer_email": "ada@example.com", "description": "Order #1001"}'

`, cfg.APIURL, cfg.APIURL, cfg.CheckoutURL, cfg.DashboardURL, id, demoEmail, demoPassword, secret, cfg.APIURL, secret)
	return nil
}
