package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// payConfirmBody pays with the sandbox's always-succeeding test card (D6).
var payConfirmBody = `{"payment_method":"card","card":{"number":"4242424242424242","exp_month":12,"exp_year":` +
	strconv.Itoa(time.Now().Year()+3) + `,"cvc":"123","name":"Ada Lovelace"}}`

// payName is the whole-payment scenario's name.
const payName = "confirm a payment through the browser API"

// pay is the "confirm a payment through the browser API" scenario: each request is one whole
// one-off payment as a merchant and its buyer make it: the merchant server creates a session
// (merchant API), then the buyer's browser confirms it with the client secret (checkout
// origin's browser API): a sandbox charge, the payment with its fee, the session's completion
// and its events. It has no database floor of its own (it is two requests and several
// statements): the bench compares it with creating a session, in interleaved windows; its
// latency is the whole loop's.
func (a api) pay(checkoutBase string) scenario {
	return scenario{name: payName, floor: "create checkout session", newOp: func(int) op {
		c := newClient(2)
		return func(ctx context.Context) error {
			st, _, b, err := do(ctx, c, http.MethodPost, a.base+"/v1/checkout/sessions", a.key, nil, sessionBody)
			if err := check(st, b, err); err != nil {
				return fmt.Errorf("create session: %w", err)
			}
			var s struct {
				ID           string `json:"id"`
				ClientSecret string `json:"client_secret"`
			}
			if err := json.Unmarshal(b, &s); err != nil || s.ID == "" || s.ClientSecret == "" {
				return fmt.Errorf("create session: unexpected body %s", b)
			}
			st, _, b, err = do(ctx, c, http.MethodPost, checkoutBase+"/api/v1/checkout/sessions/"+s.ID+"/confirm",
				s.ClientSecret, nil, payConfirmBody)
			if err := check(st, b, err); err != nil {
				return fmt.Errorf("confirm: %w", err)
			}
			var res struct {
				Status string `json:"status"`
			}
			if err := json.Unmarshal(b, &res); err != nil || res.Status != "succeeded" {
				return fmt.Errorf("confirm: unexpected body %s", b)
			}
			return nil
		}
	}}
}
