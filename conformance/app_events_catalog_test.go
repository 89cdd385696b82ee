package conformance

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/conformance/harness"
	capi "github.com/kassa-pay/kassa/openapi/gen/checkoutapi"
	op "github.com/kassa-pay/kassa/openapi/gen/operatorapi"
)

// Every app event of interface 6.2 is written where its change happens and reaches an app
// endpoint subscribed to it, not one subscribed to the other types, and not an installation
// whose scopes cannot read its object. (customer.subscription.deleted comes with
// subscriptions.)

// appEventCatalog is the app catalog (interface 6.2).
var appEventCatalog = []string{
	"checkout.session.completed", "checkout.session.expired", "checkout.session.canceled",
	"checkout.session.async_payment_pending", "checkout.session.async_payment_failed", "checkout.session.refunded",
	"payment_intent.succeeded", "payment_intent.payment_failed", "payment_intent.requires_action",
	"payment_intent.canceled", "invoice.payment_failed", "customer.subscription.deleted",
}

// appEventProducers cause one event of each type for the owner's test environment and return
// the id its body names (the checkout session or the invoice).
var appEventProducers = map[string]func(t *testing.T, o *DashOwner) string{
	"checkout.session.completed": appPaidSession,
	"payment_intent.succeeded":   appPaidSession,
	"checkout.session.expired":   func(t *testing.T, o *DashOwner) string { return hookExpiredSession(t, o.Test) },
	"checkout.session.canceled": func(t *testing.T, o *DashOwner) string {
		s := paySession(t, o.Merchant)
		if r := payCancel(t, s); r.StatusCode() >= 400 {
			t.Fatalf("cancel: %d %s", r.StatusCode(), r.Body)
		}
		return s.Id
	},
	"checkout.session.async_payment_pending": func(t *testing.T, o *DashOwner) string {
		return asyncPay(t, o.Merchant, payIBANOK).Id
	},
	"checkout.session.async_payment_failed": func(t *testing.T, o *DashOwner) string {
		clockFreeze(t, o.Test)
		s := asyncPay(t, o.Merchant, payIBANFailsLater)
		clockAdvance(t, o.Test, asyncSettleDelay+5)
		return s.Id
	},
	"checkout.session.refunded": func(t *testing.T, o *DashOwner) string {
		id := appPaidSession(t, o)
		refundOK(t, o, csGet(t, o.Test, id).Payment.Id, ptr(int64(300)))
		return id
	},
	"payment_intent.payment_failed": func(t *testing.T, o *DashOwner) string {
		s := paySession(t, o.Merchant)
		if r := payConfirm(t, s, payCard(payCardDecline)); r.StatusCode() != http.StatusPaymentRequired {
			t.Fatalf("decline: %d %s", r.StatusCode(), r.Body)
		}
		return s.Id
	},
	"payment_intent.requires_action": func(t *testing.T, o *DashOwner) string {
		s := paySession(t, o.Merchant)
		payConfirmOK(t, s, payCard(payCard3DS), capi.ConfirmResultStatusRequiresAction)
		return s.Id
	},
	"payment_intent.canceled": func(t *testing.T, o *DashOwner) string {
		s := paySession(t, o.Merchant)
		payConfirmOK(t, s, payCard(payCard3DS), capi.ConfirmResultStatusRequiresAction)
		if r := payCancel(t, s); r.StatusCode() >= 400 {
			t.Fatalf("cancel: %d %s", r.StatusCode(), r.Body)
		}
		return s.Id
	},
	"invoice.payment_failed": func(t *testing.T, o *DashOwner) string {
		inv := sendInvoice(t, o, newDraft(t, o, freeLine("Work", 2, 1000, "19")).Id)
		if code, _, _ := hostedPost(t, "/i/"+*inv.PublicToken+"/pay", cardForm(payCardDecline)); code != http.StatusPaymentRequired {
			t.Fatalf("decline: %d", code)
		}
		return inv.Id
	},
}

// appPaidSession pays a session with a card that succeeds.
func appPaidSession(t *testing.T, o *DashOwner) string {
	t.Helper()
	s := paySession(t, o.Merchant)
	payConfirmOK(t, s, payCard(payCardOK), capi.ConfirmResultStatusSucceeded)
	return s.Id
}

// appEventOf matches deliveries of type typ that name id.
func appEventOf(t *testing.T, typ, id string) func(hookHit) bool {
	return func(h hookHit) bool {
		return h.Header.Get("Service-Event-Type") == typ && strings.Contains(string(h.Body), id)
	}
}

