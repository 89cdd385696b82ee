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
