package conformance

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kassa-pay/kassa/conformance/harness"
)

// dpAckReceiver is a hookReceiver that acknowledges every delivery with a body the delivery
// log shows as the response excerpt.
func dpAckReceiver(t *testing.T) *hookReceiver {
	t.Helper()
	return newHookReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok from the page test receiver"))
	})
}

// dpOfType matches the deliveries of events of typ.
func dpOfType(typ string) func(hookHit) bool {
	return func(h hookHit) bool { return h.Header.Get("Service-Event-Type") == typ }
}

// dpReloadUntil reloads path until cond holds (the delivery log does not refresh by itself).
func dpReloadUntil(t *testing.T, ctx context.Context, path, what, cond string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		dpGo(t, ctx, path)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("!!("+cond+")"))
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("main").innerText.slice(0, 2000)`))
			t.Fatalf("waiting for %s on %s: not so after 30 s; page:\n%s", what, path, text)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func TestDashboardPagesWebhooks(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "PAGES", "an endpoint created on the page receives a signed event and its delivery log shows the attempt; redeliver sends it again", func(t *testing.T) {
		t.Parallel()
		o := dpNewOwner(t)
		recv := dpAckReceiver(t)
		ctx := harness.NewBrowser(t)
		dpSignIn(t, ctx, o)
		dpGo(t, ctx, "/test/webhooks")
		dpWait(t, ctx, "the event types", `document.querySelector('#create-endpoint input[value="checkout.session.expired"]')`)
		dpDo(t, ctx, "fill the endpoint form",
			dpType(`#create-endpoint input[name="url"]`, recv.URL+"/hook"),
			dpType(`#create-endpoint input[name="description"]`, "page test receiver"),
			dpClick(`#create-endpoint input[value="checkout.session.expired"]`))
		harness.Page(t, ctx, "dashboard-webhooks-new")
		dpDo(t, ctx, "add the endpoint", dpClick(`#create-endpoint button[type="submit"]`))
		dpWait(t, ctx, "the signing secret", `document.querySelector(".secret-box .secret-value")`)
		secret := dpValue(t, ctx, ".secret-box .secret-value")
		if !strings.HasPrefix(secret, "whsec_") {
			t.Fatalf("secret shown %q, want whsec_…", secret)
		}
		dpDo(t, ctx, "dismiss the secret", dpClick(".secret-box .button-primary"))
		dpWait(t, ctx, "the endpoint page", `/^\/test\/webhooks\/we_/.test(location.pathname) && document.getElementById("delivery-log")`)
		endpointPath, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.pathname`))

		// An event the endpoint subscribes to: a session expired through the merchant API.
		cs := csCreate(t, o.Test, sessionBody())
		if r := raw(t, "POST", "/v1/checkout/sessions/"+cs.Id+"/expire", o.TestKey, "", nil); r.Status != http.StatusOK {
			t.Fatalf("expire: %d %s", r.Status, r.Body)
		}
		dpReloadUntil(t, ctx, endpointPath, "the checkout.session.expired delivery",
			dpHas("#delivery-log tbody tr", "checkout.session.expired"))
		dpDo(t, ctx, "open its attempts", chromedp.Evaluate[chromedp.Void](
			`[...document.querySelectorAll("#delivery-log tbody tr[data-id]")].find((r) => r.textContent.includes("checkout.session.expired")).querySelector("[data-delivery]").click()`))
		dpWait(t, ctx, "the attempt with its status and latency", dpHas(".row-detail:not([hidden])", "HTTP 200")+" && "+dpHas(".row-detail:not([hidden])", " ms"))
		dpWait(t, ctx, "the response excerpt", dpHas(".row-detail:not([hidden])", "ok from the page test receiver"))
		harness.Page(t, ctx, "dashboard-webhook-delivery-log")

		got := recv.waitFor(t, 1, hookWait, dpOfType("checkout.session.expired"))
		if len(got) != 1 {
			t.Fatalf("receiver got %d checkout.session.expired deliveries, want 1", len(got))
		}
		if !hookSignedBy(t, got[0], secret) {
			t.Fatalf("delivery not signed with the secret the page showed: %s", got[0].Header.Get("Service-Signature"))
		}
		if id := got[0].envelope(t).objectID(); id != cs.Id {
			t.Fatalf("delivered event %s, want the session %s", got[0].Body, cs.Id)
		}

		// Redeliver from the log: the receiver gets the same event again.
		dpDo(t, ctx, "redeliver", dpClick(".row-detail:not([hidden]) [data-redeliver]"))
		again := recv.waitFor(t, 2, 30*time.Second, dpOfType("checkout.session.expired"))[1]
		if again.Header.Get("Service-Event-Id") != got[0].Header.Get("Service-Event-Id") || !hookSignedBy(t, again, secret) {
			t.Fatalf("redelivery: event %s (first %s), signature valid %v", again.Header.Get("Service-Event-Id"),
				got[0].Header.Get("Service-Event-Id"), hookSignedBy(t, again, secret))
		}
	})

	harness.Rule(t, "PAGES", "send test event, edit events, rotate, disable, enable and delete an endpoint on its page", func(t *testing.T) {
		t.Parallel()
		o := dpNewOwner(t)
		recv := dpAckReceiver(t)
		ctx := harness.NewBrowser(t)
		dpSignIn(t, ctx, o)
		dpGo(t, ctx, "/test/webhooks")
		dpWait(t, ctx, "the event types", `document.querySelector('#create-endpoint input[name="all_events"]')`)
		dpDo(t, ctx, "add an endpoint for all events",
			dpType(`#create-endpoint input[name="url"]`, recv.URL+"/all"),
			dpClick(`#create-endpoint input[name="all_events"]`),
			dpClick(`#create-endpoint button[type="submit"]`))
		dpWait(t, ctx, "the signing secret", `document.querySelector(".secret-box .secret-value")`)
		first := dpValue(t, ctx, ".secret-box .secret-value")
		dpDo(t, ctx, "dismiss the secret", dpClick(".secret-box .button-primary"))
		dpWait(t, ctx, "the endpoint page", `/^\/test\/webhooks\/we_/.test(location.pathname) && document.getElementById("delivery-log")`)
		endpointPath, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.pathname`))
		harness.Page(t, ctx, "dashboard-webhook-endpoint")

		// Send test event: a delivery appears in the log and reaches the receiver.
		dpDo(t, ctx, "send a test event", dpClick(`[data-action="test"]`))
		recv.waitFor(t, 1, 30*time.Second, nil)
		dpReloadUntil(t, ctx, endpointPath, "the test delivery in the log", `document.querySelectorAll("#delivery-log tbody tr[data-id]").length >= 1`)
		if d := recv.got()[0]; !hookSignedBy(t, d, first) {
			t.Fatalf("test event not signed with the endpoint's secret: %s", d.Header.Get("Service-Signature"))
		}

		// Edit the events: from all to one.
		dpDo(t, ctx, "choose one event",
			dpClick(`#edit-endpoint input[name="all_events"]`),
			dpClick(`#edit-endpoint input[value="checkout.session.completed"]`),
			dpClick(`#edit-endpoint button[type="submit"]`))
		dpWait(t, ctx, "the saved events", dpHas("#main .facts", "checkout.session.completed")+" && !"+dpHas("#main .facts", "All events"))

		// Rotate: a new secret, shown once, different from the first.
		dpDo(t, ctx, "rotate", dpClick(`[data-action="rotate"]`))
		dpWait(t, ctx, "the confirm dialog", `document.querySelector("dialog[open] [data-confirm]")`)
		dpDo(t, ctx, "confirm", dpClick("dialog[open] [data-confirm]"))
		dpWait(t, ctx, "the new secret", `document.querySelector(".secret-box .secret-value")`)
		second := dpValue(t, ctx, ".secret-box .secret-value")
		if !strings.HasPrefix(second, "whsec_") || second == first {
			t.Fatalf("rotated secret %q (first %q)", second, first)
		}
		harness.Page(t, ctx, "dashboard-webhook-rotated")
		dpDo(t, ctx, "dismiss the secret", dpClick(".secret-box .button-primary"))

		// Disable and enable.
		dpWait(t, ctx, "the disable button", `document.querySelector('[data-action="disable"]')`)
		dpDo(t, ctx, "disable", dpClick(`[data-action="disable"]`))
		dpWait(t, ctx, "the endpoint disabled", dpHas("#main .facts .badge", "disabled")+` && document.querySelector('[data-action="enable"]')`)
		dpDo(t, ctx, "enable", dpClick(`[data-action="enable"]`))
		dpWait(t, ctx, "the endpoint enabled", dpHas("#main .facts .badge", "enabled")+` && document.querySelector('[data-action="disable"]')`)

		// Delete, confirming: back to the list, which no longer has it.
		dpDo(t, ctx, "delete", dpClick(`[data-action="delete"]`))
		dpWait(t, ctx, "the confirm dialog", `document.querySelector("dialog[open] [data-confirm]")`)
		dpDo(t, ctx, "confirm", dpClick("dialog[open] [data-confirm]"))
		dpWait(t, ctx, "the webhooks list without the endpoint", dpAt("/test/webhooks")+" && !"+dpHas("#main table", recv.URL))
	})
}
