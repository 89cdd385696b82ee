package sandbox

import (
	"sync/atomic"
	"testing"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports/processortest"
)

var merchants atomic.Int64

// The sandbox saves payment methods and charges them off-session as every processor does.
func TestSandboxMethodSaverContract(t *testing.T) {
	p := New()
	processortest.RunMethodSaver(t, func(t *testing.T) processortest.Harness {
		return processortest.Harness{Processor: p, Now: t0, Settle: SettleDelay,
			Scope: core.Scope{MerchantID: "mer_contract_" + string(rune('a'+merchants.Add(1)%26)) + t.Name(), Env: core.EnvTest}}
	})
}
