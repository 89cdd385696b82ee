package sandbox

import (
	"sync/atomic"
	"testing"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/billing/billingtest"
)

var merchants atomic.Int64

// The sandbox saves payment methods and charges them off-session as every processor does.
func TestSandboxMethodSaverContract(t *testing.T) {
	p := New()
	billingtest.RunMethodSaver(t, func(t *testing.T) billingtest.ProcessorHarness {
		return billingtest.ProcessorHarness{Processor: p, Now: t0, Settle: SettleDelay,
			Scope: core.Scope{MerchantID: "mer_contract_" + string(rune('a'+merchants.Add(1)%26)) + t.Name(), Env: core.EnvTest}}
	})
}
