package conformance

import (
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/kassa-pay/kassa/conformance/harness"
)

func TestDashboardCustomerBalanceBrowser(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "PAGES", "a customer's balance is credited and debited from its page with the keyboard only: an amount the server refuses shows on its field, each change is listed with its note", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := dpNewOwner(t)
		o.signIn(t)
		s := dbSub(t, o, dbEmail(o), 900, nil)
		ctx := harness.NewBrowser(t)
		dpSignIn(t, ctx, o)
		dpGo(t, ctx, "/test/customers/"+s.Customer)
		dpWait(t, ctx, "the balance form and the empty list", `document.querySelector('#balance-form #balance-submit') &&
			document.querySelector('#balance-form select[name="currency"]').value === 'EUR' && `+dpHas("#balance-transactions", "No balance changes yet"))
		harness.Page(t, ctx, "dashboard-customer-balance")
		focusIs := func(sel string) string {
			return `document.activeElement && document.activeElement.matches(` + dpJS(sel) + `)`
		}

		// From the credit choice, Tab to the amount: 1,000,000.00 is beyond what the server
		// takes, and the refusal shows on the amount field.
		dpDo(t, ctx, "Tab from the credit choice to the amount and submit too much",
			chromedp.Focus(chromedp.CSS("#balance-credit"), chromedp.NodeVisible), chromedp.KeyEvent(kb.Tab))
		dpWait(t, ctx, "the focus on the amount", focusIs(`#balance-form input[name="amount"]`))
		dpDo(t, ctx, "type and press Enter", chromedp.KeyEvent("1000000"), chromedp.KeyEvent(kb.Enter))
		dpWait(t, ctx, "the amount's error", `document.querySelector('#balance-form input[name="amount"][aria-invalid="true"]') && `+
			focusIs(`#balance-form input[name="amount"]`)+` && document.querySelector('#balance-form [data-field="amount"] .field-error').textContent.length > 0`)
		harness.Page(t, ctx, "dashboard-customer-balance-error")
		if b := balOf(t, o, s.Customer); len(b) != 0 {
			t.Fatalf("a refused adjustment changed the balance: %v", b)
		}

		// A credit of 12.50 with a note: Tab through the currency to the note, then to the button.
		dpDo(t, ctx, "clear the amount", chromedp.KeyEvent(kb.End))
		for range 7 {
			dpDo(t, ctx, "delete a digit", chromedp.KeyEvent(kb.Backspace))
		}
		dpDo(t, ctx, "credit 12.50 with a note from the keyboard", chromedp.KeyEvent("12.50"), chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent(kb.Tab))
		dpWait(t, ctx, "the focus on the note", focusIs(`#balance-form textarea[name="description"]`))
		dpDo(t, ctx, "type the note, Tab to the button and press Enter", chromedp.KeyEvent("Goodwill for the outage"), chromedp.KeyEvent(kb.Tab))
		dpWait(t, ctx, "the focus on the button", focusIs("#balance-submit"))
		dpDo(t, ctx, "press Enter", chromedp.KeyEvent(kb.Enter))
		dpWait(t, ctx, "the credit on the page", dpHas("[data-balance]", "€12.50 credit")+` && `+dpHas("#balance-transactions", "Goodwill for the outage"))
		harness.Page(t, ctx, "dashboard-customer-balance-credited")
		if b := balOf(t, o, s.Customer); b["EUR"] != -1250 {
			t.Fatalf("balance %v, want EUR -1250", b)
		}

		// A debit of 3.00: arrow to the second choice, Tab to the amount, Enter.
		dpDo(t, ctx, "choose the debit with the arrow key",
			chromedp.Focus(chromedp.CSS("#balance-credit"), chromedp.NodeVisible), chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.Tab))
		dpWait(t, ctx, "the debit chosen, the focus on the amount", `document.querySelector('#balance-debit').checked && `+focusIs(`#balance-form input[name="amount"]`))
		dpDo(t, ctx, "type 3 and press Enter", chromedp.KeyEvent("3"), chromedp.KeyEvent(kb.Enter))
		dpWait(t, ctx, "the balance after the debit", dpHas("[data-balance]", "€9.50 credit")+
			` && document.querySelectorAll('#balance-transactions tbody tr').length === 2 && `+dpHas("#balance-transactions tbody tr:first-child", "€3.00 owed"))
		harness.Page(t, ctx, "dashboard-customer-balance-debited")
		if b := balOf(t, o, s.Customer); b["EUR"] != -950 {
			t.Fatalf("balance %v, want EUR -950", b)
		}
	})
}
