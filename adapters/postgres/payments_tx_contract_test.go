package postgres_test

import (
	"testing"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/modules/payments/paymentstest"
)

// Payments' repositories on PostgreSQL pass the contract payments' one fake passes
// (modules/payments TestFakeContract): uniqueness per payable kind, one pending attempt,
// rollback, a unit of work run twice, concurrent attempts with one winner.
func TestPaymentsTxContract(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	paymentstest.RunTx(t, func(t *testing.T) paymentstest.Harness {
		return paymentstest.Harness{
			UoW:      postgres.Bind(postgres.NewUnitOfWork(db), func(tx *postgres.Tx) payments.Tx { return tx }),
			Attempts: postgres.NewChargeAttemptStore(db),
			Reader:   postgres.NewPaymentStore(db),
			NewScope: func(t *testing.T) core.Scope { return pgtest.Merchant(t, db) },
		}
	})
}
