package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kassa-pay/kassa/conformance/harness"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/openapi/webhook"
)

// Webhook delivery throughput (issue 3, section 5): events/s from commit to acknowledged by a
// local receiver, and the delay of each event from its commit to its acknowledgement.
//
// Each worker of the load generator creates a checkout session and expires it: the expire
// response means checkout.session.expired is committed to the outbox. A local receiver (this
// process, loopback) verifies every delivery with the SDK verifier and answers 200; the
// delay of an event is the time from the expire response to the receiver's answer. The
// producers do not wait for deliveries, so the delivery worker has to keep up with the API:
// after the measured run the bench waits for the backlog to drain, and events/s is the number
// of acknowledged events over the time from the start of the run to the last one.
//
// The baseline, measured in the same run, is the same create + expire load for a merchant
// without a webhook endpoint: the rate at which the API produces these events. The ratio
// delivered/produced near 1 means delivery keeps up with production.

const (
	baselineExpire = "baseline: create + expire session, no endpoint"
	webhookExpire  = "create + expire session, webhook endpoint"
)

// expireOp creates a session and expires it; committed (when set) is told the session id and
// the moment the expire response arrived.
func (a api) expireOp(name, floor string, committed func(id string, at time.Time)) scenario {
	return scenario{name: name, floor: floor, newOp: func(int) op {
		c := newClient(1)
		return func(ctx context.Context) error {
			st, _, b, err := do(ctx, c, http.MethodPost, a.base+"/v1/checkout/sessions", a.key, nil, sessionBody)
			if err := check(st, b, err); err != nil {
				return err
			}
			var s struct {
				ID string `json:"id"`
			}
			if err := json.Unmarshal(b, &s); err != nil || s.ID == "" {
				return fmt.Errorf("create session: unexpected body %.200s", b)
			}
			st, _, b, err = do(ctx, c, http.MethodPost, a.base+"/v1/checkout/sessions/"+s.ID+"/expire", a.key, nil, "")
			if err := check(st, b, err); err != nil {
				return err
			}
			if committed != nil {
				committed(s.ID, time.Now())
			}
			return nil
		}
	}}
}

// hookReceiver is the local receiver: it verifies each delivery and records, per session,
// when its expired event was acknowledged.
type hookReceiver struct {
	key    string // the scenario merchant's test key
	secret string
	srv    *http.Server
	url    string

	mu        sync.Mutex
	committed map[string]time.Time // session id → expire response
	acked     map[string]time.Time // session id → acknowledgement
	bad       int                  // deliveries that failed verification
	firstBad  string
}

func startReceiver() (*hookReceiver, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &hookReceiver{url: "http://" + l.Addr().String() + "/hooks", committed: map[string]time.Time{}, acked: map[string]time.Time{}}
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.srv.Serve(l) }()
	return r, nil
}

func (r *hookReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(http.MaxBytesReader(w, req.Body, 1<<20))
	ev, err := webhook.ConstructEvent(body, req.Header.Get(webhook.SignatureHeader), r.secret)
	if err != nil {
		r.mu.Lock()
		r.bad++
		if r.firstBad == "" {
			r.firstBad = err.Error()
		}
		r.mu.Unlock()
		http.Error(w, "invalid signature", http.StatusBadRequest)
		return
	}
	var obj struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(ev.Data.Object, &obj)
	w.WriteHeader(http.StatusOK)
	now := time.Now()
	r.mu.Lock()
	if _, dup := r.acked[obj.ID]; !dup && ev.Type == "checkout.session.expired" {
		r.acked[obj.ID] = now
	}
	r.mu.Unlock()
}

func (r *hookReceiver) commit(id string, at time.Time) {
	r.mu.Lock()
	r.committed[id] = at
	r.mu.Unlock()
}

// reset forgets what the warm-up produced.
func (r *hookReceiver) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.committed, r.acked, r.bad, r.firstBad = map[string]time.Time{}, map[string]time.Time{}, 0, ""
}

