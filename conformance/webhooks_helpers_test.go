package conformance

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
)

// Helpers of the webhook cases (names start with hook). A case runs a receiver of its own on
// loopback (the harness starts its servers with the development flag that lets endpoints use
// loopback hosts), creates an endpoint for it through the dashboard API as the merchant's
// owner, causes events through the merchant API, and looks at what arrived.

func init() {
	sectionTitles["WH"] = "webhook endpoints and delivery log (dashboard API)"
}

// hookHit is one request the receiver got.
type hookHit struct {
	At     time.Time
	Header http.Header
	Body   []byte
}

// hookEnvelope is the delivered body (D10 envelope).
type hookEnvelope struct {
	ID          string `json:"id"`
	Object      string `json:"object"`
	Type        string `json:"type"`
	Environment string `json:"environment"`
	APIVersion  string `json:"api_version"`
	Created     int64  `json:"created"`
	Data        struct {
		Object json.RawMessage `json:"object"`
	} `json:"data"`
}

// objectID is data.object.id.
func (e hookEnvelope) objectID() string {
	var o struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(e.Data.Object, &o)
	return o.ID
}

func (h hookHit) envelope(t *testing.T) hookEnvelope {
	t.Helper()
	var e hookEnvelope
	if err := json.Unmarshal(h.Body, &e); err != nil {
		t.Fatalf("delivered body is not JSON: %v: %s", err, h.Body)
	}
	return e
}

// hookReceiver is a local webhook receiver; respond decides each answer (200 when nil). It
// reads the whole body before answering, like a real receiver.
type hookReceiver struct {
	*httptest.Server
	mu      sync.Mutex
	hits    []hookHit
	respond func(n int, w http.ResponseWriter, r *http.Request) // n: 1-based count of requests so far
}

func newHookReceiver(t *testing.T, respond func(n int, w http.ResponseWriter, r *http.Request)) *hookReceiver {
	t.Helper()
	rc := &hookReceiver{respond: respond}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.hits = append(rc.hits, hookHit{At: time.Now(), Header: r.Header.Clone(), Body: body})
		n := len(rc.hits)
		respond := rc.respond
		rc.mu.Unlock()
		if respond != nil {
			respond(n, w, r)
		}
	}))
	t.Cleanup(rc.Server.Close)
	return rc
}

func (rc *hookReceiver) setRespond(f func(n int, w http.ResponseWriter, r *http.Request)) {
	rc.mu.Lock()
	rc.respond = f
	rc.mu.Unlock()
}

func (rc *hookReceiver) got() []hookHit {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]hookHit(nil), rc.hits...)
}

