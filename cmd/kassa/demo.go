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
  Dashboard  %s   (JSON API: %s/api/v1/openapi.json)
  Demo merchant %s
  Test key   %s   (shown once; stored only as a hash)

Try the whole payment loop:

1. Create a checkout session:

curl -s %s/v1/checkout/sessions \
  -H "Authorization: Bearer %s" \
  -H "Content-Type: application/json" \
  -H "Idempotency-Key: $(date +%%s%%N)" \
  -d '{"amount": 2500, "currency": "eur", "customer_name": "Ada Lovelace", "customer_email": "ada@example.com", "description": "Order #1001"}'

2. Open the checkout_url of the answer in a browser and pay with the test card
   4242 4242 4242 4242 (any future expiry, any CVC).

3. Sign in to the dashboard at %s/login
   e-mail    %s
   password  %s
   and find the payment, its fee breakdown and its events under Payments (test mode).

`, cfg.APIURL, cfg.APIURL, cfg.CheckoutURL, cfg.DashboardURL, cfg.DashboardURL, id, secret, cfg.APIURL, secret,
		cfg.DashboardURL, demoEmail, demoPassword)
	return nil
}
