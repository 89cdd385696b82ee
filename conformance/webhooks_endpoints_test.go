package conformance

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/conformance/harness"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
)

// Managing webhook endpoints through the dashboard API, the delivery log, and the isolation of
// endpoints and deliveries between merchants and environments.

func TestWebhookEndpoints(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	test, live := dash.DashboardEnvironmentTest, dash.DashboardEnvironmentLive

	harness.Rule(t, "WH", "create answers the endpoint with its whsec_ secret once; list and read never show a secret", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		ep := hookEndpoint(t, o, test, "http://127.0.0.1:9/hooks", "checkout.session.completed", "checkout.session.expired")
		if !strings.HasPrefix(ep.Id, "we_") || ep.Object != "webhook_endpoint" || ep.Mode != test || ep.Url != "http://127.0.0.1:9/hooks" ||
			fmt.Sprint(ep.EnabledEvents) != "[checkout.session.completed checkout.session.expired]" || ep.Description != "conformance receiver" ||
			ep.Status != "enabled" || ep.DisabledReason != nil || ep.FailingSince != nil || ep.PreviousSecretExpiresAt != nil ||
			ep.Created < time.Now().Add(-time.Minute).Unix() {
			t.Fatalf("created %+v", ep)
		}
		secretPart := strings.TrimPrefix(ep.Secret, "whsec_")
		get, err := o.Client.GetWebhookEndpointWithResponse(ctx, test, ep.Id)
		if err != nil {
			t.Fatal(err)
		}
		list, err := o.Client.ListWebhookEndpointsWithResponse(ctx, test)
		if err != nil {
			t.Fatal(err)
		}
		if get.JSON200 == nil || get.JSON200.Id != ep.Id || list.JSON200 == nil || len(list.JSON200.Data) != 1 || list.JSON200.Data[0].Id != ep.Id {
			t.Fatalf("read %d %s; list %d %s", get.StatusCode(), get.Body, list.StatusCode(), list.Body)
		}
		for _, body := range [][]byte{get.Body, list.Body} {
			if strings.Contains(string(body), secretPart) || strings.Contains(string(body), "secret\"") {
				t.Fatalf("a read shows the secret: %s", body)
			}
		}
	})

	harness.Rule(t, "WH", "bad endpoint input is 400 with the documented envelope (live needs https, unknown event types, credentials in the url, missing fields)", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		post := func(env dash.Env, body string) *dash.CreateWebhookEndpointResponse {
			r, err := o.Client.CreateWebhookEndpointWithBodyWithResponse(ctx, env, "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		cases := []struct {
			env                dash.Env
			body               string
			code, param, label string
		}{
			{live, `{"url":"http://shop.example/hooks","enabled_events":["*"]}`, "url_invalid", "url", "http in live"},
			{test, `{"url":"shop.example/hooks","enabled_events":["*"]}`, "url_invalid", "url", "not absolute"},
			{test, `{"url":"https://user:pw@shop.example/hooks","enabled_events":["*"]}`, "url_invalid", "url", "credentials"},
			{test, `{"url":"https://shop.example/hooks","enabled_events":["checkout.session.completed","payment_intent.succeeded"]}`, "enabled_events_invalid", "enabled_events.1", "app-only event"},
			{test, `{"url":"https://shop.example/hooks","enabled_events":["no.such.event"]}`, "enabled_events_invalid", "enabled_events.0", "unknown event"},
			{test, `{"url":"https://shop.example/hooks"}`, "parameter_missing", "enabled_events", "no events"},
			{test, `{"enabled_events":["*"]}`, "parameter_missing", "url", "no url"},
			{test, `{"url":"https://shop.example/hooks","enabled_events":["*"],"secret":"whsec_mine"}`, "parameter_unknown", "secret", "unknown field"},
		}
		for _, c := range cases {
			r := post(c.env, c.body)
			if r.StatusCode() != 400 {
				t.Fatalf("%s: %d %s", c.label, r.StatusCode(), r.Body)
			}
			wantErr(t, r, r.HTTPResponse, r.Body, 400, "invalid_request", c.code, c.param)
		}
		// https in live is fine (whether the host is public is checked when sending).
		if r := post(live, `{"url":"https://shop.example/hooks","enabled_events":["*"]}`); r.JSON201 == nil || r.JSON201.Mode != live {
			t.Fatalf("live https endpoint: %d %s", r.StatusCode(), r.Body)
		}
	})

	harness.Rule(t, "WH", "update changes only the fields given, checked as on create; delete removes the endpoint (then 404)", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		ep := hookEndpoint(t, o, test, "https://shop.example/a", "checkout.session.expired")
		up, err := o.Client.UpdateWebhookEndpointWithResponse(ctx, test, ep.Id, dash.WebhookEndpointUpdate{EnabledEvents: &[]string{"*"}})
		if err != nil {
			t.Fatal(err)
		}
		if up.JSON200 == nil || fmt.Sprint(up.JSON200.EnabledEvents) != "[*]" || up.JSON200.Url != ep.Url || up.JSON200.Description != ep.Description {
			t.Fatalf("update events: %d %s", up.StatusCode(), up.Body)
		}
		up, err = o.Client.UpdateWebhookEndpointWithResponse(ctx, test, ep.Id, dash.WebhookEndpointUpdate{Url: ptr("https://shop.example/b"), Description: ptr("")})
		if err != nil {
			t.Fatal(err)
		}
		if up.JSON200 == nil || up.JSON200.Url != "https://shop.example/b" || up.JSON200.Description != "" || fmt.Sprint(up.JSON200.EnabledEvents) != "[*]" {
			t.Fatalf("update url: %d %s", up.StatusCode(), up.Body)
		}
		bad, err := o.Client.UpdateWebhookEndpointWithResponse(ctx, test, ep.Id, dash.WebhookEndpointUpdate{EnabledEvents: &[]string{"charge.refunded", "nope"}})
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, bad, bad.HTTPResponse, bad.Body, 400, "invalid_request", "enabled_events_invalid", "enabled_events.1")
		del, err := o.Client.DeleteWebhookEndpointWithResponse(ctx, test, ep.Id)
		if err != nil {
			t.Fatal(err)
		}
		if del.StatusCode() != 204 {
			t.Fatalf("delete: %d %s", del.StatusCode(), del.Body)
		}
		get, err := o.Client.GetWebhookEndpointWithResponse(ctx, test, ep.Id)
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, get, get.HTTPResponse, get.Body, 404, "not_found", "webhook_endpoint_not_found", "id")
	})

	harness.Rule(t, "WH", "disable by the merchant (disabled_by_merchant) and enable again", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		ep := hookEndpoint(t, o, test, "https://shop.example/hooks")
		dis, err := o.Client.DisableWebhookEndpointWithResponse(ctx, test, ep.Id)
		if err != nil {
			t.Fatal(err)
		}
		if dis.JSON200 == nil || dis.JSON200.Status != "disabled" || dis.JSON200.DisabledReason == nil ||
			*dis.JSON200.DisabledReason != dash.WebhookEndpointDisabledReasonDisabledByMerchant {
			t.Fatalf("disable: %d %s", dis.StatusCode(), dis.Body)
		}
		en, err := o.Client.EnableWebhookEndpointWithResponse(ctx, test, ep.Id)
		if err != nil {
			t.Fatal(err)
		}
		if en.JSON200 == nil || en.JSON200.Status != "enabled" || en.JSON200.DisabledReason != nil {
			t.Fatalf("enable: %d %s", en.StatusCode(), en.Body)
		}
	})

	harness.Rule(t, "WH", "at most 16 endpoints per environment (400 endpoint_limit_reached)", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		for i := range 16 {
			hookEndpoint(t, o, test, fmt.Sprintf("https://shop.example/%d", i))
		}
		r, err := o.Client.CreateWebhookEndpointWithResponse(ctx, test, dash.WebhookEndpointCreate{Url: "https://shop.example/17", EnabledEvents: []string{"*"}})
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, r, r.HTTPResponse, r.Body, 400, "invalid_request", "endpoint_limit_reached", "")
		hookEndpoint(t, o, live, "https://shop.example/live") // the other environment has its own limit
	})

	harness.Rule(t, "WH", "unsafe webhook routes need the CSRF token (403 csrf_token_invalid) and every route a session (401 session_required)", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		ep := hookEndpoint(t, o, test, "https://shop.example/hooks")
		r, err := o.Client.RotateWebhookEndpointSecretWithResponse(ctx, test, ep.Id, csrfHeader(""))
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, r, r.HTTPResponse, r.Body, 403, "permission_error", "csrf_token_invalid", "")
		c, err := o.Client.CreateWebhookEndpointWithResponse(ctx, test, dash.WebhookEndpointCreate{Url: "https://shop.example/x", EnabledEvents: []string{"*"}},
			csrfHeader("not-the-token"))
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, c, c.HTTPResponse, c.Body, 403, "permission_error", "csrf_token_invalid", "")
		for _, path := range []string{"/api/v1/test/webhook_endpoints", "/api/v1/test/webhook_endpoints/" + ep.Id + "/deliveries"} {
			raw := dashRaw(t, http.MethodGet, path, "", "", nil)
			wantError(t, raw.Status, raw.Header, raw.Body, 401, "authentication_error", "session_required", "")
		}
	})

	harness.Rule(t, "WH", "the delivery log lists an endpoint's deliveries newest first in the list envelope, paged by cursor", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		rc := newHookReceiver(t, nil)
		ep := hookEndpoint(t, o, test, rc.URL)
		other := hookEndpoint(t, o, test, rc.URL+"/other")
		var ids []string
		for range 3 {
			r, err := o.Client.SendWebhookTestEventWithResponse(ctx, test, ep.Id)
			if err != nil || r.JSON202 == nil {
				t.Fatalf("test event: %v %d %s", err, r.StatusCode(), r.Body)
			}
			ids = append(ids, r.JSON202.Id)
		}
		ot, err := o.Client.SendWebhookTestEventWithResponse(ctx, test, other.Id)
		if err != nil || ot.JSON202 == nil {
			t.Fatalf("test event: %v", err)
		}
		page, err := o.Client.ListWebhookDeliveriesWithResponse(ctx, test, ep.Id, &dash.ListWebhookDeliveriesParams{Limit: ptr(2)})
		if err != nil {
			t.Fatal(err)
		}
		p := page.JSON200
		if p == nil || p.Object != "list" || !p.HasMore || len(p.Data) != 2 || p.Data[0].Id != ids[2] || p.Data[1].Id != ids[1] ||
			p.Url != "/api/v1/test/webhook_endpoints/"+ep.Id+"/deliveries" {
			t.Fatalf("first page: %d %s", page.StatusCode(), page.Body)
		}
		next, err := o.Client.ListWebhookDeliveriesWithResponse(ctx, test, ep.Id, &dash.ListWebhookDeliveriesParams{Limit: ptr(2), StartingAfter: ptr(ids[1])})
		if err != nil {
			t.Fatal(err)
		}
		if next.JSON200 == nil || next.JSON200.HasMore || len(next.JSON200.Data) != 1 || next.JSON200.Data[0].Id != ids[0] {
			t.Fatalf("second page: %d %s", next.StatusCode(), next.Body)
		}
		// Another endpoint's delivery is not a cursor of this log.
		bad, err := o.Client.ListWebhookDeliveriesWithResponse(ctx, test, ep.Id, &dash.ListWebhookDeliveriesParams{StartingAfter: ptr(ot.JSON202.Id)})
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, bad, bad.HTTPResponse, bad.Body, 400, "invalid_request", "starting_after_invalid", "starting_after")
		lim, err := o.Client.ListWebhookDeliveriesWithResponse(ctx, test, ep.Id, &dash.ListWebhookDeliveriesParams{Limit: ptr(101)})
		if err != nil {
			t.Fatal(err)
		}
		if lim.StatusCode() != 400 {
			t.Fatalf("limit 101: %d %s", lim.StatusCode(), lim.Body)
		}
	})

	harness.Rule(t, "ISO", "another merchant's webhook endpoint and delivery ids are 404 on every route", func(t *testing.T) {
		t.Parallel()
		a, b := newDashOwner(t), newDashOwner(t)
		rc := newHookReceiver(t, nil)
		ep := hookEndpoint(t, a, test, rc.URL)
		sent, err := a.Client.SendWebhookTestEventWithResponse(ctx, test, ep.Id)
		if err != nil || sent.JSON202 == nil {
			t.Fatalf("test event: %v", err)
		}
		did := sent.JSON202.Id
		want := func(status int, body []byte, hdr http.Header, code string) {
			t.Helper()
			wantError(t, status, hdr, body, 404, "not_found", code, "id")
		}
		g, _ := b.Client.GetWebhookEndpointWithResponse(ctx, test, ep.Id)
		want(g.StatusCode(), g.Body, g.HTTPResponse.Header, "webhook_endpoint_not_found")
		u, _ := b.Client.UpdateWebhookEndpointWithResponse(ctx, test, ep.Id, dash.WebhookEndpointUpdate{Description: ptr("mine")})
		want(u.StatusCode(), u.Body, u.HTTPResponse.Header, "webhook_endpoint_not_found")
		r, _ := b.Client.RotateWebhookEndpointSecretWithResponse(ctx, test, ep.Id)
		want(r.StatusCode(), r.Body, r.HTTPResponse.Header, "webhook_endpoint_not_found")
		d, _ := b.Client.DisableWebhookEndpointWithResponse(ctx, test, ep.Id)
		want(d.StatusCode(), d.Body, d.HTTPResponse.Header, "webhook_endpoint_not_found")
		e, _ := b.Client.EnableWebhookEndpointWithResponse(ctx, test, ep.Id)
		want(e.StatusCode(), e.Body, e.HTTPResponse.Header, "webhook_endpoint_not_found")
		s, _ := b.Client.SendWebhookTestEventWithResponse(ctx, test, ep.Id)
		want(s.StatusCode(), s.Body, s.HTTPResponse.Header, "webhook_endpoint_not_found")
		l, _ := b.Client.ListWebhookDeliveriesWithResponse(ctx, test, ep.Id, nil)
		want(l.StatusCode(), l.Body, l.HTTPResponse.Header, "webhook_endpoint_not_found")
		gd, _ := b.Client.GetWebhookDeliveryWithResponse(ctx, test, did)
		want(gd.StatusCode(), gd.Body, gd.HTTPResponse.Header, "webhook_delivery_not_found")
		rd, _ := b.Client.RedeliverWebhookDeliveryWithResponse(ctx, test, did)
		want(rd.StatusCode(), rd.Body, rd.HTTPResponse.Header, "webhook_delivery_not_found")
		del, _ := b.Client.DeleteWebhookEndpointWithResponse(ctx, test, ep.Id)
		want(del.StatusCode(), del.Body, del.HTTPResponse.Header, "webhook_endpoint_not_found")
		if list, _ := b.Client.ListWebhookEndpointsWithResponse(ctx, test); list.JSON200 == nil || len(list.JSON200.Data) != 0 {
			t.Fatalf("merchant B lists %s", list.Body)
		}
		// A's endpoint is untouched.
		if got, _ := a.Client.GetWebhookEndpointWithResponse(ctx, test, ep.Id); got.JSON200 == nil || got.JSON200.Description != "conformance receiver" ||
			got.JSON200.Status != "enabled" {
			t.Fatalf("A's endpoint after B's attempts: %s", got.Body)
		}
	})

	harness.Rule(t, "ISO", "an endpoint of one environment is 404 in the other, and a test endpoint never receives live events", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		rc := newHookReceiver(t, nil)
		ep := hookEndpoint(t, o, test, rc.URL, "*")
		g, err := o.Client.GetWebhookEndpointWithResponse(ctx, live, ep.Id)
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, g, g.HTTPResponse, g.Body, 404, "not_found", "webhook_endpoint_not_found", "id")
		if l, _ := o.Client.ListWebhookEndpointsWithResponse(ctx, live); l.JSON200 == nil || len(l.JSON200.Data) != 0 {
			t.Fatalf("live lists %s", l.Body)
		}
		liveSession := hookExpiredSession(t, o.Live)
		testSession := hookExpiredSession(t, o.Test)
		rc.waitFor(t, 1, hookWait, aboutObject(t, testSession))
		time.Sleep(time.Second)
		for _, h := range rc.got() {
			if h.Header.Get("Service-Environment") != "test" || h.envelope(t).objectID() == liveSession {
				t.Fatalf("a test endpoint received a live event: %s", h.Body)
			}
		}
	})
}
