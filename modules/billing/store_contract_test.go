package billing_test

import (
	"testing"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/billing/billingtest"
)

func TestFakeStoreContract(t *testing.T) {
	billingtest.RunStore(t, func(t *testing.T) billingtest.Harness {
		f := billingtest.NewFake()
		return billingtest.Harness{UoW: f, Store: f, NewScope: func(t *testing.T) core.Scope {
			return core.Scope{MerchantID: core.NewID("mer_"), Env: core.EnvTest}
		}}
	})
}
