package conformance

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/kassa-pay/kassa/openapi"
	op "github.com/kassa-pay/kassa/openapi/gen/operatorapi"
)

// Helpers of the app event cases: an app registered and installed through the operator API,
// an app webhook endpoint pointing at a local receiver, and the check of a delivered body
// against openapi/app-events.yaml.

// appHookEnvelope is the delivered body of an app event.
type appHookEnvelope struct {
	hookEnvelope
	Installation string `json:"installation"`
}

func (h hookHit) appEnvelope(t *testing.T) appHookEnvelope {
	t.Helper()
	var e appHookEnvelope
	if err := json.Unmarshal(h.Body, &e); err != nil {
		t.Fatalf("delivered body is not JSON: %v: %s", err, h.Body)
	}
	return e
}

// appHookApp is an app with one installation on a merchant.
type appHookApp struct {
	ID           string
	Installation string
}

// appHookInstall registers an app (every unrestricted scope) and installs it on merchant with
// scopes (none: all of them).
func appHookInstall(t *testing.T, merchant string, scopes ...op.AppScope) appHookApp {
	t.Helper()
	i := appInstall(t, &Merchant{ID: merchant}, scopes...)
	return appHookApp{ID: i.App, Installation: i.Installation}
}

// appHookEndpoint registers an app webhook endpoint at url for events and fails unless it
// answers 201.
func appHookEndpoint(t *testing.T, appID, url string, events ...string) *op.AppWebhookEndpointCreated {
	t.Helper()
	resp, err := operator(t).CreateAppWebhookEndpointWithResponse(context.Background(), appID,
		op.AppWebhookEndpointCreate{Url: url, Events: events})
	if err != nil {
		t.Fatal(err)
	}
	if resp.JSON201 == nil {
		t.Fatalf("create app endpoint: %d %s", resp.StatusCode(), resp.Body)
	}
	return resp.JSON201
}

// appHookDeliveries lists an app's deliveries (newest first, up to 100).
func appHookDeliveries(t *testing.T, appID string) []op.AppWebhookDelivery {
	t.Helper()
	resp, err := operator(t).ListAppWebhookDeliveriesWithResponse(context.Background(), appID,
		&op.ListAppWebhookDeliveriesParams{Limit: ptr(100)})
	if err != nil {
		t.Fatal(err)
	}
	if resp.JSON200 == nil {
		t.Fatalf("list app deliveries: %d %s", resp.StatusCode(), resp.Body)
	}
	return resp.JSON200.Data
}

var (
	appEventsDocOnce sync.Once
	appEventsDoc     *openapi3.T
)

// wantAppEventBody validates a delivered body against openapi/app-events.yaml: the envelope
// (AppEvent) and data.object against the schema x-events names for its type.
func wantAppEventBody(t *testing.T, body []byte) {
	t.Helper()
	appEventsDocOnce.Do(func() {
		doc, err := openapi.LoadAppEvents()
		if err != nil {
			panic(err)
		}
		appEventsDoc = doc
	})
	var v map[string]any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("body: %v", err)
	}
	opts := []openapi3.SchemaValidationOption{openapi3.MultiErrors()}
	if err := appEventsDoc.Components.Schemas["AppEvent"].Value.VisitJSON(v, opts...); err != nil {
		t.Fatalf("envelope does not match AppEvent: %v\n%s", err, body)
	}
	events, _ := appEventsDoc.Extensions["x-events"].(map[string]any)
	typ, _ := v["type"].(string)
	name, _ := events[typ].(string)
	if name == "" {
		t.Fatalf("app-events.yaml names no schema for %s", typ)
	}
	obj := v["data"].(map[string]any)["object"]
	if err := appEventsDoc.Components.Schemas[name].Value.VisitJSON(obj, opts...); err != nil {
		t.Fatalf("data.object of %s does not match %s: %v\n%s", typ, name, err, body)
	}
}

// appHookQuiet waits a while and fails if rc received anything.
func appHookQuiet(t *testing.T, rc *hookReceiver, d time.Duration) {
	t.Helper()
	time.Sleep(d)
	if n := len(rc.got()); n != 0 {
		t.Fatalf("received %d deliveries, want none: %s", n, rc.got()[0].Body)
	}
}
