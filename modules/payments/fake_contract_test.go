package payments_test

import (
	"testing"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments/paymentstest"
)

// The one fake of payments' repositories passes the contract the Postgres ones pass
// (adapters/postgres TestPaymentsTxContract).
func TestFakeContract(t *testing.T) {
	paymentstest.RunTx(t, func(t *testing.T) paymentstest.Harness {
		f := paymentstest.NewFake()
		return paymentstest.Harness{UoW: f, Attempts: f, Reader: f, NewScope: func(*testing.T) core.Scope {
			return core.Scope{MerchantID: core.NewID("mer_"), Env: core.EnvTest}
		}}
	})
}
