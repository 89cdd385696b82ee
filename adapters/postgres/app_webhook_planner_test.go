package postgres_test

import (
	"strings"
	"testing"

	"github.com/lib/pq"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
)

// The queries of app webhooks and of the App API's refunds and invoices take their indexes in a database never analysed: the fan-out's
// read of the app endpoints of a batch's merchants, the operator's log of an app's deliveries
// (per installation, merged) and one app delivery by id; none scans a table.
func TestAppWebhookQueriesUseTheirIndexes(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	cases := []struct {
		name, query string
		args        []any
		indexes     []string
	}{
		{"app subscribers of merchants", postgres.AppSubscribersSQL, []any{pq.StringArray{"mer_1", "mer_2"}},
			[]string{"app_installations_merchant_active", "app_webhook_endpoints_app"}},
		{"an app's deliveries", postgres.AppDeliveriesSQL, []any{"app_1", 25, 0, ""},
			[]string{"app_installations_app", "webhook_deliveries_installation"}},
		{"an app delivery by id", `SELECT d.id FROM webhook_deliveries d JOIN app_installations i ON i.id = d.installation_id
			WHERE d.id = $1 AND i.app_id = $2`, []any{"wd_1", "app_1"}, []string{"webhook_deliveries_app_id"}},
		{"an uninstalled installation's app endpoint copies", `UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = 'app_uninstalled'
			WHERE installation_id = $1::uuid AND status = 'enabled'`, []any{"3f0c2a4e-8b1d-4c6f-9a2e-5d7b8c9e0f1a"},
			[]string{"webhook_endpoints_installation"}},
		{"App API refunds", `SELECT id FROM refunds WHERE merchant_id = $1 AND environment = $2 AND ` + postgres.ListPredicate +
			` ORDER BY seq DESC LIMIT $3 OFFSET $4`, []any{"mer_1", "test", 26, 0}, []string{"refunds_scope"}},
		{"App API issued invoices", `SELECT id FROM invoices WHERE merchant_id = $1 AND environment = $2 AND ` + postgres.ListPredicate +
			` AND status <> 'draft' ORDER BY seq DESC LIMIT $3 OFFSET $4`, []any{"mer_1", "test", 26, 0}, []string{"invoices_list"}},
		{"an app endpoint's copies", `DELETE FROM webhook_endpoints WHERE id = $1 AND app_id IS NOT NULL`, []any{"we_1"},
			[]string{"webhook_endpoints_app_endpoint"}},
	}
	for _, c := range cases {
		p := plan(t, db, c.query, c.args...)
		for _, idx := range c.indexes {
			if !strings.Contains(p, "using "+idx+" ") && !strings.Contains(p, "Index Scan on "+idx+" ") {
				t.Errorf("%s: want %s; plan:\n%s", c.name, idx, p)
			}
		}
		for _, table := range []string{"webhook_deliveries", "webhook_endpoints", "app_installations", "app_webhook_endpoints", "refunds", "invoices"} {
			if strings.Contains(p, "Seq Scan on "+table) {
				t.Errorf("%s: scans %s; plan:\n%s", c.name, table, p)
			}
		}
	}
}
