package webhooks_test

import (
	"testing"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/webhooks"
	"github.com/kassa-pay/kassa/modules/webhooks/webhookstest"
)

// The fake the use-case tests use behaves as the Postgres store does.
func TestFakeStoreContract(t *testing.T) {
	webhookstest.RunStore(t, func(t *testing.T) webhookstest.Harness {
		f := webhooks.NewFakeStore()
		return webhookstest.Harness{
			Store: f,
			NewScope: func(*testing.T) core.Scope {
				return core.Scope{MerchantID: core.NewID(core.PrefixMerchant), Env: core.EnvTest}
			},
			Publish: func(_ *testing.T, evs ...core.EventRecord) { f.Publish(evs...) },
		}
	})
}
