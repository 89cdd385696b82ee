package conformance

import (
	"testing"

	"github.com/kassa-pay/kassa/conformance/harness"
)

func TestDashboardPagesScheduledChange(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "PAGES", "the subscription page shows a change scheduled for the period end (pending_update) as a read-only line", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := dpNewOwner(t)
		s := dbTrialing(t, o, dbEmail(o), 900)
		subUpdate(t, o.Merchant, s.Id, map[string]any{"quantity": 2, "effective": "period_end"})
		ctx := harness.NewBrowser(t)
		dpSignIn(t, ctx, o)
		dpGo(t, ctx, "/test/subscriptions/"+s.Id)
		dpWait(t, ctx, "the scheduled change", dpHas(".facts", "Scheduled change")+` && `+dpHas(".facts", "× 2) from"))
		harness.Page(t, ctx, "dashboard-subscription-scheduled-change")
	})
}
