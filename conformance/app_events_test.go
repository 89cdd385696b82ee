package conformance

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/conformance/harness"
	op "github.com/kassa-pay/kassa/openapi/gen/operatorapi"
	"github.com/kassa-pay/kassa/openapi/webhook"
)

// App events (interface 6.2, D10, D17): app webhook endpoints registered per app through the
// operator API, one delivery per installation, filtered by subscription and by scope, signed
// with the app endpoint's secret, logged and redelivered through the operator API, and stopped
// at once by uninstalling.

func TestAppEvents(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "D17", "an app delivery carries the installation, validates against app-events.yaml, is signed with the app endpoint's secret and has the delivery headers", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		a := appHookInstall(t, m.ID, "payments:read")
		rc := newHookReceiver(t, nil)
		ep := appHookEndpoint(t, a.ID, rc.URL, "checkout.*")
		if !strings.HasPrefix(ep.Secret, "whsec_") || len(ep.Secret) < len("whsec_")+32 || ep.Object != "app_webhook_endpoint" {
			t.Fatalf("endpoint %+v: want a whsec_ secret of ≥ 192 bits", ep)
		}
		sid := hookExpiredSession(t, m.Test)
		h := rc.waitFor(t, 1, hookWait, aboutObject(t, sid))[0]
		wantAppEventBody(t, h.Body)
		e := h.appEnvelope(t)
		if e.Installation != a.Installation || e.Type != "checkout.session.expired" || e.Environment != "test" ||
			e.Object != "event" || e.APIVersion != "2026-11-01" {
			t.Fatalf("envelope %+v, want installation %s", e, a.Installation)
		}
		for k, want := range map[string]string{"Service-Event-Id": e.ID, "Service-Event-Type": e.Type,
			"Service-Environment": "test", "Service-Delivery-Attempt": "1", "Content-Type": "application/json"} {
			if got := h.Header.Get(k); got != want {
				t.Fatalf("%s: %q, want %q", k, got, want)
			}
		}
		if !hookSignedBy(t, h, ep.Secret) {
			t.Fatalf("Service-Signature %q is not HMAC-SHA256(app endpoint secret, t.body)", h.Header.Get("Service-Signature"))
		}
		if ev, err := webhook.ConstructEvent(h.Body, h.Header.Get("Service-Signature"), ep.Secret); err != nil || ev.Installation != a.Installation {
			t.Fatalf("SDK verifier: %v %+v", err, ev)
		}
	})

	harness.Rule(t, "D17", "app subscriptions match exact names, * and prefix.*; other types are not delivered", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		a := appHookInstall(t, m.ID, "payments:read", "invoices:read")
		exact, star, prefix := newHookReceiver(t, nil), newHookReceiver(t, nil), newHookReceiver(t, nil)
		other, otherPrefix := newHookReceiver(t, nil), newHookReceiver(t, nil)
		appHookEndpoint(t, a.ID, exact.URL, "checkout.session.expired")
		appHookEndpoint(t, a.ID, star.URL, "*")
		appHookEndpoint(t, a.ID, prefix.URL, "checkout.*")
		appHookEndpoint(t, a.ID, other.URL, "checkout.session.completed", "invoice.payment_failed")
		appHookEndpoint(t, a.ID, otherPrefix.URL, "payment_intent.*")
		sid := hookExpiredSession(t, m.Test)
		for _, rc := range []*hookReceiver{exact, star, prefix} {
			h := rc.waitFor(t, 1, hookWait, aboutObject(t, sid))[0]
			if h.appEnvelope(t).Type != "checkout.session.expired" {
				t.Fatalf("delivered %s", h.Body)
			}
		}
		appHookQuiet(t, other, time.Second)
		appHookQuiet(t, otherPrefix, 0)
	})

	harness.Rule(t, "D17", "an installation without the scope that reads an event's object gets no delivery of it", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		reader := appHookInstall(t, m.ID, "payments:read")
		blind := appHookInstall(t, m.ID, "merchant:read", "invoices:read", "subscriptions:read")
		rcReader, rcBlind := newHookReceiver(t, nil), newHookReceiver(t, nil)
		appHookEndpoint(t, reader.ID, rcReader.URL, "*")
		appHookEndpoint(t, blind.ID, rcBlind.URL, "*")
		sid := hookExpiredSession(t, m.Test)
		rcReader.waitFor(t, 1, hookWait, aboutObject(t, sid))
		appHookQuiet(t, rcBlind, time.Second)
		if d := appHookDeliveries(t, blind.ID); len(d) != 0 {
			t.Fatalf("the installation without payments:read has deliveries %+v", d)
		}
	})

	harness.Rule(t, "D17", "each installation of an app gets its own delivery with its own installation id; another merchant's events never reach it", func(t *testing.T) {
		t.Parallel()
		m1, m2, m3 := newMerchant(t, true), newMerchant(t, true), newMerchant(t, true)
		a := appHookInstall(t, m1.ID, "payments:read")
		i2, err := operator(t).CreateInstallationWithResponse(context.Background(), a.ID, op.InstallationCreate{MerchantId: m2.ID})
		if err != nil || i2.JSON201 == nil {
			t.Fatalf("install on m2: %v %s", err, i2.Body)
		}
		rc := newHookReceiver(t, nil)
		appHookEndpoint(t, a.ID, rc.URL, "*")
		s1, s2 := hookExpiredSession(t, m1.Test), hookExpiredSession(t, m2.Test)
		s3 := hookExpiredSession(t, m3.Test) // not installed there
		h1 := rc.waitFor(t, 1, hookWait, aboutObject(t, s1))[0]
		h2 := rc.waitFor(t, 1, hookWait, aboutObject(t, s2))[0]
		if h1.appEnvelope(t).Installation != a.Installation || h2.appEnvelope(t).Installation != i2.JSON201.Installation {
			t.Fatalf("installations %s / %s, want %s / %s", h1.appEnvelope(t).Installation, h2.appEnvelope(t).Installation,
				a.Installation, i2.JSON201.Installation)
		}
		time.Sleep(time.Second)
		for _, h := range rc.got() {
			if h.appEnvelope(t).objectID() == s3 {
				t.Fatalf("an event of a merchant without the app arrived: %s", h.Body)
			}
		}
	})

	harness.Rule(t, "D17", "the operator lists an app's deliveries with their attempts and redelivers one under the next attempt number", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		a := appHookInstall(t, m.ID, "payments:read")
		rc := newHookReceiver(t, nil)
		ep := appHookEndpoint(t, a.ID, rc.URL, "checkout.session.expired")
		sid := hookExpiredSession(t, m.Test)
		h := rc.waitFor(t, 1, hookWait, aboutObject(t, sid))[0]
		evt := h.appEnvelope(t).ID
		var d op.AppWebhookDelivery
		deadline := time.Now().Add(hookWait)
		for {
			list := appHookDeliveries(t, a.ID)
			if len(list) == 1 && list[0].Status == "succeeded" {
				d = list[0]
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("deliveries %+v, want one succeeded", list)
			}
			time.Sleep(100 * time.Millisecond)
		}
		if d.Event != evt || d.Endpoint != ep.Id || d.Installation != a.Installation || d.Merchant != m.ID ||
			d.Environment != "test" || d.EventType != "checkout.session.expired" || d.Attempts != 1 {
			t.Fatalf("delivery %+v", d)
		}
		got, err := operator(t).RetrieveAppWebhookDeliveryWithResponse(context.Background(), a.ID, d.Id)
		if err != nil || got.JSON200 == nil {
			t.Fatalf("retrieve: %v %s", err, got.Body)
		}
		if len(got.JSON200.AttemptLog) != 1 || got.JSON200.AttemptLog[0].StatusCode == nil || *got.JSON200.AttemptLog[0].StatusCode != 200 {
			t.Fatalf("attempt log %+v", got.JSON200.AttemptLog)
		}
		re, err := operator(t).RedeliverAppWebhookDeliveryWithResponse(context.Background(), a.ID, d.Id)
		if err != nil || re.JSON200 == nil || re.JSON200.Status != "pending" {
			t.Fatalf("redeliver: %v %s", err, re.Body)
		}
		again := rc.waitFor(t, 2, hookWait, forEvent(evt))
		if again[1].Header.Get("Service-Delivery-Attempt") != "2" || string(again[1].Body) != string(again[0].Body) ||
			!hookSignedBy(t, again[1], ep.Secret) {
			t.Fatalf("redelivery: attempt %q, same body %v", again[1].Header.Get("Service-Delivery-Attempt"), string(again[1].Body) == string(again[0].Body))
		}
		// Another app does not see the delivery.
		b := appHookInstall(t, m.ID)
		other, err := operator(t).RetrieveAppWebhookDeliveryWithResponse(context.Background(), b.ID, d.Id)
		if err != nil || other.StatusCode() != http.StatusNotFound {
			t.Fatalf("another app's delivery: %v %d", err, other.StatusCode())
		}
	})

	harness.Rule(t, "D17", "uninstalling stops an app's deliveries at once, including retries of failing ones", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		a := appHookInstall(t, m.ID, "payments:read")
		rc := newHookReceiver(t, func(int, http.ResponseWriter, *http.Request) {})
		rc.setRespond(func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) })
		appHookEndpoint(t, a.ID, rc.URL, "*")
		sid := hookExpiredSession(t, m.Test)
		rc.waitFor(t, 1, hookWait, aboutObject(t, sid)) // failed: retried in 5 s
		del, err := operator(t).DeleteInstallationWithResponse(context.Background(), a.Installation)
		if err != nil || del.JSON200 == nil {
			t.Fatalf("uninstall: %v %s", err, del.Body)
		}
		before := len(rc.got())
		sid2 := hookExpiredSession(t, m.Test)
		time.Sleep(8 * time.Second) // past the first retry
		for _, h := range rc.got()[before:] {
			t.Fatalf("delivered after uninstalling: %s", h.Body)
		}
		for _, d := range appHookDeliveries(t, a.ID) {
			if d.Status == "pending" {
				t.Fatalf("delivery %+v still pending after uninstalling", d)
			}
		}
		_ = sid2
		// Redelivery is refused while the app is uninstalled.
		list := appHookDeliveries(t, a.ID)
		if len(list) == 0 {
			t.Fatal("no delivery in the log")
		}
		re, err := operator(t).RedeliverAppWebhookDeliveryWithResponse(context.Background(), a.ID, list[0].Id)
		if err != nil || re.StatusCode() != http.StatusUnprocessableEntity || !strings.Contains(string(re.Body), "uninstalled") {
			t.Fatalf("redeliver after uninstall: %v %d %s", err, re.StatusCode(), re.Body)
		}
		// The log filters by installation; an unknown app is 404.
		other, err := operator(t).ListAppWebhookDeliveriesWithResponse(context.Background(), a.ID,
			&op.ListAppWebhookDeliveriesParams{Installation: ptr("3f0c2a4e-8b1d-4c6f-9a2e-5d7b8c9e0f1a")})
		if err != nil || other.JSON200 == nil || len(other.JSON200.Data) != 0 {
			t.Fatalf("another installation's deliveries: %v %s", err, other.Body)
		}
		mine, err := operator(t).ListAppWebhookDeliveriesWithResponse(context.Background(), a.ID,
			&op.ListAppWebhookDeliveriesParams{Installation: &a.Installation})
		if err != nil || mine.JSON200 == nil || len(mine.JSON200.Data) != len(list) {
			t.Fatalf("the installation's deliveries: %v %s", err, mine.Body)
		}
		if r, _ := operator(t).ListAppWebhookDeliveriesWithResponse(context.Background(), "app_000000000000000000000000", nil); r.StatusCode() != http.StatusNotFound {
			t.Fatalf("unknown app: %d", r.StatusCode())
		}
		if r, _ := operator(t).ListAppWebhookDeliveriesWithResponse(context.Background(), a.ID, &op.ListAppWebhookDeliveriesParams{Limit: ptr(101)}); r.StatusCode() != http.StatusBadRequest {
			t.Fatalf("limit 101: %d", r.StatusCode())
		}
	})

	harness.Rule(t, "D17", "app endpoints are managed through the operator API: events checked against the app catalog, list, get, update and delete; another app's endpoint is not found", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		a := appHookInstall(t, m.ID)
		ctx := context.Background()
		for _, bad := range [][]string{{"charge.refunded"}, {"invoice.paid"}, {"refund.*"}, {"customer.subscription.created"}, {".*"}, {}} {
			r, err := operator(t).CreateAppWebhookEndpointWithResponse(ctx, a.ID, op.AppWebhookEndpointCreate{Url: "https://app.example/hooks", Events: bad})
			if err != nil || r.StatusCode() != http.StatusBadRequest {
				t.Fatalf("events %v: %v %d %s", bad, err, r.StatusCode(), r.Body)
			}
		}
		ep := appHookEndpoint(t, a.ID, "https://app.example/hooks", "checkout.*", "invoice.payment_failed")
		list, err := operator(t).ListAppWebhookEndpointsWithResponse(ctx, a.ID)
		if err != nil || list.JSON200 == nil || len(list.JSON200.Data) != 1 || list.JSON200.Data[0].Id != ep.Id {
			t.Fatalf("list: %v %s", err, list.Body)
		}
		if strings.Contains(string(list.Body), ep.Secret) {
			t.Fatal("the list shows the secret")
		}
		up, err := operator(t).UpdateAppWebhookEndpointWithResponse(ctx, a.ID, ep.Id, op.AppWebhookEndpointUpdate{Events: &[]string{"*"}})
		if err != nil || up.JSON200 == nil || !slices.Equal(up.JSON200.Events, []string{"*"}) || up.JSON200.Url != ep.Url {
			t.Fatalf("update: %v %s", err, up.Body)
		}
		b := appHookInstall(t, m.ID)
		if r, _ := operator(t).RetrieveAppWebhookEndpointWithResponse(ctx, b.ID, ep.Id); r.StatusCode() != http.StatusNotFound {
			t.Fatalf("another app's endpoint: %d", r.StatusCode())
		}
		if r, _ := operator(t).DeleteAppWebhookEndpointWithResponse(ctx, a.ID, ep.Id); r.JSON200 == nil || !r.JSON200.Deleted {
			t.Fatalf("delete: %d %s", r.StatusCode(), r.Body)
		}
		if r, _ := operator(t).RetrieveAppWebhookEndpointWithResponse(ctx, a.ID, ep.Id); r.StatusCode() != http.StatusNotFound {
			t.Fatalf("deleted endpoint: %d", r.StatusCode())
		}
	})

	harness.Rule(t, "D17", "an app installed again after an uninstall receives events again, under its new installation id", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		a := appHookInstall(t, m.ID, "payments:read")
		rc := newHookReceiver(t, nil)
		appHookEndpoint(t, a.ID, rc.URL, "*")
		first := hookExpiredSession(t, m.Test)
		rc.waitFor(t, 1, hookWait, aboutObject(t, first))
		if del, err := operator(t).DeleteInstallationWithResponse(context.Background(), a.Installation); err != nil || del.JSON200 == nil {
			t.Fatalf("uninstall: %v", err)
		}
		again, err := operator(t).CreateInstallationWithResponse(context.Background(), a.ID, op.InstallationCreate{MerchantId: m.ID})
		if err != nil || again.JSON201 == nil {
			t.Fatalf("install again: %v %s", err, again.Body)
		}
		second := hookExpiredSession(t, m.Test)
		h := rc.waitFor(t, 1, hookWait, aboutObject(t, second))[0]
		if got := h.appEnvelope(t).Installation; got != again.JSON201.Installation || got == a.Installation {
			t.Fatalf("installation %s, want the new one %s", got, again.JSON201.Installation)
		}
	})

	harness.Rule(t, "D17", "live app events are not sent to an http app endpoint: the attempt fails without a request; test events are", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		a := appHookInstall(t, m.ID, "payments:read")
		rc := newHookReceiver(t, nil)
		appHookEndpoint(t, a.ID, rc.URL, "checkout.session.expired")
		live := hookExpiredSession(t, m.Live)
		test := hookExpiredSession(t, m.Test)
		rc.waitFor(t, 1, hookWait, aboutObject(t, test))
		deadline := time.Now().Add(hookWait)
		for {
			var liveDelivery *op.AppWebhookDelivery
			for _, d := range appHookDeliveries(t, a.ID) {
				if d.Environment == "live" {
					liveDelivery = &d
				}
			}
			if liveDelivery != nil && liveDelivery.Attempts >= 1 && liveDelivery.LastAttemptAt != nil {
				got, err := operator(t).RetrieveAppWebhookDeliveryWithResponse(context.Background(), a.ID, liveDelivery.Id)
				if err != nil || got.JSON200 == nil {
					t.Fatalf("retrieve: %v", err)
				}
				if log := got.JSON200.AttemptLog; len(log) > 0 && log[0].Error != nil {
					if !strings.Contains(*log[0].Error, "https") || log[0].StatusCode != nil {
						t.Fatalf("attempt %+v", log[0])
					}
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatal("no failed attempt of the live event")
			}
			time.Sleep(100 * time.Millisecond)
		}
		for _, h := range rc.got() {
			if h.appEnvelope(t).objectID() == live {
				t.Fatalf("a live event reached an http endpoint: %s", h.Body)
			}
		}
	})
}
