package postgres_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/adapters/signing"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/webhooks/webhookstest"
)

// The webhooks store on PostgreSQL, against the behaviour its module's fake shows too. Each
// case has a database of its own: the fan-out and the claim span every scope.
func TestWebhookStoreContract(t *testing.T) {
	webhookstest.RunStore(t, func(t *testing.T) webhookstest.Harness {
		db := pgtest.New(t)
		box, err := signing.NewBox(bytes.Repeat([]byte{42}, signing.KeySize))
		if err != nil {
			t.Fatal(err)
		}
		return webhookstest.Harness{
			Store:    postgres.NewWebhookStore(db, box),
			NewScope: func(t *testing.T) core.Scope { return pgtest.Merchant(t, db) },
			Publish: func(t *testing.T, evs ...core.EventRecord) {
				t.Helper()
				if err := postgres.InsertEventRecords(context.Background(), db, evs...); err != nil {
					t.Fatal(err)
				}
			},
		}
	})
}
