package conformance

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/kassa-pay/kassa/conformance/harness"
)

// dpSetDate sets a date input's value and tells its form, as picking a day does.
func dpSetDate(sel, day string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](`(() => { const i = document.querySelector(` + dpJS(sel) + `); i.value = ` + dpJS(day) + `;
		i.dispatchEvent(new Event('input', { bubbles: true })); })()`)
}

func TestDashboardPauseAndMRRBrowser(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "PAGES", "the overview charts the MRR history the test clock made beside the daily volume, with a table; a subscription is paused until a day, resumed, and paused until resumed from its page", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := dpNewOwner(t)
		s := subActive(t, o)
		created := time.Unix(s.Created, 0).UTC()
		// Two midnights pass: two recorded days of €9.00.
		clockAdvance(t, o.Test, created.Truncate(24*time.Hour).Add(48*time.Hour).Unix()-s.Created+3600)
		ctx := harness.NewBrowser(t)
		dpSignIn(t, ctx, o)

		chart := `#mrr-history figure[data-currency="EUR"]`
		dpWait(t, ctx, "the MRR chart beside the volume", `document.querySelector('.charts #daily-volume') && document.querySelector('.charts `+chart+` path.chart-line')`)
		caption := dpText(t, ctx, chart+" figcaption")
		if !strings.Contains(caption, "€9.00") || !strings.Contains(caption, "2 of 90 days recorded") {
			t.Fatalf("summary %q", caption)
		}
		dpWait(t, ctx, "the chart's label", `(() => { const s = document.querySelector('`+chart+` svg'); return s.getAttribute('role') === 'img' && document.getElementById(s.getAttribute('aria-labelledby')).textContent.includes('€9.00'); })()`)
		harness.Page(t, ctx, "dashboard-overview-mrr")
		dpDo(t, ctx, "open the table", dpClick(chart+" details summary"))
		dpWait(t, ctx, "the recorded days in the table", `document.querySelectorAll('`+chart+` details[open] tbody tr').length === 2 && `+dpHas(chart+" tbody td", "€9.00"))
		harness.Page(t, ctx, "dashboard-overview-mrr-table")

		// The subscription's page: a day too far ahead is refused on its field.
		dpGo(t, ctx, "/test/subscriptions/"+s.Id)
		dpWait(t, ctx, "the pause form", `document.querySelector('#pause-form input[type="date"]') && document.querySelector('#pause-submit')`)
		harness.Page(t, ctx, "dashboard-subscription-pause")
		far := created.AddDate(6, 0, 0).Format(time.DateOnly)
		dpDo(t, ctx, "pick a day six years ahead and pause", dpSetDate(`#pause-form input[type="date"]`, far), dpClick("#pause-submit"))
		dpWait(t, ctx, "the field's error", `document.querySelector('#pause-form input[aria-invalid="true"]') && `+dpHas("#pause-form .field-error", "years"))
		harness.Page(t, ctx, "dashboard-subscription-pause-error")
		if got := subGet(t, o.Merchant, s.Id); got.PauseCollection != nil {
			t.Fatal("a refused pause paused it")
		}

		// Paused until a day.
		resume := created.Truncate(24*time.Hour).AddDate(0, 0, 20)
		dpDo(t, ctx, "pick a day and pause", dpSetDate(`#pause-form input[type="date"]`, resume.Format(time.DateOnly)), dpClick("#pause-submit"))
		dpWait(t, ctx, "paused until the day", `document.querySelector('#unpause-submit') && `+dpHas("#pause-state", "resumes by itself"))
		harness.Page(t, ctx, "dashboard-subscription-paused")
		if got := subGet(t, o.Merchant, s.Id); got.PauseCollection == nil || got.PauseCollection.ResumesAt == nil || *got.PauseCollection.ResumesAt != resume.Unix() {
			t.Fatalf("paused %+v, want resumes_at %d", got.PauseCollection, resume.Unix())
		}

		// Resumed, then paused until resumed, from the keyboard.
		dpDo(t, ctx, "resume", dpClick("#unpause-submit"))
		dpWait(t, ctx, "billing again", `document.querySelector('#pause-submit') && !document.querySelector('#pause-state')`)
		if got := subGet(t, o.Merchant, s.Id); got.PauseCollection != nil {
			t.Fatal("resume left it paused")
		}
		dpDo(t, ctx, "pause until resumed from the keyboard", chromedp.Focus(chromedp.CSS("#pause-submit"), chromedp.NodeVisible), chromedp.KeyEvent(kb.Enter))
		dpWait(t, ctx, "paused until resumed", dpHas("#pause-state", "until you resume it"))
		if got := subGet(t, o.Merchant, s.Id); got.PauseCollection == nil || got.PauseCollection.ResumesAt != nil {
			t.Fatalf("paused %+v, want no resumes_at", got.PauseCollection)
		}
	})
}
