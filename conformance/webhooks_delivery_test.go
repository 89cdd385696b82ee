package conformance

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/conformance/harness"
	capi "github.com/kassa-pay/kassa/openapi/gen/checkoutapi"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
	"github.com/kassa-pay/kassa/openapi/webhook"
)

// Delivery of merchant webhooks (D10): signature, headers, envelope, retries, 410, manual
// redelivery, secret rotation. Every case has its own merchant, endpoint and receiver.

const hookWait = 20 * time.Second // first delivery: woken by NOTIFY, normally well under a second

// hookMerchantCatalog is the catalog of events merchant webhooks receive (D10: the events of
// interface 6.1 and the four checkout.session completion events); "*" means these and no more.
var hookMerchantCatalog = []string{
	"checkout.session.completed", "checkout.session.expired", "checkout.session.async_payment_pending",
	"checkout.session.async_payment_succeeded", "checkout.session.async_payment_failed", "charge.refunded",
	"invoice.finalized", "invoice.paid", "invoice.payment_failed", "invoice.voided", "invoice.payment_succeeded",
	"customer.subscription.created", "customer.subscription.updated", "customer.subscription.deleted",
	"customer.subscription.trial_will_end", "payout.created", "payout.paid",
}

func TestWebhookDelivery(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "D10", "a delivery is signed t=…,v1=hex HMAC-SHA256 keyed with the whole whsec_ secret over \"t.body\" (checked independently and with the SDK verifier)", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		rc := newHookReceiver(t, nil)
		ep := hookEndpoint(t, o, dash.DashboardEnvironmentTest, rc.URL, "checkout.session.expired")
		if !strings.HasPrefix(ep.Secret, "whsec_") || len(ep.Secret) < len("whsec_")+32 {
			t.Fatalf("secret %q: want whsec_ and ≥ 192 bits", ep.Secret)
		}
		sid := hookExpiredSession(t, o.Test)
		h := rc.waitFor(t, 1, hookWait, aboutObject(t, sid))[0]
		sig := h.Header.Get("Service-Signature")
		ts, v1 := hookSignatures(t, sig)
		if len(v1) != 1 || v1[0] != hookExpectedV1(ep.Secret, ts, h.Body) {
			t.Fatalf("Service-Signature %q is not HMAC-SHA256(secret, t.body)", sig)
		}
		if d := time.Since(time.Unix(ts, 0)); d < -5*time.Second || d > time.Minute {
			t.Fatalf("signed timestamp %d is %s from now", ts, d)
		}
		ev, err := webhook.ConstructEvent(h.Body, sig, ep.Secret)
		if err != nil {
			t.Fatalf("SDK verifier: %v", err)
		}
		if ev.Type != "checkout.session.expired" {
			t.Fatalf("SDK event %+v", ev)
		}
		// A modified body, or another secret, does not verify.
		if webhook.Verify(append([]byte(" "), h.Body...), sig, ep.Secret, 0, time.Now()) == nil ||
			webhook.Verify(h.Body, sig, ep.Secret+"x", 0, time.Now()) == nil {
			t.Fatal("the signature verifies a changed body or a wrong secret")
		}
	})

	harness.Rule(t, "D10", "deliveries carry Service-Event-Id, -Event-Type, -Environment, -Delivery-Attempt and Content-Type application/json, with the event envelope as body", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		rc := newHookReceiver(t, nil)
		hookEndpoint(t, o, dash.DashboardEnvironmentTest, rc.URL)
		before := time.Now().Unix()
		sid := hookExpiredSession(t, o.Test)
		h := rc.waitFor(t, 1, hookWait, aboutObject(t, sid))[0]
		e := h.envelope(t)
		if !strings.HasPrefix(e.ID, "evt_") || len(e.ID) != 28 || e.Object != "event" || e.Type != "checkout.session.expired" ||
			e.Environment != "test" || e.APIVersion != "2026-11-01" || e.Created < before-5 || e.Created > time.Now().Unix()+5 {
			t.Fatalf("envelope %+v", e)
		}
		for k, v := range map[string]string{
			"Service-Event-Id": e.ID, "Service-Event-Type": e.Type, "Service-Environment": "test",
			"Service-Delivery-Attempt": "1", "Content-Type": "application/json",
		} {
			if got := h.Header.Get(k); got != v {
				t.Errorf("%s = %q, want %q", k, got, v)
			}
		}
		var obj struct {
			ID     string `json:"id"`
			Object string `json:"object"`
			Status string `json:"status"`
		}
		if err := json.Unmarshal(e.Data.Object, &obj); err != nil || obj.ID != sid || obj.Object != "checkout.session" || obj.Status != "expired" {
			t.Fatalf("data.object %s", e.Data.Object)
		}
		// The same event is in the merchant's event list (the outbox the webhook was fed from).
		resp, err := o.Test.RetrieveEventWithResponse(context.Background(), e.ID)
		if err != nil {
			t.Fatal(err)
		}
		if resp.JSON200 == nil || resp.JSON200.Type != e.Type {
			t.Fatalf("GET /v1/events/%s: %d %s", e.ID, resp.StatusCode(), resp.Body)
		}
	})

	harness.Rule(t, "D10", "an endpoint receives only the event types it subscribes to", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		all := newHookReceiver(t, nil)
		completedOnly := newHookReceiver(t, nil)
		hookEndpoint(t, o, dash.DashboardEnvironmentTest, all.URL, "*")
		hookEndpoint(t, o, dash.DashboardEnvironmentTest, completedOnly.URL, "checkout.session.completed")
		sid := hookExpiredSession(t, o.Test)
		all.waitFor(t, 1, hookWait, aboutObject(t, sid))
		time.Sleep(time.Second) // the fan-out makes both deliveries in one transaction; leave room anyway
		if n := len(completedOnly.got()); n != 0 {
			t.Fatalf("an endpoint subscribed to checkout.session.completed got %d deliveries of an expiry", n)
		}
	})

	harness.Rule(t, "D10", "an endpoint subscribed to * receives only merchant-catalog events (no payment_intent.*, no checkout.session.canceled)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		rc := newHookReceiver(t, nil)
		hookEndpoint(t, o, dash.DashboardEnvironmentTest, rc.URL, "*")
		// The cancel goes first so that its event, were it delivered, would be in the outbox
		// before the completion the case waits for.
		canceled := csCreate(t, o.Test, sessionBody())
		if x := payCancel(t, canceled); x.JSON200 == nil {
			t.Fatalf("cancel: %d %s", x.StatusCode(), x.Body)
		}
		paid := csCreate(t, o.Test, sessionBody())
		payConfirmOK(t, paid, payCard(payCardOK), capi.ConfirmResultStatusSucceeded)
		// Both kinds of event outside the catalog were written.
		if len(payEvents(t, o.Test, payEventSucceeded, paid.Id)) != 1 || len(payEvents(t, o.Test, payEventCanceled, canceled.Id)) != 1 {
			t.Fatal("payment_intent.succeeded or checkout.session.canceled was not written to the event list")
		}
		rc.waitFor(t, 1, hookWait, func(h hookHit) bool {
			return h.Header.Get("Service-Event-Type") == payEventCompleted && h.envelope(t).objectID() == paid.Id
		})
		time.Sleep(time.Second) // leave room for a stray delivery
		for _, h := range rc.got() {
			if typ := h.Header.Get("Service-Event-Type"); !slices.Contains(hookMerchantCatalog, typ) || h.envelope(t).Type != typ {
				t.Errorf("an endpoint subscribed to * received %s (body type %s), outside the merchant catalog", typ, h.envelope(t).Type)
			}
		}
	})

	harness.Rule(t, "D10", "a 302 is not an acknowledgement and is not followed: the delivery stays pending and is retried about 5 s later as attempt 2", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		var followed atomic.Int32
		elsewhere := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { followed.Add(1) }))
		t.Cleanup(elsewhere.Close)
		rc := newHookReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
			if n == 1 {
				http.Redirect(w, r, elsewhere.URL+"/moved", http.StatusFound)
			}
		})
		ep := hookEndpoint(t, o, dash.DashboardEnvironmentTest, rc.URL)
		sid := hookExpiredSession(t, o.Test)
		first := rc.waitFor(t, 1, hookWait, aboutObject(t, sid))[0]
		d := hookDeliveryOf(t, o, ep.Id, first.Header.Get("Service-Event-Id"))
		pending := hookWaitDelivery(t, o, d.Id, 3*time.Second, func(d *dash.WebhookDeliveryDetail) bool { return len(d.Attempts) >= 1 })
		if pending.Delivery.Status != dash.WebhookDeliveryStatusPending || pending.Delivery.NextAttemptAt == nil ||
			pending.Attempts[0].StatusCode == nil || *pending.Attempts[0].StatusCode != http.StatusFound {
			t.Fatalf("after a 302: delivery %+v, attempts %+v", pending.Delivery, pending.Attempts)
		}
		hits := rc.waitFor(t, 2, hookWait+15*time.Second, aboutObject(t, sid))
		if hits[1].Header.Get("Service-Delivery-Attempt") != "2" || hits[1].Header.Get("Service-Event-Id") != first.Header.Get("Service-Event-Id") {
			t.Fatalf("retry: attempt %q of %q", hits[1].Header.Get("Service-Delivery-Attempt"), hits[1].Header.Get("Service-Event-Id"))
		}
		if gap := hits[1].At.Sub(hits[0].At); gap < 4*time.Second || gap > 15*time.Second {
			t.Fatalf("retry came %s after the 302, want about 5 s (±10%%)", gap)
		}
		if n := followed.Load(); n != 0 {
			t.Fatalf("the sender followed the redirect (%d requests to its target)", n)
		}
		hookWaitDelivery(t, o, d.Id, 5*time.Second, func(d *dash.WebhookDeliveryDetail) bool {
			return d.Delivery.Status == dash.WebhookDeliveryStatusSucceeded && len(d.Attempts) == 2
		})
	})

	harness.Rule(t, "D10", "a 500 is not an acknowledgement: the event is retried about 5 s later as attempt 2, and the log shows both attempts", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		rc := newHookReceiver(t, func(n int, w http.ResponseWriter, _ *http.Request) {
			if n == 1 {
				w.WriteHeader(http.StatusInternalServerError)
				_, _ = w.Write([]byte("receiver database down"))
			}
		})
		ep := hookEndpoint(t, o, dash.DashboardEnvironmentTest, rc.URL)
		sid := hookExpiredSession(t, o.Test)
		hits := rc.waitFor(t, 2, hookWait+15*time.Second, aboutObject(t, sid))
		first, second := hits[0], hits[1]
		if first.Header.Get("Service-Delivery-Attempt") != "1" || second.Header.Get("Service-Delivery-Attempt") != "2" ||
			first.Header.Get("Service-Event-Id") != second.Header.Get("Service-Event-Id") || string(first.Body) != string(second.Body) {
			t.Fatalf("retry: attempts %q then %q", first.Header.Get("Service-Delivery-Attempt"), second.Header.Get("Service-Delivery-Attempt"))
		}
		if gap := second.At.Sub(first.At); gap < 4*time.Second || gap > 15*time.Second {
			t.Fatalf("retry came %s after the first attempt, want about 5 s (±10%%)", gap)
		}
		d := hookDeliveryOf(t, o, ep.Id, first.Header.Get("Service-Event-Id"))
		detail := hookWaitDelivery(t, o, d.Id, 5*time.Second, func(d *dash.WebhookDeliveryDetail) bool {
			return d.Delivery.Status == dash.WebhookDeliveryStatusSucceeded
		})
		if detail.Delivery.Attempts != 2 || len(detail.Attempts) != 2 || detail.Delivery.CompletedAt == nil || detail.Delivery.NextAttemptAt != nil {
			t.Fatalf("delivery %+v, %d attempts", detail.Delivery, len(detail.Attempts))
		}
		a1, a2 := detail.Attempts[0], detail.Attempts[1]
		if a1.Number != 1 || a1.StatusCode == nil || *a1.StatusCode != 500 || a1.ResponseExcerpt != "receiver database down" || a1.Error != nil ||
			a2.Number != 2 || a2.StatusCode == nil || *a2.StatusCode != 200 || a2.LatencyMs < 0 || a2.StartedAt < a1.StartedAt {
			t.Fatalf("attempts %+v %+v", a1, a2)
		}
	})

	harness.Rule(t, "D10", "no answer within 10 s is a timeout: the attempt is recorded with its error and the event is retried", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		rc := newHookReceiver(t, func(n int, _ http.ResponseWriter, r *http.Request) {
			if n == 1 {
				select { // hang past the sender's 10 s timeout
				case <-r.Context().Done():
				case <-time.After(13 * time.Second):
				}
			}
		})
		ep := hookEndpoint(t, o, dash.DashboardEnvironmentTest, rc.URL)
		sid := hookExpiredSession(t, o.Test)
		hits := rc.waitFor(t, 2, hookWait+25*time.Second, aboutObject(t, sid))
		if hits[1].Header.Get("Service-Delivery-Attempt") != "2" {
			t.Fatalf("second request is attempt %q", hits[1].Header.Get("Service-Delivery-Attempt"))
		}
		d := hookDeliveryOf(t, o, ep.Id, hits[0].Header.Get("Service-Event-Id"))
		detail := hookWaitDelivery(t, o, d.Id, 5*time.Second, func(d *dash.WebhookDeliveryDetail) bool {
			return d.Delivery.Status == dash.WebhookDeliveryStatusSucceeded
		})
		a1 := detail.Attempts[0]
		if a1.StatusCode != nil || a1.Error == nil || !strings.Contains(*a1.Error, "timeout") || a1.LatencyMs < 9000 || a1.LatencyMs > 12000 {
			t.Fatalf("timed-out attempt %+v (error %v)", a1, deref(a1.Error))
		}
	})

	harness.Rule(t, "D10", "a receiver that does not answer holds back no other endpoint: another merchant's delivery goes out while it hangs, and that delivery's retry comes on schedule", func(t *testing.T) {
		t.Parallel()
		// On a server of its own (its own database, so one delivery worker) with two merchants:
		// the slow merchant's receiver hangs until the sender's 10 s timeout; the other's
		// receiver holds its first request open until the slow receiver's request has arrived,
		// then answers 500. So the slow request is sent while the other's first request is in
		// flight, and the other's retry (5 s ±10 % after its 500) falls due while the slow
		// request still hangs, however long the steps before took.
		srv, _ := idemLone(t, "webhook-hang-isolation", nil)
		slow, other := newDashOwnerAt(t, srv), newDashOwnerAt(t, srv)
		slowArrived := make(chan struct{})
		var arrived sync.Once
		rcSlow := newHookReceiver(t, func(n int, _ http.ResponseWriter, r *http.Request) {
			if n == 1 {
				arrived.Do(func() { close(slowArrived) })
				select { // hang past the sender's 10 s timeout
				case <-r.Context().Done():
				case <-time.After(13 * time.Second):
				}
			}
		})
		answered := make(chan time.Time, 1) // when the other receiver answered its first request
		var heldUntilSlow atomic.Bool
		rcOther := newHookReceiver(t, func(n int, w http.ResponseWriter, _ *http.Request) {
			if n == 1 {
				select {
				case <-slowArrived:
					heldUntilSlow.Store(true)
				case <-time.After(9 * time.Second): // within the other's own 10 s
				}
				answered <- time.Now()
				w.WriteHeader(http.StatusInternalServerError)
			}
		})
		hookEndpoint(t, slow, dash.DashboardEnvironmentTest, rcSlow.URL)
		hookEndpoint(t, other, dash.DashboardEnvironmentTest, rcOther.URL)
		otherSession := hookExpiredSession(t, other.Test)
		rcOther.waitFor(t, 1, hookWait, aboutObject(t, otherSession))
		slowSession := hookExpiredSession(t, slow.Test)
		rcSlow.waitFor(t, 1, hookWait, aboutObject(t, slowSession))
		hits := rcOther.waitFor(t, 2, hookWait, aboutObject(t, otherSession))
		if !heldUntilSlow.Load() {
			t.Fatalf("the slow merchant's delivery was not sent while the other merchant's request was in flight (the other receiver waited 9 s for it)")
		}
		if hits[1].Header.Get("Service-Delivery-Attempt") != "2" {
			t.Fatalf("second request is attempt %q", hits[1].Header.Get("Service-Delivery-Attempt"))
		}
		// Due 4.5–5.5 s after the 500 was recorded. The server's clock reads whole seconds, so
		// the claim sees it at the 5th or 6th whole second after the one the 500 was recorded
		// in: 4–6 s after the 500. A worker that let the slow request hold it back could not send
		// it before that request's timeout, 10 s after it arrived (when the 500 was answered).
		// 9 s leaves 3 s past the latest due time for a loaded machine to claim and send it, and
		// stays below those 10 s.
		gap := hits[1].At.Sub(<-answered)
		if gap < 4*time.Second || gap > 9*time.Second {
			t.Fatalf("retry came %s after the 500, want about 5 s (±10%%) while the other receiver hung", gap)
		}
		t.Logf("retry %s after the 500", gap)
	})

	harness.Rule(t, "D10", "410 Gone disables the endpoint (endpoint_gone): nothing more is sent until it is enabled again", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		rc := newHookReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusGone) })
		ep := hookEndpoint(t, o, dash.DashboardEnvironmentTest, rc.URL)
		sid := hookExpiredSession(t, o.Test)
		h := rc.waitFor(t, 1, hookWait, aboutObject(t, sid))[0]
		d := hookDeliveryOf(t, o, ep.Id, h.Header.Get("Service-Event-Id"))
		hookWaitDelivery(t, o, d.Id, 5*time.Second, func(d *dash.WebhookDeliveryDetail) bool {
			return d.Delivery.Status == dash.WebhookDeliveryStatusDisabled
		})
		got, err := o.Client.GetWebhookEndpointWithResponse(context.Background(), dash.DashboardEnvironmentTest, ep.Id)
		if err != nil {
			t.Fatal(err)
		}
		if got.JSON200 == nil || got.JSON200.Status != dash.WebhookEndpointStatusDisabled || got.JSON200.DisabledReason == nil ||
			*got.JSON200.DisabledReason != dash.WebhookEndpointDisabledReasonEndpointGone {
			t.Fatalf("endpoint after 410: %d %s", got.StatusCode(), got.Body)
		}
		// Later events are not delivered; a test event and a redelivery are refused.
		hookExpiredSession(t, o.Test)
		test, err := o.Client.SendWebhookTestEventWithResponse(context.Background(), dash.DashboardEnvironmentTest, ep.Id)
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, test, test.HTTPResponse, test.Body, 422, "invalid_state", "webhook_endpoint_disabled", "")
		re, err := o.Client.RedeliverWebhookDeliveryWithResponse(context.Background(), dash.DashboardEnvironmentTest, d.Id)
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, re, re.HTTPResponse, re.Body, 422, "invalid_state", "webhook_endpoint_disabled", "")
		time.Sleep(time.Second)
		if n := len(rc.got()); n != 1 {
			t.Fatalf("a disabled endpoint received %d requests", n)
		}
		// Enabled again (and answering 200), it receives new events.
		rc.setRespond(nil)
		en, err := o.Client.EnableWebhookEndpointWithResponse(context.Background(), dash.DashboardEnvironmentTest, ep.Id)
		if err != nil {
			t.Fatal(err)
		}
		if en.JSON200 == nil || en.JSON200.Status != dash.WebhookEndpointStatusEnabled || en.JSON200.DisabledReason != nil {
			t.Fatalf("enable: %d %s", en.StatusCode(), en.Body)
		}
		sid3 := hookExpiredSession(t, o.Test)
		rc.waitFor(t, 1, hookWait, aboutObject(t, sid3))
	})

	harness.Rule(t, "D10", "a delivery can be redelivered by hand: the same event and body under the next attempt number", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		rc := newHookReceiver(t, nil)
		ep := hookEndpoint(t, o, dash.DashboardEnvironmentTest, rc.URL)
		sid := hookExpiredSession(t, o.Test)
		first := rc.waitFor(t, 1, hookWait, aboutObject(t, sid))[0]
		evt := first.Header.Get("Service-Event-Id")
		d := hookDeliveryOf(t, o, ep.Id, evt)
		hookWaitDelivery(t, o, d.Id, 5*time.Second, func(d *dash.WebhookDeliveryDetail) bool {
			return d.Delivery.Status == dash.WebhookDeliveryStatusSucceeded
		})
		resp, err := o.Client.RedeliverWebhookDeliveryWithResponse(context.Background(), dash.DashboardEnvironmentTest, d.Id)
		if err != nil {
			t.Fatal(err)
		}
		if resp.JSON202 == nil || resp.JSON202.Id != d.Id || resp.JSON202.Status != dash.WebhookDeliveryStatusPending ||
			resp.JSON202.NextAttemptAt == nil || resp.JSON202.CompletedAt != nil {
			t.Fatalf("redeliver: %d %s", resp.StatusCode(), resp.Body)
		}
		hits := rc.waitFor(t, 2, hookWait, forEvent(evt))
		if hits[1].Header.Get("Service-Delivery-Attempt") != "2" || string(hits[1].Body) != string(first.Body) {
			t.Fatalf("redelivered attempt %q", hits[1].Header.Get("Service-Delivery-Attempt"))
		}
		if !hookSignedBy(t, hits[1], ep.Secret) {
			t.Fatal("redelivery is not signed with the endpoint's secret")
		}
		detail := hookWaitDelivery(t, o, d.Id, 5*time.Second, func(d *dash.WebhookDeliveryDetail) bool {
			return d.Delivery.Status == dash.WebhookDeliveryStatusSucceeded && len(d.Attempts) == 2
		})
		if detail.Delivery.Attempts != 2 {
			t.Fatalf("delivery after redelivery %+v", detail.Delivery)
		}
	})

	harness.Rule(t, "D10", "after a rotation deliveries carry two v1 signatures for 24 h, one per secret, each verifying with its secret", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		rc := newHookReceiver(t, nil)
		ep := hookEndpoint(t, o, dash.DashboardEnvironmentTest, rc.URL)
		rot, err := o.Client.RotateWebhookEndpointSecretWithResponse(context.Background(), dash.DashboardEnvironmentTest, ep.Id)
		if err != nil {
			t.Fatal(err)
		}
		if rot.JSON200 == nil || !strings.HasPrefix(rot.JSON200.Secret, "whsec_") || rot.JSON200.Secret == ep.Secret {
			t.Fatalf("rotate: %d %s", rot.StatusCode(), rot.Body)
		}
		exp := rot.JSON200.PreviousSecretExpiresAt
		if exp == nil || *exp < time.Now().Add(24*time.Hour-time.Minute).Unix() || *exp > time.Now().Add(24*time.Hour+time.Minute).Unix() {
			t.Fatalf("previous_secret_expires_at %v, want now + 24 h", exp)
		}
		sid := hookExpiredSession(t, o.Test)
		h := rc.waitFor(t, 1, hookWait, aboutObject(t, sid))[0]
		sig := h.Header.Get("Service-Signature")
		if _, v1 := hookSignatures(t, sig); len(v1) != 2 {
			t.Fatalf("Service-Signature %q: want two v1 during the overlap", sig)
		}
		for _, secret := range []string{ep.Secret, rot.JSON200.Secret} {
			if !hookSignedBy(t, h, secret) {
				t.Errorf("no v1 made with secret %s…", secret[:12])
			}
			if _, err := webhook.ConstructEvent(h.Body, sig, secret); err != nil {
				t.Errorf("SDK verifier with secret %s…: %v", secret[:12], err)
			}
		}
	})

	harness.Rule(t, "D10", "a test event (webhook.test) goes to that endpoint only, whatever it subscribes to, signed like any delivery, and is not in GET /v1/events", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		rc := newHookReceiver(t, nil)
		other := newHookReceiver(t, nil)
		ep := hookEndpoint(t, o, dash.DashboardEnvironmentTest, rc.URL, "invoice.paid")
		hookEndpoint(t, o, dash.DashboardEnvironmentTest, other.URL, "*")
		resp, err := o.Client.SendWebhookTestEventWithResponse(context.Background(), dash.DashboardEnvironmentTest, ep.Id)
		if err != nil {
			t.Fatal(err)
		}
		d := resp.JSON202
		if d == nil || d.EventType != "webhook.test" || d.EndpointId != ep.Id || d.Status != dash.WebhookDeliveryStatusPending || d.Attempts != 0 {
			t.Fatalf("test event: %d %s", resp.StatusCode(), resp.Body)
		}
		h := rc.waitFor(t, 1, hookWait, forEvent(d.EventId))[0]
		if !hookSignedBy(t, h, ep.Secret) || h.Header.Get("Service-Event-Type") != "webhook.test" || h.envelope(t).Type != "webhook.test" ||
			h.envelope(t).objectID() != ep.Id {
			t.Fatalf("test delivery: headers %v body %s", h.Header, h.Body)
		}
		if strings.Contains(string(h.Body), ep.Secret) {
			t.Fatal("the test event carries the secret")
		}
		time.Sleep(500 * time.Millisecond)
		if n := len(other.got()); n != 0 {
			t.Fatalf("another endpoint received %d requests", n)
		}
		ev, err := o.Test.RetrieveEventWithResponse(context.Background(), d.EventId)
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, ev, ev.HTTPResponse, ev.Body, 404, "not_found", "event_not_found", "id")
		hookWaitDelivery(t, o, d.Id, 5*time.Second, func(d *dash.WebhookDeliveryDetail) bool {
			return d.Delivery.Status == dash.WebhookDeliveryStatusSucceeded && len(d.Attempts) == 1
		})
	})
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
