package conformance

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/conformance/harness"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
)

// The address rule of webhook targets (issue 11 §1): without the development flag
// (KASSA_WEBHOOK_ALLOW_PRIVATE, which --dev and --demo set) no endpoint, test mode included,
// may point at loopback, private, link-local or metadata addresses. The suite's own servers run
// with the flag (its receivers listen on 127.0.0.1); these cases start servers without it.

// strictHookEnv is a server that applies the address rule.
var strictHookEnv = map[string]string{
	"KASSA_WEBHOOK_ALLOW_PRIVATE": "false", "KASSA_RATE_TEST": "300", "KASSA_RATE_LIVE": "600",
}

// internalBody is what the "internal service" answers; it must never show in a delivery log.
const internalBody = "internal-service: db password hunter2"

func TestWebhookAddressRule(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	harness.Rule(t, "WH", "without the development flag, an endpoint at a loopback, private, link-local, CGNAT, multicast, unspecified or metadata address is refused on create and update with 400 url_not_public, test mode included", func(t *testing.T) {
		t.Parallel()
		if !target.CanLaunchSiblings() {
			t.Skip("needs a server started without the development flag, which the harness can only start for a target it started itself")
		}
		// On a database of its own: a server without the flag on the suite's database would
		// claim the other cases' deliveries to their loopback receivers and record them refused.
		strict, drop, err := target.Lone(ctx, "webhooks-address-rule", harness.Options{Env: strictHookEnv})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(drop)
		t.Cleanup(strict.Stop)
		o := newDashOwnerAt(t, strict)
		test, live := dash.DashboardEnvironmentTest, dash.DashboardEnvironmentLive
		refused := []struct {
			env dash.Env
			url string
		}{
			{test, "http://127.0.0.1:8080/hooks"},
			{test, "http://localhost:8080/hooks"},
			{test, "http://[::1]/hooks"},
			{test, "http://10.1.2.3/hooks"},
			{test, "http://192.168.0.10/hooks"},
			{test, "http://172.16.5.4/hooks"},
			{test, "http://100.64.0.1/hooks"},
			{test, "http://0.0.0.0:8080/hooks"},
			{test, "http://[fe80::1]/hooks"},
			{test, "http://[ff02::1]/hooks"},
			{test, "http://[::ffff:127.0.0.1]/hooks"},
			{test, "http://2130706433/hooks"},
			{live, "https://169.254.169.254/latest/meta-data/"},
			{live, "https://[fd00:ec2::254]/latest/meta-data/"},
			{live, "https://localhost/hooks"},
		}
		for _, c := range refused {
			r, err := o.Client.CreateWebhookEndpointWithResponse(ctx, c.env, dash.WebhookEndpointCreate{Url: c.url, EnabledEvents: []string{"*"}})
			if err != nil {
				t.Fatal(err)
			}
			if r.StatusCode() != 400 {
				t.Fatalf("create %s (%s): %d %s", c.url, c.env, r.StatusCode(), r.Body)
			}
			wantErr(t, r, r.HTTPResponse, r.Body, 400, "invalid_request", "url_not_public", "url")
		}
		// A public name is accepted, and changing it to a loopback address is refused.
		ep := hookEndpoint(t, o, test, "https://shop.example/hooks")
		up, err := o.Client.UpdateWebhookEndpointWithResponse(ctx, test, ep.Id, dash.WebhookEndpointUpdate{Url: ptr("http://127.0.0.1:9/hooks")})
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, up, up.HTTPResponse, up.Body, 400, "invalid_request", "url_not_public", "url")
		get, err := o.Client.GetWebhookEndpointWithResponse(ctx, test, ep.Id)
		if err != nil {
			t.Fatal(err)
		}
		if get.JSON200 == nil || get.JSON200.Url != "https://shop.example/hooks" {
			t.Fatalf("after a refused update: %d %s", get.StatusCode(), get.Body)
		}
		// With the development flag (the suite's server) the same loopback URL is accepted.
		hookEndpoint(t, newDashOwner(t), test, "http://127.0.0.1:8080/hooks")
	})

	harness.Rule(t, "WH", "without the development flag, a delivery to a name that resolves to loopback (an endpoint saved while the flag was on) is refused at connect time: the internal service gets no request and the delivery log shows the refusal and no body", func(t *testing.T) {
		t.Parallel()
		if !target.CanLaunchSiblings() {
			t.Skip("needs servers of its own on a fresh database, with and without the development flag")
		}
		// An "internal service" on loopback that would answer with something private.
		internal := newHookReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
			io.WriteString(w, internalBody)
		})
		// First server, with the flag: the endpoint is saved with a name ("localhost") that
		// resolves to 127.0.0.1. Then it stops, and a server without the flag takes over its
		// database: only that one can send.
		first, drop, err := target.Lone(ctx, "webhooks-address-rule-dev", harness.Options{Env: hookServerEnv})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(drop)
		o := newDashOwnerAt(t, first)
		hookURL := strings.Replace(internal.URL, "127.0.0.1", "localhost", 1)
		ep := hookEndpoint(t, o, dash.DashboardEnvironmentTest, hookURL, "checkout.session.expired")
		first.Stop()

		strict, err := first.Sibling(ctx, "webhooks-address-rule-strict", harness.Options{Env: strictHookEnv})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(strict.Stop)
		o = o.at(t, strict)
		sent, err := o.Client.SendWebhookTestEventWithResponse(ctx, dash.DashboardEnvironmentTest, ep.Id)
		if err != nil {
			t.Fatal(err)
		}
		if sent.JSON202 == nil {
			t.Fatalf("send test event: %d %s", sent.StatusCode(), sent.Body)
		}
		d := hookWaitDelivery(t, o, sent.JSON202.Id, 20*time.Second, func(d *dash.WebhookDeliveryDetail) bool {
			return len(d.Attempts) > 0 && (d.Attempts[0].Error != nil || d.Attempts[0].StatusCode != nil)
		})
		a := d.Attempts[0]
		if a.StatusCode != nil || a.Error == nil || !strings.Contains(*a.Error, "not public") || a.ResponseExcerpt != "" {
			t.Fatalf("attempt to a loopback name: status %v, error %v, excerpt %q; want refused before connecting", a.StatusCode, a.Error, a.ResponseExcerpt)
		}
		if d.Delivery.Status == dash.WebhookDeliveryStatusSucceeded {
			t.Fatalf("the delivery to loopback succeeded: %+v", d.Delivery)
		}
		if n := len(internal.got()); n != 0 {
			t.Fatalf("the internal service got %d requests", n)
		}
		for _, b := range [][]byte{mustGetDeliveryBody(t, o, d.Delivery.Id)} {
			if strings.Contains(string(b), "hunter2") {
				t.Fatalf("the delivery log shows the internal service's body: %s", b)
			}
		}
	})
}

// mustGetDeliveryBody is the raw body of the dashboard's delivery detail.
func mustGetDeliveryBody(t *testing.T, o *DashOwner, id string) []byte {
	t.Helper()
	r, err := o.Client.GetWebhookDeliveryWithResponse(context.Background(), dash.DashboardEnvironmentTest, id)
	if err != nil {
		t.Fatal(err)
	}
	return r.Body
}
