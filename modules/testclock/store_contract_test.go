package testclock_test

import (
	"testing"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/testclock"
	"github.com/kassa-pay/kassa/modules/testclock/testclocktest"
)

func TestClockStoreContractOnFake(t *testing.T) {
	testclocktest.RunStore(t, func(*testing.T) testclocktest.Harness {
		a, b, kill := testclock.NewFakeStores()
		return testclocktest.Harness{A: a, B: b, KillB: kill, Scope: func() core.Scope {
			return core.Scope{MerchantID: core.NewID(core.PrefixMerchant), Env: core.EnvTest}
		}}
	})
}
