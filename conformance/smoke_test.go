package conformance

import (
	"context"
	"testing"

	"github.com/kassa-pay/kassa/conformance/harness"
)

func TestSmoke(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "4.1", "a valid request creates an open session", func(t *testing.T) {
		m := newMerchant(t, true)
		resp, err := m.Test.CreateCheckoutSessionWithResponse(context.Background(), nil, sessionBody())
		if err != nil {
			t.Fatal(err)
		}
		if resp.JSON200 == nil || resp.JSON200.Status != "open" {
			t.Fatalf("got %d %s", resp.StatusCode(), resp.Body)
		}
	})
}
