package conformance

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kassa-pay/kassa/conformance/harness"
)

// dpReceiver is a local webhook receiver that acknowledges every delivery and keeps it.
type dpReceiver struct {
	*httptest.Server
	mu   sync.Mutex
	got  []dpDelivery
	seen chan struct{}
}

type dpDelivery struct {
	header http.Header
	body   []byte
}

func dpNewReceiver(t *testing.T) *dpReceiver {
	t.Helper()
	r := &dpReceiver{seen: make(chan struct{}, 100)}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, dpDelivery{req.Header.Clone(), b})
		r.mu.Unlock()
		r.seen <- struct{}{}
		_, _ = w.Write([]byte("ok from the page test receiver"))
	}))
	t.Cleanup(r.Close)
	return r
}

// all returns every delivery the receiver got, in order.
func (r *dpReceiver) all() []dpDelivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]dpDelivery(nil), r.got...)
}

// deliveries returns what the receiver got for events of typ.
func (r *dpReceiver) deliveries(typ string) []dpDelivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []dpDelivery
	for _, d := range r.got {
		if d.header.Get("Service-Event-Type") == typ {
			out = append(out, d)
		}
	}
	return out
}

// dpSignatureValid checks Service-Signature (D10) against secret, computed here, independently of
// the server's signing code.
func dpSignatureValid(d dpDelivery, secret string) bool {
	var ts string
	var sigs []string
	for _, part := range strings.Split(d.header.Get("Service-Signature"), ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sigs = append(sigs, v)
		}
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts + "." + string(d.body)))
	want := hex.EncodeToString(mac.Sum(nil))
	for _, s := range sigs {
		if hmac.Equal([]byte(s), []byte(want)) {
			return true
		}
	}
	return false
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
		recv := dpNewReceiver(t)
		ctx := harness.NewBrowser(t)
		dpSignIn(t, ctx, o)
		dpGo(t, ctx, "/test/webhooks")
		dpWait(t, ctx, "the event types", `document.querySelector('#create-endpoint input[value="checkout.session.expired"]')`)
		dpDo(t, ctx, "fill the endpoint form",
			dpType(`#create-endpoint input[name="url"]`, recv.URL+"/hook"),
			dpType(`#create-endpoint input[name="description"]`, "page test receiver"),
			dpClick(`#create-endpoint input[value="checkout.session.expired"]`))
		harness.Screenshot(t, ctx, "dashboard-webhooks-new")
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
		harness.Screenshot(t, ctx, "dashboard-webhook-delivery-log")

		got := recv.deliveries("checkout.session.expired")
		if len(got) != 1 {
			t.Fatalf("receiver got %d checkout.session.expired deliveries, want 1", len(got))
		}
		if !dpSignatureValid(got[0], secret) {
			t.Fatalf("delivery not signed with the secret the page showed: %s", got[0].header.Get("Service-Signature"))
		}
		var ev struct {
			Type string `json:"type"`
			Data struct {
				Object struct {
					ID string `json:"id"`
				} `json:"object"`
			} `json:"data"`
		}
		if err := json.Unmarshal(got[0].body, &ev); err != nil || ev.Data.Object.ID != cs.Id {
			t.Fatalf("delivered event %s (%v), want the session %s", got[0].body, err, cs.Id)
		}

		// Redeliver from the log: the receiver gets the same event again.
		dpDo(t, ctx, "redeliver", dpClick(".row-detail:not([hidden]) [data-redeliver]"))
		deadline := time.Now().Add(30 * time.Second)
		for len(recv.deliveries("checkout.session.expired")) < 2 {
			if time.Now().After(deadline) {
				t.Fatal("redelivery did not reach the receiver within 30 s")
			}
			time.Sleep(100 * time.Millisecond)
		}
		again := recv.deliveries("checkout.session.expired")[1]
		if again.header.Get("Service-Event-Id") != got[0].header.Get("Service-Event-Id") || !dpSignatureValid(again, secret) {
			t.Fatalf("redelivery: event %s (first %s), signature valid %v", again.header.Get("Service-Event-Id"),
				got[0].header.Get("Service-Event-Id"), dpSignatureValid(again, secret))
		}
	})

	harness.Rule(t, "PAGES", "send test event, edit events, rotate, disable, enable and delete an endpoint on its page", func(t *testing.T) {
		t.Parallel()
		o := dpNewOwner(t)
		recv := dpNewReceiver(t)
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
		harness.Screenshot(t, ctx, "dashboard-webhook-endpoint")

		// Send test event: a delivery appears in the log and reaches the receiver.
		dpDo(t, ctx, "send a test event", dpClick(`[data-action="test"]`))
		select {
		case <-recv.seen:
		case <-time.After(30 * time.Second):
			t.Fatal("the test event did not reach the receiver within 30 s")
		}
		dpReloadUntil(t, ctx, endpointPath, "the test delivery in the log", `document.querySelectorAll("#delivery-log tbody tr[data-id]").length >= 1`)
		if d := recv.all()[0]; !dpSignatureValid(d, first) {
			t.Fatalf("test event not signed with the endpoint's secret: %s", d.header.Get("Service-Signature"))
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
		harness.Screenshot(t, ctx, "dashboard-webhook-rotated")
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
