package conformance

import (
	"strings"
	"testing"

	"github.com/kassa-pay/kassa/conformance/harness"
)

func TestDashboardVolumeChartBrowser(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "PAGES", "the overview charts the daily volume per currency with a summary that labels it and the days as a table", func(t *testing.T) {
		t.Parallel()
		o := dpNewOwner(t)
		ctx := harness.NewBrowser(t)
		dpSignIn(t, ctx, o)
		dpWait(t, ctx, "the empty chart", dpHas("#daily-volume", "No payments in the last 90 days."))
		dashPay(t, o.Merchant, 2500, "eur", payCardOK)
		dashPay(t, o.Merchant, 1200, "eur", payCardOK)
		dpGo(t, ctx, "/test/overview")
		chart := `#daily-volume figure[data-currency="EUR"]`
		dpWait(t, ctx, "the EUR chart", `document.querySelectorAll('`+chart+` rect.chart-bar').length === 1`)
		caption := dpText(t, ctx, chart+" figcaption")
		if !strings.Contains(caption, "€37.00") || !strings.Contains(caption, "2 payments") || !strings.Contains(caption, "90 days") {
			t.Fatalf("summary %q", caption)
		}
		// The chart is an image labelled by that summary.
		dpWait(t, ctx, "the chart's label", `(() => { const s = document.querySelector('`+chart+` svg'); return s.getAttribute('role') === 'img' && document.getElementById(s.getAttribute('aria-labelledby')).textContent.includes('€37.00'); })()`)
		harness.Page(t, ctx, "dashboard-overview-volume")
		dpDo(t, ctx, "open the table", dpClick(chart+" details summary"))
		dpWait(t, ctx, "the day in the table", `document.querySelectorAll('`+chart+` details[open] tbody tr').length === 1 && `+dpHas(chart+" tbody td", "€37.00"))
		harness.Page(t, ctx, "dashboard-overview-volume-table")
	})
}
