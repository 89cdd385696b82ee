package checkout_test

import (
	"testing"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/checkout"
	"github.com/kassa-pay/kassa/modules/checkout/checkouttest"
)

// TestFakeStoreContract: the use-case tests' fake behaves as the postgres store does
// (adapters/postgres runs the same suite).
func TestFakeStoreContract(t *testing.T) {
	checkouttest.RunStore(t, func(*testing.T) checkouttest.Harness {
		merchant := checkout.BuyerMerchant{Name: "Test merchant", Onboarded: true}
		store, uow := checkout.NewFakeStore(merchant)
		return checkouttest.Harness{
			Store:    store,
			UoW:      uow,
			Merchant: merchant,
			NewScope: func(*testing.T) core.Scope {
				return core.Scope{MerchantID: core.NewID(core.PrefixMerchant), Env: core.EnvTest}
			},
		}
	})
}
