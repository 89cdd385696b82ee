package conformance

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/kassa-pay/kassa/conformance/harness"
)

// The Settings page in headless Chromium, by keyboard only: the invoice number prefix shows its
// default, a refused value marks the field with the API's message, and a good one is saved and
// named in the next number. The page passes axe in every state.
func TestInvoiceSettingsBrowser(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "D15", "browser: the settings page changes the invoice number prefix by keyboard", func(t *testing.T) {
		t.Parallel()
		o := dpNewOwner(t)
		ctx := harness.NewBrowser(t)
		dpSignIn(t, ctx, o)
		dpGo(t, ctx, "/test/settings")
		year := time.Now().UTC().Year()
		dpWait(t, ctx, "the default prefix", dpHas("#current-prefix", "DASH")+" && "+dpHas("#next-number", fmt.Sprintf("DASH-INV-%d-0001", year)))
		harness.Page(t, ctx, "dashboard-settings")
		// Keyboard: the field takes focus, the prefix is typed, Enter submits.
		dpDo(t, ctx, "type a prefix that is too short and press Enter",
			dpType(`#settings-form [name="invoice_prefix"]`, "ab"), chromedp.KeyEvent(kb.Enter))
		dpWait(t, ctx, "the field error", `document.querySelector('#settings-form [name="invoice_prefix"]').getAttribute("aria-invalid") === "true" && `+
			`!document.querySelector('#settings-form .field-error').hidden && document.activeElement.name === "invoice_prefix"`)
		harness.Page(t, ctx, "dashboard-settings-invalid")
		dpDo(t, ctx, "type a good prefix in lower case and press Enter",
			chromedp.Focus(chromedp.CSS(`#settings-form [name="invoice_prefix"]`), chromedp.NodeVisible),
			chromedp.KeyEvent(kb.End+strings.Repeat(kb.Backspace, 12)+"shop24"+kb.Enter))
		dpWait(t, ctx, "the saved prefix", dpHas("#current-prefix", "SHOP24")+" && "+dpHas("#next-number", fmt.Sprintf("SHOP24-INV-%d-0001", year))+
			` && !document.querySelector('#settings-form [aria-invalid="true"]')`)
		harness.Page(t, ctx, "dashboard-settings-saved")
		o.signIn(t)
		r, err := o.Client.GetSettingsWithResponse(context.Background())
		if err != nil || r.JSON200 == nil || r.JSON200.InvoicePrefix != "SHOP24" {
			t.Fatalf("settings after saving: %v %s", err, r.Body)
		}
		// The page is the merchant's, the same in live mode.
		dpGo(t, ctx, "/live/settings")
		dpWait(t, ctx, "the prefix in live mode", dpHas("#current-prefix", "SHOP24"))
		harness.Page(t, ctx, "dashboard-settings-live")
	})
}

// The invoices pages act on a button, never on a select's change (WCAG 3.2.2 On Input): the
// status filter loads nothing while the options are arrowed through, only its Filter button
// does; the draft editor's catalog picker adds a line only with its Add button. By keyboard,
// with axe on every state.
func TestInvoicePagesOnInputBrowser(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "D15", "browser: the invoice filter and the catalog picker change nothing while arrowing through options", func(t *testing.T) {
		t.Parallel()
		o := dpNewOwner(t)
		o.signIn(t)
		createDashPrice(t, o, false)
		d := newDraft(t, o, freeLine("Work", 1, 1000, "0"))
		ctx := harness.NewBrowser(t)
		dpSignIn(t, ctx, o)
		dpGo(t, ctx, "/test/invoices")
		focusIs := func(cond string) string {
			return `document.activeElement && document.activeElement.matches(` + dpJS(cond) + `)`
		}
		dpDo(t, ctx, "arrow through the status filter",
			chromedp.Focus(chromedp.CSS(`#main select[name="status"]`), chromedp.NodeVisible),
			chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.ArrowDown))
		// Give a change handler the time it would need to navigate.
		dpDo(t, ctx, "wait", chromedp.Sleep(500*time.Millisecond))
		dpWait(t, ctx, "still the unfiltered list with the focus on the select",
			`location.search === "" && `+focusIs(`select[name="status"]`)+` && document.activeElement.value === "open"`)
		dpDo(t, ctx, "Tab to Filter and press Enter", chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent(kb.Enter))
		dpWait(t, ctx, "the filtered list", `location.search.includes("status=open") && `+dpAt("/test/invoices"))
		harness.Page(t, ctx, "dashboard-invoices-filtered")

		dpGo(t, ctx, "/test/invoices/"+d.Id)
		dpWait(t, ctx, "the editor", `document.getElementById("invoice-editor") && document.querySelectorAll("#lines tr").length === 1`)
		dpDo(t, ctx, "arrow through the catalog picker",
			chromedp.Focus(chromedp.CSS("#catalog-price"), chromedp.NodeVisible), chromedp.KeyEvent(kb.ArrowDown))
		dpDo(t, ctx, "wait", chromedp.Sleep(300*time.Millisecond))
		dpWait(t, ctx, "no line added, focus kept", `document.querySelectorAll("#lines tr").length === 1 && `+focusIs("#catalog-price")+
			` && document.activeElement.value !== ""`)
		dpDo(t, ctx, "Tab to Add price and press Enter", chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent(kb.Enter))
		dpWait(t, ctx, "the catalog line, focus on its quantity", `document.querySelectorAll("#lines tr").length === 2 && `+focusIs("#lines tr:last-child [data-q]"))
		harness.Page(t, ctx, "dashboard-invoice-editor-catalog-line")
	})
}
