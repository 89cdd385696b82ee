package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
)

// Helpers of the checkout-session, test-clock and events sections. Names start with cs, clock
// or evt so they do not collide with the helpers of other sections.

// csIDPattern is a checkout session id (D2: prefix + 24 base62).
var csIDPattern = regexp.MustCompile(`^cs_[0-9A-Za-z]{24}$`)

// csSecretRandom is the random part of a client secret (D2: ≥ 192 bits, i.e. ≥ 32 base62).
var csSecretRandom = regexp.MustCompile(`^[0-9A-Za-z]{32,}$`)

// csCreate creates a session with the typed client and fails unless it answers 200.
func csCreate(t *testing.T, c *api.ClientWithResponses, body api.CheckoutSessionCreate) *api.CheckoutSession {
	t.Helper()
	resp, err := c.CreateCheckoutSessionWithResponse(context.Background(), nil, body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.JSON200 == nil {
		t.Fatalf("create session: %d %s", resp.StatusCode(), resp.Body)
	}
	return resp.JSON200
}

// csGet retrieves a session and fails unless it answers 200.
func csGet(t *testing.T, c *api.ClientWithResponses, id string) *api.CheckoutSession {
	t.Helper()
	resp, err := c.RetrieveCheckoutSessionWithResponse(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if resp.JSON200 == nil {
		t.Fatalf("retrieve session %s: %d %s", id, resp.StatusCode(), resp.Body)
	}
	return resp.JSON200
}

// csBody is a valid create body as a map, for raw requests that change single fields.
func csBody() map[string]any {
	return map[string]any{
		"amount": 2500, "currency": "eur", "customer_name": "Ada Lovelace", "customer_email": "ada@example.com",
	}
}

// csWith returns csBody with the given fields set (a nil value deletes the field).
func csWith(kv ...any) map[string]any {
	b := csBody()
	for i := 0; i+1 < len(kv); i += 2 {
		k := kv[i].(string)
		if kv[i+1] == nil {
			delete(b, k)
		} else {
			b[k] = kv[i+1]
		}
	}
	return b
}

// csPost posts a raw create body with key.
func csPost(t *testing.T, key string, body map[string]any) Raw {
	t.Helper()
	return raw(t, "POST", "/v1/checkout/sessions", key, rawJSON(t, body), nil)
}

// csWantOK asserts a 200 create and returns the session.
func csWantOK(t *testing.T, r Raw) api.CheckoutSession {
	t.Helper()
	if r.Status != 200 {
		t.Fatalf("status = %d, want 200; body %s", r.Status, r.Body)
	}
	var s api.CheckoutSession
	if err := json.Unmarshal(r.Body, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// csWantErr asserts a raw error response.
func csWantErr(t *testing.T, r Raw, status int, typ, code, param string) {
	t.Helper()
	wantError(t, r.Status, r.Header, r.Body, status, typ, code, param)
}

// csLineItems returns n valid raw line items.
func csLineItems(n int) []map[string]any {
	items := make([]map[string]any, n)
	for i := range items {
		items[i] = map[string]any{"name": fmt.Sprintf("Item %d", i), "quantity": 1, "amount": 100}
	}
	return items
}

// csMetadata returns n metadata keys.
func csMetadata(n int) map[string]string {
	md := make(map[string]string, n)
	for i := range n {
		md[fmt.Sprintf("k%02d", i)] = "v"
	}
	return md
}

// clockGet reads the merchant's test clock.
func clockGet(t *testing.T, c *api.ClientWithResponses) api.TestClock {
	t.Helper()
	resp, err := c.GetTestClockWithResponse(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if resp.JSON200 == nil {
		t.Fatalf("get clock: %d %s", resp.StatusCode(), resp.Body)
	}
	return *resp.JSON200
}

// clockAdvance moves the merchant's test clock by seconds and returns the clock once the
// advance is done. An advance whose due work outlasts the server's wait answers 202 advancing
// (a loaded machine); the client then reads the clock until it is ready, as the docs tell
// integrators to (the 202 itself is the rule of TestClockAdvance's own case).
func clockAdvance(t *testing.T, c *api.ClientWithResponses, seconds int64) api.TestClock {
	t.Helper()
	resp, err := c.AdvanceTestClockWithResponse(context.Background(), nil, api.TestClockAdvance{Seconds: &seconds})
	if err != nil {
		t.Fatal(err)
	}
	if resp.JSON200 != nil {
		return *resp.JSON200
	}
	if resp.JSON202 == nil || resp.JSON202.Status != "advancing" {
		t.Fatalf("advance clock by %d: %d %s", seconds, resp.StatusCode(), resp.Body)
	}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		time.Sleep(200 * time.Millisecond)
		if clk := clockGet(t, c); clk.Status != "advancing" {
			return clk
		}
		if time.Now().After(deadline) {
			t.Fatalf("advance clock by %d: still advancing after 3 minutes", seconds)
		}
	}
}

// clockFreeze freezes the merchant's clock (a 1-second advance) and returns its time.
func clockFreeze(t *testing.T, c *api.ClientWithResponses) int64 {
	t.Helper()
	clk := clockAdvance(t, c, 1)
	if clk.FrozenTime == nil || *clk.FrozenTime != clk.Now {
		t.Fatalf("clock not frozen after advance: %+v", clk)
	}
	return clk.Now
}

// evtList lists events (newest first) with optional type and limit.
func evtList(t *testing.T, c *api.ClientWithResponses, typ string, limit int) api.EventList {
	t.Helper()
	p := &api.ListEventsParams{}
	if typ != "" {
		p.Type = &typ
	}
	if limit > 0 {
		p.Limit = &limit
	}
	resp, err := c.ListEventsWithResponse(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if resp.JSON200 == nil {
		t.Fatalf("list events: %d %s", resp.StatusCode(), resp.Body)
	}
	return *resp.JSON200
}

// evtForSession returns the events of type typ whose data.object.id is sessionID.
func evtForSession(t *testing.T, c *api.ClientWithResponses, typ, sessionID string) []api.Event {
	t.Helper()
	var out []api.Event
	for _, e := range evtList(t, c, typ, 100).Data {
		if id, _ := e.Data.Object["id"].(string); id == sessionID {
			out = append(out, e)
		}
	}
	return out
}

// csWantURL checks a checkout or embed URL: <checkout base>/<kind>/<id>?cs=<secret>.
func csWantURL(t *testing.T, got, kind, id, secret string) {
	t.Helper()
	if target.CheckoutURL != "" {
		want := strings.TrimRight(target.CheckoutURL, "/") + "/" + kind + "/" + id + "?cs=" + secret
		if got != want {
			t.Fatalf("%s url = %q, want %q", kind, got, want)
		}
		return
	}
	u, err := url.Parse(got)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		t.Fatalf("%s url %q is not an absolute http(s) URL", kind, got)
	}
	if !strings.HasSuffix(u.Path, "/"+kind+"/"+id) || u.Query().Get("cs") != secret {
		t.Fatalf("%s url = %q, want …/%s/%s?cs=<client_secret>", kind, got, kind, id)
	}
}

// jsonHasNull reports whether the top-level JSON object body has key with the value null.
func jsonHasNull(t *testing.T, body []byte, key string) bool {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	v, ok := m[key]
	return ok && string(v) == "null"
}
