package conformance

import (
	"testing"

	"github.com/kassa-pay/kassa/conformance/harness"
)

func TestDashboardPagesRefunds(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "PAGES", "a refund from the payment page: the amount starts at what is left, the refund and its fee reversal are listed, the payment is partially refunded", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := dpNewOwner(t)
		s := dashPay(t, o.Merchant, 2500, "eur", payCardOK)
		ctx := harness.NewBrowser(t)
		dpSignIn(t, ctx, o)
		dpGo(t, ctx, "/test/payments/"+s.Payment.Id)
		dpWait(t, ctx, "the refund form", `document.querySelector('#refund-form input[name="amount"]')`)
		if v := dpValue(t, ctx, `#refund-form input[name="amount"]`); v != "25.00" {
			t.Fatalf("the amount starts at %q, want 25.00 (all of it is left)", v)
		}
		dpWait(t, ctx, "no refunds yet", dpHas("#payment-refunds", "No refunds."))
		harness.Page(t, ctx, "dashboard-payment-refund-form")

		dpDo(t, ctx, "refund 10.00", dpType(`#refund-form input[name="amount"]`, "10.00"), dpClick(`#refund-form button[type="submit"]`))
		dpWait(t, ctx, "the refund listed", `document.querySelectorAll("#payment-refunds tbody tr").length === 1`)
		dpWait(t, ctx, "the payment partially refunded", dpHas(".page-head .badge", "partially refunded"))
		dpWait(t, ctx, "the rest prefilled", `document.querySelector('#refund-form input[name="amount"]').value === "15.00"`)
		// 10.00 of 25.00 gives back round(95 × 0.4) = 38 cents of the fee.
		dpWait(t, ctx, "the fee reversal", dpHas("#payment-refunds tbody", "€0.38"))
		harness.Page(t, ctx, "dashboard-payment-refunded")
		if p := asyncPayment(t, o.Merchant, s.Id); p.AmountRefunded != 1000 || p.Status != "partially_refunded" {
			t.Fatalf("after the page's refund: %s %d", p.Status, p.AmountRefunded)
		}

		// One cent more than what is left is refused next to the amount; nothing is refunded.
		dpDo(t, ctx, "refund 15.01", dpType(`#refund-form input[name="amount"]`, "15.01"), dpClick(`#refund-form button[type="submit"]`))
		dpWait(t, ctx, "the error at the amount", `document.querySelector('#refund-form input[name="amount"][aria-invalid="true"]')`)
		harness.Page(t, ctx, "dashboard-payment-refund-refused")
		if p := asyncPayment(t, o.Merchant, s.Id); p.AmountRefunded != 1000 {
			t.Fatalf("a refused refund changed the payment: %d", p.AmountRefunded)
		}

		// The refunds page lists it, linked to its payment.
		dpGo(t, ctx, "/test/refunds")
		dpWait(t, ctx, "the refund in the list", `document.querySelector('a[data-payment="`+s.Payment.Id+`"]')`+" && "+dpHas("tbody", "€10.00"))
		harness.Page(t, ctx, "dashboard-refunds")
	})
}
