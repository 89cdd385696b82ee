package postgres_test

import (
	"strings"
	"testing"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
)

// The App API's pages of disputes, subscriptions and payouts walk their scope's list index, newest
// first, in a database never analysed, without a sort and without scanning the table.
func TestAppDisputeAndSubscriptionListsUseTheirIndexes(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	cases := []struct {
		name, query, index, table string
	}{
		{"App API disputes", postgres.AppDisputesSQL, "disputes_scope", "disputes"},
		{"App API subscriptions", postgres.AppSubscriptionsSQL, "subscriptions_list", "subscriptions"},
		{"App API payouts", postgres.AppPayoutsSQL, "payouts_list", "payouts"},
	}
	for _, c := range cases {
		for _, offset := range []int64{0, 10000} {
			p := plan(t, db, c.query, "mer_1", "test", 26, offset)
			if !strings.Contains(p, "using "+c.index+" ") || strings.Contains(p, "Seq Scan on "+c.table) || strings.Contains(p, "Sort") {
				t.Errorf("%s, offset %d: want %s alone; plan:\n%s", c.name, offset, c.index, p)
			}
		}
	}
}
