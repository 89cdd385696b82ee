package conformance

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/kassa-pay/kassa/conformance/harness"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
)

// What test mode shows beside the payments: the frozen test clock, declined charges (they
// create no payment) and a failed payment without a fee.

// dmDecline creates a session and has its first charge declined (card 4000…0002), as a buyer's
// browser would; it returns the session, still open.
func dmDecline(t *testing.T, m *Merchant) *api.CheckoutSession {
	t.Helper()
	payNeedsCheckout(t)
	s := csCreate(t, m.Test, sessionBody())
	if resp := payConfirm(t, s, payCard(payCardDecline)); resp.StatusCode() != http.StatusPaymentRequired {
		t.Fatalf("confirm with the decline card: %d %s", resp.StatusCode(), resp.Body)
	}
	return s
}

func TestDashboardTestModeAPI(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "DASH", "GET /api/v1/test/test_clock follows real time until an advance, then shows the frozen time", func(t *testing.T) {
		t.Parallel()
		o := newDashMerchant(t, true)
		o.signIn(t)
		ctx := context.Background()
		r, err := o.Client.GetDashboardTestClockWithResponse(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if r.JSON200 == nil || r.JSON200.FrozenTime != nil {
			t.Fatalf("before an advance: %d %s", r.StatusCode(), r.Body)
		}
		frozen := clockFreeze(t, o.Test)
		r, err = o.Client.GetDashboardTestClockWithResponse(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if r.JSON200 == nil || r.JSON200.FrozenTime == nil || *r.JSON200.FrozenTime != frozen || r.JSON200.Now != frozen {
			t.Fatalf("after an advance to %d: %d %s", frozen, r.StatusCode(), r.Body)
		}
	})
	harness.Rule(t, "DASH", "declined charges are listed newest first, per session on request; they are no payments", func(t *testing.T) {
		t.Parallel()
		o := newDashMerchant(t, true)
		o.signIn(t)
		ctx := context.Background()
		s1 := dmDecline(t, o.Merchant)
		s2 := dmDecline(t, o.Merchant)
		if resp := payConfirm(t, s2, payCard(payCardDecline)); resp.StatusCode() != http.StatusPaymentRequired {
			t.Fatalf("second decline: %d", resp.StatusCode())
		}
		r, err := o.Client.ListDeclinedChargesWithResponse(ctx, dash.DashboardEnvironmentTest, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.JSON200 == nil || len(r.JSON200.Data) != 3 || r.JSON200.HasMore {
			t.Fatalf("all declines: %d %s", r.StatusCode(), r.Body)
		}
		d := r.JSON200.Data[0]
		if d.SessionId == nil || *d.SessionId != s2.Id || d.Attempt != 2 || d.Kind != dash.DeclinedChargeKindCharge ||
			d.PaymentMethod != dash.DeclinedChargePaymentMethodCard || d.Amount != s2.Amount || d.Currency != s2.Currency {
			t.Fatalf("newest decline: %+v", d)
		}
		one := 1
		r, err = o.Client.ListDeclinedChargesWithResponse(ctx, dash.DashboardEnvironmentTest, &dash.ListDeclinedChargesParams{Session: &s1.Id, Limit: &one})
		if err != nil {
			t.Fatal(err)
		}
		if r.JSON200 == nil || len(r.JSON200.Data) != 1 || r.JSON200.HasMore || *r.JSON200.Data[0].SessionId != s1.Id || r.JSON200.Data[0].Attempt != 1 {
			t.Fatalf("one session's declines: %d %s", r.StatusCode(), r.Body)
		}
		pays, err := o.Client.ListPaymentsWithResponse(ctx, dash.DashboardEnvironmentTest, nil)
		if err != nil {
			t.Fatal(err)
		}
		if pays.JSON200 == nil || len(pays.JSON200.Data) != 0 {
			t.Fatalf("a decline created a payment: %s", pays.Body)
		}
		live, err := o.Client.ListDeclinedChargesWithResponse(ctx, dash.DashboardEnvironmentLive, nil)
		if err != nil {
			t.Fatal(err)
		}
		if live.JSON200 == nil || len(live.JSON200.Data) != 0 {
			t.Fatalf("test declines in live: %s", live.Body)
		}
		bad := "py_nope"
		r, err = o.Client.ListDeclinedChargesWithResponse(ctx, dash.DashboardEnvironmentTest, &dash.ListDeclinedChargesParams{Session: &bad})
		if err != nil {
			t.Fatal(err)
		}
		if r.StatusCode() != http.StatusBadRequest {
			t.Fatalf("session=%s: %d %s", bad, r.StatusCode(), r.Body)
		}
	})
	harness.Rule(t, "DASH", "a failed 3-D Secure check is listed as a declined authentication", func(t *testing.T) {
		t.Parallel()
		o := newDashMerchant(t, true)
		o.signIn(t)
		payNeedsCheckout(t)
		s := csCreate(t, o.Test, sessionBody())
		payConfirmOK(t, s, payCard(payCard3DS), "requires_action")
		if resp := payAction(t, s, false); resp.StatusCode() != http.StatusPaymentRequired {
			t.Fatalf("fail the challenge: %d %s", resp.StatusCode(), resp.Body)
		}
		r, err := o.Client.ListDeclinedChargesWithResponse(context.Background(), dash.DashboardEnvironmentTest, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.JSON200 == nil || len(r.JSON200.Data) != 1 || r.JSON200.Data[0].Kind != dash.DeclinedChargeKindAuthentication {
			t.Fatalf("declines: %d %s", r.StatusCode(), r.Body)
		}
	})
	harness.Rule(t, "DASH", "a failed payment has no fee breakdown; a succeeded one has", func(t *testing.T) {
		t.Parallel()
		o := newDashMerchant(t, true)
		o.signIn(t)
		clockFreeze(t, o.Test)
		s := asyncPay(t, o.Merchant, payIBANFailsLater)
		clockAdvance(t, o.Test, asyncSettleDelay+5)
		p := asyncPayment(t, o.Merchant, s.Id)
		if p.Status != "failed" {
			t.Fatalf("payment %s after settlement, want failed", p.Status)
		}
		r, err := o.Client.GetPaymentWithResponse(context.Background(), dash.DashboardEnvironmentTest, p.Id)
		if err != nil {
			t.Fatal(err)
		}
		if r.JSON200 == nil || r.JSON200.FeeBreakdown != nil {
			t.Fatalf("failed payment detail: %d %s", r.StatusCode(), r.Body)
		}
		ok := dashPay(t, o.Merchant, 1500, "EUR", payCardOK)
		r, err = o.Client.GetPaymentWithResponse(context.Background(), dash.DashboardEnvironmentTest, ok.Payment.Id)
		if err != nil {
			t.Fatal(err)
		}
		if r.JSON200 == nil || r.JSON200.FeeBreakdown == nil || r.JSON200.FeeBreakdown.NetAmount >= 1500 {
			t.Fatalf("succeeded payment detail: %d %s", r.StatusCode(), r.Body)
		}
	})
}

func TestDashboardPagesTestMode(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "PAGES", "once the test clock is advanced, the test-mode header says it is frozen and at what time; live shows no clock", func(t *testing.T) {
		t.Parallel()
		o := dpNewOwner(t)
		ctx := harness.NewBrowser(t)
		dpSignIn(t, ctx, o)
		if shown := dpText(t, ctx, "#test-clock"); shown != "" {
			t.Fatalf("a clock that follows real time is shown: %q", shown)
		}
		frozen := clockFreeze(t, o.Test)
		dpGo(t, ctx, "/test/payments")
		dpWait(t, ctx, "the frozen clock in the header", `!document.getElementById("test-clock").hidden`)
		if got := dpText(t, ctx, "#test-clock"); !strings.Contains(got, "Test clock frozen at") || !strings.Contains(got, "advance") {
			t.Fatalf("header clock: %q", got)
		}
		want := time.Unix(frozen, 0).UTC().Format("2006-01-02T15:04:05.000Z")
		dpWait(t, ctx, "the clock's time", fmt.Sprintf(`document.querySelector("#test-clock time").dateTime === %s`, dpJS(want)))
		harness.Page(t, ctx, "dashboard-test-clock")
		dpDo(t, ctx, "switch to live", dpClick(`.env-switch a[data-env="live"]`))
		dpWait(t, ctx, "the live banner", dpHas("#env-banner", "LIVE MODE")+` && !document.getElementById("test-clock")`)
		harness.Page(t, ctx, "dashboard-live-banner")
	})
	harness.Rule(t, "PAGES", "declined card charges appear with a declined badge on the payments page and on the payment of their session", func(t *testing.T) {
		t.Parallel()
		o := dpNewOwner(t)
		s := dmDecline(t, o.Merchant)
		payConfirmOK(t, s, payCard(payCardOK), "succeeded")
		paid := csGet(t, o.Test, s.Id)
		ctx := harness.NewBrowser(t)
		dpSignIn(t, ctx, o)
		dpGo(t, ctx, "/test/payments")
		dpWait(t, ctx, "the recent declines", dpHas("#recent-declines .badge-declined", "declined")+" && "+dpHas("#recent-declines", s.Id))
		harness.Page(t, ctx, "dashboard-payments-with-declines")
		dpGo(t, ctx, "/test/payments?status=declined")
		dpWait(t, ctx, "the declined filter", dpHas("#main tbody .badge-declined", "declined")+" && "+dpHas("#main tbody", s.Id))
		harness.Page(t, ctx, "dashboard-payments-declined")
		dpGo(t, ctx, "/test/payments/"+paid.Payment.Id)
		dpWait(t, ctx, "the session's declined try", dpHas("#session-declines .badge-declined", "declined"))
		harness.Page(t, ctx, "dashboard-payment-with-declined-try")
	})
	harness.Rule(t, "PAGES", "a failed payment shows no fee and no net amount", func(t *testing.T) {
		t.Parallel()
		o := dpNewOwner(t)
		clockFreeze(t, o.Test)
		s := asyncPay(t, o.Merchant, payIBANFailsLater)
		clockAdvance(t, o.Test, asyncSettleDelay+5)
		p := asyncPayment(t, o.Merchant, s.Id)
		ctx := harness.NewBrowser(t)
		dpSignIn(t, ctx, o)
		dpGo(t, ctx, "/test/payments/"+p.Id)
		dpWait(t, ctx, "the failed payment", dpHas(".page-head .badge-failed", "failed")+` && document.getElementById("no-fee")`)
		if n := dpText(t, ctx, "#fee-breakdown"); n != "" {
			t.Fatalf("a failed payment shows a fee breakdown: %q", n)
		}
		harness.Page(t, ctx, "dashboard-payment-failed")
	})
	harness.Rule(t, "PAGES", "the status filter waits for its button: arrowing through the options does not load a page", func(t *testing.T) {
		t.Parallel()
		o := dpNewOwner(t)
		ctx := harness.NewBrowser(t)
		dpSignIn(t, ctx, o)
		dpGo(t, ctx, "/test/payments")
		dpDo(t, ctx, "arrow down in the status filter", chromedp.Focus(chromedp.CSS(`select[name="status"]`)), chromedp.KeyEvent(kb.ArrowDown))
		time.Sleep(300 * time.Millisecond)
		if loc, _ := chromedp.Run(ctx, chromedp.Location()); loc != dpURL("/test/payments") {
			t.Fatalf("an arrow key in the filter navigated to %s", loc)
		}
		dpDo(t, ctx, "press Filter", dpClick(`form[role="search"] button[type="submit"]`))
		dpWait(t, ctx, "the filtered list", `location.search === "?status=succeeded"`)
	})
	harness.Rule(t, "PAGES", "at 320 CSS pixels (400 % zoom) no page scrolls sideways; tables scroll in their own box", func(t *testing.T) {
		t.Parallel()
		o := dpNewOwner(t)
		ctx := harness.NewBrowser(t)
		dpSignIn(t, ctx, o)
		dpDo(t, ctx, "a 320 px viewport", chromedp.EmulateViewport(320, 800))
		for _, path := range []string{"/test/overview", "/test/payments", "/test/webhooks", "/test/api_keys", "/test/catalog", "/live/overview"} {
			dpGo(t, ctx, path)
			wide, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
			if err != nil {
				t.Fatal(err)
			}
			if wide > 320 {
				culprits, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#app *")]
					.filter((e) => e.getBoundingClientRect().right > 321 && !e.closest(".table-wrap"))
					.slice(0, 5).map((e) => e.tagName + "." + e.className + " " + Math.round(e.getBoundingClientRect().right))`))
				t.Errorf("%s is %d px wide at a 320 px viewport; too wide: %v", path, wide, culprits)
			}
			if path == "/test/webhooks" {
				harness.Screenshot(t, ctx, "dashboard-webhooks-320")
			}
		}
	})
}
