package catalog_test

import (
	"testing"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/catalog"
	"github.com/kassa-pay/kassa/modules/catalog/catalogtest"
)

// TestFakeStoreContract: the service tests' fake behaves as the postgres store does
// (adapters/postgres runs the same suite).
func TestFakeStoreContract(t *testing.T) {
	catalogtest.RunStore(t, func(*testing.T) catalogtest.Harness {
		return catalogtest.Harness{
			Store: catalog.NewFakeStore(),
			NewScope: func(*testing.T) core.Scope {
				return core.Scope{MerchantID: core.NewID(core.PrefixMerchant), Env: core.EnvTest}
			},
		}
	})
}
