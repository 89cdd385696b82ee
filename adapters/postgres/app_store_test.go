package postgres_test

import (
	"testing"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/modules/apps/appstest"
)

func TestAppStoreContract(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	appstest.RunStore(t, func(t *testing.T) appstest.Harness {
		return appstest.Harness{
			Store:       postgres.NewAppStore(db),
			NewMerchant: func(t *testing.T) string { return pgtest.Merchant(t, db).MerchantID },
		}
	})
}