// waitFor polls until match holds for at least n hits, and returns those hits.
func (rc *hookReceiver) waitFor(t *testing.T, n int, timeout time.Duration, match func(hookHit) bool) []hookHit {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var out []hookHit
		for _, h := range rc.got() {
			if match == nil || match(h) {
				out = append(out, h)
			}
		}
		if len(out) >= n {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("received %d matching deliveries within %s, want %d (all hits: %d)", len(out), timeout, n, len(rc.got()))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// forEvent matches the deliveries of one event id.
func forEvent(id string) func(hookHit) bool {
	return func(h hookHit) bool { return h.Header.Get("Service-Event-Id") == id }
}

// aboutObject matches deliveries whose data.object.id is id (e.g. a checkout session).
func aboutObject(t *testing.T, id string) func(hookHit) bool {
	return func(h hookHit) bool { return h.envelope(t).objectID() == id }
}

// hookEndpoint creates an endpoint in env at url for events ("*" when none) and fails unless
// it answers 201.
func hookEndpoint(t *testing.T, o *DashOwner, env dash.Env, url string, events ...string) *dash.WebhookEndpointWithSecret {
	t.Helper()
	if len(events) == 0 {
		events = []string{"*"}
	}
	resp, err := o.Client.CreateWebhookEndpointWithResponse(context.Background(), env, dash.WebhookEndpointCreate{
		Url: url, EnabledEvents: events, Description: ptr("conformance receiver"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.JSON201 == nil {
		t.Fatalf("create endpoint: %d %s", resp.StatusCode(), resp.Body)
	}
	return resp.JSON201
}

// hookExpiredSession creates a session with c and expires it: checkout.session.expired is
// committed when this returns. It returns the session id.
func hookExpiredSession(t *testing.T, c *api.ClientWithResponses) string {
	t.Helper()
	id, err := hookTryExpiredSession(c)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// hookTryExpiredSession is hookExpiredSession returning its error, for callers that run it
// on goroutines of their own (where t.Fatal may not be called).
func hookTryExpiredSession(c *api.ClientWithResponses) (string, error) {
	cr, err := c.CreateCheckoutSessionWithResponse(context.Background(), nil, sessionBody())
	if err != nil {
		return "", err
	}
	if cr.JSON200 == nil {
		return "", fmt.Errorf("create session: %d %s", cr.StatusCode(), cr.Body)
	}
	resp, err := c.ExpireCheckoutSessionWithResponse(context.Background(), cr.JSON200.Id, nil)
	if err != nil {
		return "", err
	}
	if resp.JSON200 == nil {
		return "", fmt.Errorf("expire session %s: %d %s", cr.JSON200.Id, resp.StatusCode(), resp.Body)
	}
	return cr.JSON200.Id, nil
}

// hookSignatures parses a Service-Signature header (t=…,v1=…[,v1=…]) by hand.
func hookSignatures(t *testing.T, header string) (ts int64, v1 []string) {
	t.Helper()
	for _, part := range strings.Split(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			t.Fatalf("malformed Service-Signature %q", header)
		}
		switch k {
		case "t":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("t in %q: %v", header, err)
			}
			ts = n
		case "v1":
			v1 = append(v1, v)
		}
	}
	if ts == 0 || len(v1) == 0 {
		t.Fatalf("Service-Signature %q lacks t or v1", header)
	}
	return ts, v1
}

// hookExpectedV1 computes the D10 signature without the server's signing code: hex
// HMAC-SHA256 keyed with the whole whsec_ secret over "<t>.<raw body>".
func hookExpectedV1(secret string, ts int64, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(strconv.FormatInt(ts, 10) + "." + string(body)))
	return hex.EncodeToString(m.Sum(nil))
}

// hookSignedBy reports whether one of the header's v1 signatures is the one secret makes.
func hookSignedBy(t *testing.T, h hookHit, secret string) bool {
	t.Helper()
	ts, v1 := hookSignatures(t, h.Header.Get("Service-Signature"))
	want := hookExpectedV1(secret, ts, h.Body)
	for _, s := range v1 {
		if hmac.Equal([]byte(s), []byte(want)) {
			return true
		}
	}
	return false
}

// hookDelivery reads a delivery with its attempts.
func hookDelivery(t *testing.T, o *DashOwner, id string) *dash.WebhookDeliveryDetail {
	t.Helper()
	resp, err := o.Client.GetWebhookDeliveryWithResponse(context.Background(), dash.DashboardEnvironmentTest, id)
	if err != nil {
		t.Fatal(err)
	}
	if resp.JSON200 == nil {
		t.Fatalf("get delivery: %d %s", resp.StatusCode(), resp.Body)
	}
	return resp.JSON200
}

// hookDeliveries is the first page (up to 100, newest first) of an endpoint's test log.
func hookDeliveries(t *testing.T, o *DashOwner, endpointID string) dash.WebhookDeliveryList {
	t.Helper()
	resp, err := o.Client.ListWebhookDeliveriesWithResponse(context.Background(), dash.DashboardEnvironmentTest, endpointID,
		&dash.ListWebhookDeliveriesParams{Limit: ptr(100)})
	if err != nil {
		t.Fatal(err)
	}
	if resp.JSON200 == nil {
		t.Fatalf("list deliveries: %d %s", resp.StatusCode(), resp.Body)
	}
	return *resp.JSON200
}

// hookDeliveryOf finds the delivery of one event in an endpoint's log.
func hookDeliveryOf(t *testing.T, o *DashOwner, endpointID, eventID string) dash.WebhookDelivery {
	t.Helper()
	for _, d := range hookDeliveries(t, o, endpointID).Data {
		if d.EventId == eventID {
			return d
		}
	}
	t.Fatalf("no delivery of %s in the log of %s", eventID, endpointID)
	return dash.WebhookDelivery{}
}

// hookWaitDelivery polls a delivery until cond holds.
func hookWaitDelivery(t *testing.T, o *DashOwner, id string, timeout time.Duration, cond func(*dash.WebhookDeliveryDetail) bool) *dash.WebhookDeliveryDetail {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		d := hookDelivery(t, o, id)
		if cond(d) {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("delivery %s did not reach the expected state within %s: %+v", id, timeout, d.Delivery)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
