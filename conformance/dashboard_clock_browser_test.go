package conformance

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/kassa-pay/kassa/conformance/harness"
)

func TestDashboardClockControlBrowser(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "PAGES", "every test-mode page has the advance control of the test clock; advancing by keyboard freezes the clock and the header says at what time", func(t *testing.T) {
		t.Parallel()
		o := dpNewOwner(t)
		ctx := harness.NewBrowser(t)
		dpSignIn(t, ctx, o)
		start := time.Now()
		dpDo(t, ctx, "open the dialog by keyboard", chromedp.Focus(chromedp.CSS("#test-clock-advance")), chromedp.KeyEvent("\r"))
		dpWait(t, ctx, "the dialog, focus on the chosen step", `document.querySelector("dialog.clock-dialog[open]") && document.activeElement.name === "advance-by" && document.activeElement.value === "86400"`)
		harness.Page(t, ctx, "dashboard-test-clock-dialog")
		// Arrow keys move through the steps as in any radio group: 1 day → 7 days.
		dpDo(t, ctx, "choose 7 days", chromedp.KeyEvent(kb.ArrowDown))
		dpWait(t, ctx, "7 days chosen", `document.activeElement.value === "604800" && document.activeElement.checked`)
		dpDo(t, ctx, "advance", dpClick("dialog[open] [data-advance]"))
		dpWait(t, ctx, "the dialog closed and the frozen clock in the header",
			`!document.querySelector("dialog.clock-dialog[open]") && !document.getElementById("test-clock").hidden && `+dpHas("#test-clock", "Test clock frozen at"))
		c := clockGet(t, o.Test)
		if c.FrozenTime == nil || *c.FrozenTime < start.Unix()+7*86400-5 || *c.FrozenTime > time.Now().Unix()+7*86400+5 {
			t.Fatalf("clock after advancing 7 days from the header: %+v", c)
		}
		dpWait(t, ctx, "the message that the clock moved", dpHas("#flash", "test clock moved forward"))
		harness.Page(t, ctx, "dashboard-test-clock-advanced")
		for _, path := range []string{"/test/overview", "/test/payments", "/test/refunds", "/test/checkout_sessions", "/test/invoices", "/test/catalog", "/test/webhooks", "/test/api_keys", "/test/apps", "/test/mailbox"} {
			dpGo(t, ctx, path)
			dpWait(t, ctx, path+": the clock and its control", `document.getElementById("test-clock-advance") && !document.getElementById("test-clock").hidden && `+dpHas("#test-clock", "frozen at"))
		}
	})
}
