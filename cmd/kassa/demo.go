package main

import (
	"context"
	"fmt"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/identity"
	"github.com/kassa-pay/kassa/modules/webhooks"
)

const (
	demoEmail    = "demo@kassa.example"
	demoPassword = "kassa-demo-password" //nolint:gosec // G101: the documented password of the --demo merchant (docs/walkthrough.md), not a secret
	// demoHookNote names the demo merchant's test endpoint for `kassa listen` (at
	// --demo-webhook-addr; test mode may deliver to loopback addresses).
	demoHookNote = "make run: kassa listen"
)

// demoKeyName names the test key every start under `make run` makes for the demo merchant.
const demoKeyName = "make run"

// demoSteps is what every --demo start prints (docs/walkthrough.md shows it with placeholders): the
// API, checkout and dashboard URLs (1–3), the merchant id (4), the new test key (5), the
// webhook secret (6), the sign-in (7, 8), the demo endpoint's URL (9) and the receiver's
// address (10).
const demoSteps = `
Kassa is running.
  API        %[1]s   (reference: %[1]s/docs)
  Checkout   %[2]s
  Dashboard  %[3]s   (JSON API reference: %[3]s/api/docs)
  Demo merchant %[4]s
  Test key   %[5]s   (shown once; stored only as a hash; the previous demo key is revoked)

Try the whole payment loop:

1. In a second terminal, start a local webhook receiver that verifies every signature
   (the demo merchant's test endpoint %[9]s points at it):

   go run ./cmd/kassa listen --addr %[10]s --secret %[6]s

2. Create a checkout session:

curl -s %[1]s/v1/checkout/sessions \
  -H "Authorization: Bearer %[5]s" \
  -H "Content-Type: application/json" \
  -H "Idempotency-Key: $(date +%%s%%N)" \
  -d '{"amount": 2500, "currency": "eur", "customer_name": "Ada Lovelace", "customer_email": "ada@example.com", "description": "Order #1001"}'

3. Open the checkout_url of the answer in a browser and pay with the test card
   4242 4242 4242 4242 (any future expiry, any CVC). The receiver prints the
   checkout.session.completed event with "signature verified".

4. Sign in to the dashboard at %[3]s/login
   e-mail    %[7]s
   password  %[8]s
   Payments shows the payment with its fee breakdown and events, Webhooks the delivery log
   of every attempt, Test mailbox the buyer's receipt.

`

// demo makes sure a demo merchant exists and prints a fresh test key, a webhook signing secret
// and the steps of the whole payment loop. Secrets are stored hashed or sealed and shown once,
// so every start under `make run` makes a new key (named "make run") and rotates the demo
// endpoint's secret (the previous one keeps signing for 24 h). The demo key of the start before
// (and the merchant's first test key, printed by the first start) is revoked, so that starts do
// not pile up active keys; keys made otherwise (dashboard, operator API) are left alone.
func demo(ctx context.Context, a *app, cfg config) error {
	id, err := postgres.MerchantIDByEmail(ctx, a.db, demoEmail)
	if err != nil {
		return err
	}
	var secret string
	if id == "" {
		pw := demoPassword
		m, testKey, _, err := a.identity.CreateMerchant(ctx, identity.MerchantInput{
			Name: "Demo Shop", Country: "DE", Email: demoEmail, Onboarded: true, OwnerPassword: &pw,
		})
		if err != nil {
			return err
		}
		id, secret = m.ID(), testKey
	} else {
		key, s, err := a.identity.CreateKey(ctx, id, demoKeyName, core.EnvTest)
		if err != nil {
			return err
		}
		if err := revokeDemoKeys(ctx, a.identity, id, key.ID()); err != nil {
			return fmt.Errorf("demo: revoke the previous demo key: %w", err)
		}
		secret = s
	}
	hookURL := "http://" + cfg.DemoHookAddr + "/"
	hookSecret, err := demoEndpoint(ctx, a.webhooks, core.Scope{MerchantID: id, Env: core.EnvTest}, hookURL)
	if err != nil {
		return fmt.Errorf("demo webhook endpoint: %w", err)
	}
	fmt.Printf(demoSteps, cfg.APIURL, cfg.CheckoutURL, cfg.DashboardURL, id, secret, hookSecret, demoEmail, demoPassword, hookURL, cfg.DemoHookAddr)
	return nil
}

// revokeDemoKeys revokes the demo merchant's active test keys that earlier demo starts printed
// (those named demoKeyName and the first test key the merchant was created with), all but keep,
// the one this start made.
func revokeDemoKeys(ctx context.Context, ids *identity.Service, merchantID, keep string) error {
	keys, err := ids.ListKeys(ctx, merchantID)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if k.ID() == keep || k.Env() != core.EnvTest || k.RevokedAt() != nil ||
			(k.Name() != demoKeyName && k.Name() != identity.DefaultTestKeyName) {
			continue
		}
		if _, err := ids.RevokeKey(ctx, k.ID()); err != nil {
			return err
		}
	}
	return nil
}

// demoEndpoint makes sure the demo merchant's test environment has an enabled endpoint for
// every event at url and returns a secret to verify its deliveries with: a new endpoint's, or
// a freshly rotated one.
func demoEndpoint(ctx context.Context, hooks *webhooks.Service, scope core.Scope, url string) (string, error) {
	list, err := hooks.ListEndpoints(ctx, scope)
	if err != nil {
		return "", err
	}
	for _, e := range list {
		if e.Description() != demoHookNote {
			continue
		}
		if e.URL() != url {
			if _, err := hooks.ChangeEndpoint(ctx, scope, e.ID(), webhooks.EndpointChanges{URL: &url}); err != nil {
				return "", err
			}
		}
		if !e.Enabled() {
			if _, err := hooks.EnableEndpoint(ctx, scope, e.ID()); err != nil {
				return "", err
			}
		}
		_, secret, err := hooks.RotateSecret(ctx, scope, e.ID())
		return secret, err
	}
	_, secret, err := hooks.CreateEndpoint(ctx, scope, webhooks.EndpointParams{
		URL: url, EnabledEvents: []string{webhooks.AllEvents}, Description: demoHookNote,
	})
	return secret, err
}