func TestAppEventCatalog(t *testing.T) {
	t.Parallel()
	payNeedsCheckout(t)
	for _, typ := range appEventCatalog {
		produce := appEventProducers[typ]
		if produce == nil {
			continue // customer.subscription.deleted: written by subscriptions
		}
		harness.Rule(t, "D17", typ+" reaches an app endpoint subscribed to it, not one subscribed to the other types, nor an installation without the scope to read it", func(t *testing.T) {
			t.Parallel()
			o := newDashOwner(t)
			scope, blindScope := op.AppScope("payments:read"), op.AppScope("invoices:read")
			if strings.HasPrefix(typ, "invoice.") {
				scope, blindScope = blindScope, scope
			}
			a := appHookInstall(t, o.ID, scope)
			blind := appHookInstall(t, o.ID, blindScope, "merchant:read")
			want, other, rcBlind := newHookReceiver(t, nil), newHookReceiver(t, nil), newHookReceiver(t, nil)
			ep := appHookEndpoint(t, a.ID, want.URL, typ)
			others := slices.DeleteFunc(slices.Clone(appEventCatalog), func(s string) bool { return s == typ })
			appHookEndpoint(t, a.ID, other.URL, others...)
			appHookEndpoint(t, blind.ID, rcBlind.URL, "*")
			id := produce(t, o)
			h := want.waitFor(t, 1, hookWait, appEventOf(t, typ, id))[0]
			wantAppEventBody(t, h.Body)
			e := h.appEnvelope(t)
			if e.Installation != a.Installation || e.Type != typ || !hookSignedBy(t, h, ep.Secret) {
				t.Fatalf("delivery %s", h.Body)
			}
			if typ == "checkout.session.canceled" && !strings.Contains(string(e.Data.Object), `"cancellation_reason":"customer_canceled"`) {
				t.Fatalf("canceled without its cancellation_reason: %s", e.Data.Object)
			}
			time.Sleep(time.Second)
			for _, h := range want.got() {
				if got := h.Header.Get("Service-Event-Type"); got != typ {
					t.Fatalf("delivered %s to an endpoint subscribed to %s", got, typ)
				}
			}
			for _, h := range other.got() {
				if h.Header.Get("Service-Event-Type") == typ {
					t.Fatalf("%s reached an endpoint not subscribed to it", typ)
				}
			}
			for _, h := range rcBlind.got() {
				if h.Header.Get("Service-Event-Type") == typ {
					t.Fatalf("%s reached an installation without %s", typ, scope)
				}
			}
		})
	}

	harness.Rule(t, "D17", "a completed checkout fires both payment_intent.succeeded and checkout.session.completed to an app subscribed to both", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		a := appHookInstall(t, o.ID, "payments:read")
		rc := newHookReceiver(t, nil)
		appHookEndpoint(t, a.ID, rc.URL, "checkout.session.completed", "payment_intent.succeeded")
		id := appPaidSession(t, o)
		rc.waitFor(t, 1, hookWait, appEventOf(t, "checkout.session.completed", id))
		rc.waitFor(t, 1, hookWait, appEventOf(t, "payment_intent.succeeded", id))
	})

	harness.Rule(t, "D17", "payment_intent.canceled is written when a charge waiting on 3-D Secure is abandoned: by a new charge, or by the session expiring", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		a := appHookInstall(t, o.ID, "payments:read")
		rc := newHookReceiver(t, nil)
		appHookEndpoint(t, a.ID, rc.URL, "payment_intent.canceled")
		retried := paySession(t, o.Merchant)
		payConfirmOK(t, retried, payCard(payCard3DS), capi.ConfirmResultStatusRequiresAction)
		payConfirmOK(t, retried, payCard(payCardOK), capi.ConfirmResultStatusSucceeded)
		expired := paySession(t, o.Merchant)
		payConfirmOK(t, expired, payCard(payCard3DS), capi.ConfirmResultStatusRequiresAction)
		if r, err := o.Test.ExpireCheckoutSessionWithResponse(context.Background(), expired.Id, nil); err != nil || r.JSON200 == nil {
			t.Fatalf("expire: %v", err)
		}
		for _, id := range []string{retried.Id, expired.Id} {
			h := rc.waitFor(t, 1, hookWait, appEventOf(t, "payment_intent.canceled", id))[0]
			wantAppEventBody(t, h.Body)
			if !strings.Contains(string(h.Body), `"status":"canceled"`) {
				t.Fatalf("canceled charge: %s", h.Body)
			}
		}
	})
}
