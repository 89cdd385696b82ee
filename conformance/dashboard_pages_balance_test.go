package conformance

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/kassa-pay/kassa/conformance/harness"
)

func TestDashboardPagesBalance(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "PAGES", "the balance page shows available and pending per currency and the transactions, filtered by type, with a CSV link; the payment page lists its ledger entries", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := dpNewOwner(t)
		a := dashPay(t, o.Merchant, 2500, "eur", payCardOK)
		dashPay(t, o.Merchant, 1800, "eur", payCardInstant)
		o.signIn(t)
		refundOK(t, o, a.Payment.Id, ptr(int64(1000)))
		ctx := harness.NewBrowser(t)
		dpSignIn(t, ctx, o)
		dpGo(t, ctx, "/test/balance")
		dpWait(t, ctx, "the balance", `document.querySelectorAll("#balance-now tbody tr").length === 1`)
		dpWait(t, ctx, "four transactions", `document.querySelectorAll("#balance-transactions tbody tr").length === 4`)
		harness.Page(t, ctx, "dashboard-balance")

		dpDo(t, ctx, "filter refunds",
			chromedp.Evaluate[chromedp.Void](`document.querySelector('#balance-transactions select[name="type"]').value = "refund"`),
			dpClick(`#balance-transactions form button[type="submit"]`))
		dpWait(t, ctx, "only the refund", `location.search.includes("type=refund") && document.querySelectorAll("#balance-transactions tbody tr").length === 1`)
		csv, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("balance-csv").getAttribute("href")`))
		if err != nil || !strings.HasPrefix(csv, "/api/v1/test/balance_transactions/export") || !strings.Contains(csv, "type=refund") {
			t.Fatalf("CSV link %q (%v)", csv, err)
		}
		harness.Page(t, ctx, "dashboard-balance-filtered")

		dpGo(t, ctx, "/test/payments/"+a.Payment.Id)
		dpWait(t, ctx, "the ledger entries", `document.querySelectorAll("#payment-ledger tbody tr").length === 3`)
		harness.Page(t, ctx, "dashboard-payment-ledger")
	})
}

func TestDashboardPagesPayouts(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "PAGES", "the payouts page lists a payout made at midnight of the test clock; its page lists the transactions it settles with a CSV link; live says no payouts are made", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := dpNewOwner(t)
		o.signIn(t)
		now := clockFreeze(t, o.Test)
		dashPay(t, o.Merchant, 2500, "eur", payCardInstant)
		dashPay(t, o.Merchant, 1800, "eur", payCardInstant)
		clockAdvance(t, o.Test, untilMidnight(now))
		ctx := harness.NewBrowser(t)
		dpSignIn(t, ctx, o)
		dpGo(t, ctx, "/test/payouts")
		dpWait(t, ctx, "the payout", `document.querySelectorAll("main tbody tr, #main tbody tr").length === 1`)
		harness.Page(t, ctx, "dashboard-payouts")
		dpDo(t, ctx, "open the payout", dpClick("a[data-payout]"))
		dpWait(t, ctx, "its transactions", `location.pathname.startsWith("/test/payouts/po_") && document.querySelectorAll("#payout-transactions tbody tr").length === 2`)
		csv, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("payout-csv").getAttribute("href")`))
		if err != nil || !strings.Contains(csv, "payout=po_") {
			t.Fatalf("CSV link %q (%v)", csv, err)
		}
		harness.Page(t, ctx, "dashboard-payout")
		dpGo(t, ctx, "/live/payouts")
		dpWait(t, ctx, "the live notice", dpHas("#payouts-off", "live payout adapter"))
		harness.Page(t, ctx, "dashboard-payouts-live")
	})
}
