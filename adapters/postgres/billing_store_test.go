package postgres_test

import (
	"testing"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/billing"
	"github.com/kassa-pay/kassa/modules/billing/billingtest"
)

// TestBillingStoreContract runs billing's store suite on PostgreSQL; the module's fake passes
// the same suite.
func TestBillingStoreContract(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	uow := postgres.Bind(postgres.NewUnitOfWork(db), func(tx *postgres.Tx) billing.Tx { return tx })
	st := postgres.NewBillingStore(db)
	billingtest.RunStore(t, func(*testing.T) billingtest.Harness {
		return billingtest.Harness{UoW: uow, Store: st, SkipsLocked: true, NewScope: func(t *testing.T) core.Scope { return pgtest.Merchant(t, db) }}
	})
}