// drain waits until every committed event is acknowledged or until nothing has moved for
// idle; it returns how many are still missing.
func (r *hookReceiver) drain(ctx context.Context, idle time.Duration) int {
	last, lastN := time.Now(), -1
	for {
		r.mu.Lock()
		missing := 0
		for id := range r.committed {
			if _, ok := r.acked[id]; !ok {
				missing++
			}
		}
		n := len(r.acked)
		r.mu.Unlock()
		if missing == 0 || ctx.Err() != nil {
			return missing
		}
		if n != lastN {
			last, lastN = time.Now(), n
		} else if time.Since(last) > idle {
			return missing
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// webhookResult is the delivery side of the webhook scenario.
type webhookResult struct {
	produced, acked, missing, bad int
	firstBad                      string
	span                          time.Duration // start of the measured run → last acknowledgement
	delays                        []time.Duration
}

func (w webhookResult) rate() float64 {
	if w.span <= 0 {
		return 0
	}
	return float64(w.acked) / w.span.Seconds()
}

func (w webhookResult) quantile(q float64) time.Duration {
	return result{lat: w.delays}.quantile(q)
}

func (r *hookReceiver) result(start time.Time, missing int) webhookResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := webhookResult{produced: len(r.committed), missing: missing, bad: r.bad, firstBad: r.firstBad}
	var last time.Time
	for id, c := range r.committed {
		a, ok := r.acked[id]
		if !ok {
			continue
		}
		out.acked++
		out.delays = append(out.delays, a.Sub(c))
		if a.After(last) {
			last = a
		}
	}
	slices.Sort(out.delays)
	if out.acked > 0 {
		out.span = last.Sub(start)
	}
	return out
}

// runWebhookScenario runs the producers (warm-up, drain, measured run, drain) and returns the
// producers' result and the delivery result.
func runWebhookScenario(ctx context.Context, cfg loadConfig, sc scenario, r *hookReceiver) (result, webhookResult) {
	ops := make([]op, cfg.conns)
	for i := range ops {
		ops[i] = sc.newOp(i)
	}
	if cfg.warmup > 0 {
		drive(ctx, ops, cfg.warmup, cfg.maxReqs, false)
		r.drain(ctx, 5*time.Second)
	}
	if sc.settle != nil {
		if err := sc.settle(ctx); err != nil { // as runScenario; the statistics stay as they were
			fmt.Fprintf(os.Stderr, "bench: %s: %v\n", sc.name, err)
		}
	}
	r.reset()
	start := time.Now()
	res := drive(ctx, ops, cfg.duration, cfg.maxReqs, true)
	res.name = sc.name
	missing := r.drain(ctx, 15*time.Second)
	return res, r.result(start, missing)
}

// dashboardEndpoint signs in to the dashboard as the merchant's owner and creates a test
// webhook endpoint for checkout.session.expired at url; it returns the signing secret.
func dashboardEndpoint(ctx context.Context, dashboard, email, password, hookURL string) (string, error) {
	c := newClient(1)
	body, _ := json.Marshal(map[string]string{"email": email, "password": password})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, dashboard+"/api/v1/session", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err := check(resp.StatusCode, b, nil); err != nil {
		return "", fmt.Errorf("dashboard sign-in: %w", err)
	}
	var s struct {
		CSRF string `json:"csrf_token"`
	}
	if err := json.Unmarshal(b, &s); err != nil || s.CSRF == "" {
		return "", fmt.Errorf("dashboard sign-in: unexpected body %.200s", b)
	}
	var cookies []string
	for _, ck := range resp.Cookies() {
		cookies = append(cookies, ck.Name+"="+ck.Value)
	}
	body, _ = json.Marshal(map[string]any{"url": hookURL, "enabled_events": []string{"checkout.session.expired"},
		"description": "bench receiver"})
	st, _, b, err := do(ctx, c, http.MethodPost, dashboard+"/api/v1/test/webhook_endpoints", "", map[string]string{
		"X-CSRF-Token": s.CSRF, "Cookie": strings.Join(cookies, "; "), "Content-Type": "application/json",
	}, string(body))
	if err := check(st, b, err); err != nil {
		return "", fmt.Errorf("create webhook endpoint: %w", err)
	}
	var ep struct {
		Secret string `json:"secret"`
	}
	if err := json.Unmarshal(b, &ep); err != nil || !strings.HasPrefix(ep.Secret, "whsec_") {
		return "", fmt.Errorf("create webhook endpoint: unexpected body %.200s", b)
	}
	return ep.Secret, nil
}

// reportWebhooks prints the delivery side of the webhook scenario.
func reportWebhooks(w io.Writer, produced result, baseline *result, d webhookResult) {
	fmt.Fprintf(w, "\nWebhook delivery (checkout.session.expired to a local receiver, signature verified with openapi/webhook):\n")
	fmt.Fprintf(w, "  produced %d events at %.0f events/s; acknowledged %d at %.0f events/s (commit → 2xx, backlog drained)\n",
		d.produced, produced.rps(), d.acked, d.rate())
	fmt.Fprintf(w, "  delay commit → acknowledged: p50 %s ms, p99 %s ms, max %s ms\n",
		ms(d.quantile(0.5)), ms(d.quantile(0.99)), ms(d.quantile(1)))
	if baseline != nil && baseline.rps() > 0 {
		fmt.Fprintf(w, "  acknowledged events/s ÷ baseline events/s (same load, no endpoint): %.2f\n", d.rate()/baseline.rps())
	}
	if d.missing > 0 || d.bad > 0 {
		fmt.Fprintf(w, "  FLAGGED: %d events never acknowledged, %d deliveries failed verification %s\n", d.missing, d.bad, d.firstBad)
	}
}

// setupWebhookBench starts the receiver, creates the scenario's merchant with a dashboard
// owner and gives it an endpoint at the receiver. It fails (and the scenario is skipped) when
// the target has no dashboard API.
func setupWebhookBench(ctx context.Context, t *harness.Target) (*hookReceiver, error) {
	if t.DashboardURL == "" {
		return nil, fmt.Errorf("no dashboard URL (-dashboard-url)")
	}
	email := "bench-hooks+" + strings.ToLower(core.RandomBase62(8)) + "@example.com"
	password := "bench-" + core.RandomBase62(20)
	m, err := createMerchantOwned(ctx, t.BaseURL, t.OperatorToken, "Bench webhook merchant", email, password)
	if err != nil {
		return nil, err
	}
	r, err := startReceiver()
	if err != nil {
		return nil, err
	}
	if r.secret, err = dashboardEndpoint(ctx, t.DashboardURL, email, password, r.url); err != nil {
		r.srv.Close()
		return nil, err
	}
	r.key = m.TestKey
	return r, nil
}
