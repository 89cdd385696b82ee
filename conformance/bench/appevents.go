package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kassa-pay/kassa/openapi/webhook"
)

// App event fan-out: one merchant with appFanoutInstalls apps installed (payments:read), each
// with one app webhook endpoint subscribed to "*" at a local receiver. The bench commits
// appFanoutEvents checkout.session.expired events (create + expire, one after another) and
// measures deliveries/s: every (installation, event) delivery verified with its endpoint's
// secret and acknowledged, over the time from the first commit to the last acknowledgement,
// and the delay of each delivery from its event's commit.

const (
	appFanoutName     = "app event fan-out: 100 installations subscribed to * on one merchant"
	appFanoutInstalls = 100
	appFanoutEvents   = 50
)

type appFanReceiver struct {
	srv     *http.Server
	url     string
	secrets []string

	mu        sync.Mutex
	committed map[string]time.Time    // session id → expire response
	acked     map[[2]string]time.Time // (installation, session id) → acknowledgement
	bad       int
	firstBad  string
}

func startAppFanReceiver() (*appFanReceiver, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &appFanReceiver{url: "http://" + l.Addr().String() + "/app/", committed: map[string]time.Time{}, acked: map[[2]string]time.Time{}}
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.srv.Serve(l) }()
	return r, nil
}

func (r *appFanReceiver) fail(w http.ResponseWriter, msg string) {
	r.mu.Lock()
	r.bad++
	if r.firstBad == "" {
		r.firstBad = msg
	}
	r.mu.Unlock()
	http.Error(w, msg, http.StatusBadRequest)
}

func (r *appFanReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(http.MaxBytesReader(w, req.Body, 1<<20))
	i, err := strconv.Atoi(strings.TrimPrefix(req.URL.Path, "/app/"))
	r.mu.Lock()
	ok := err == nil && i >= 0 && i < len(r.secrets)
	var secret string
	if ok {
		secret = r.secrets[i]
	}
	r.mu.Unlock()
	if !ok {
		r.fail(w, "unknown endpoint "+req.URL.Path)
		return
	}
	if _, err := webhook.ConstructEvent(body, req.Header.Get(webhook.SignatureHeader), secret); err != nil {
		r.fail(w, err.Error())
		return
	}
	var env struct {
		Type         string `json:"type"`
		Installation string `json:"installation"`
		Data         struct {
			Object struct {
				ID string `json:"id"`
			} `json:"object"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &env); err != nil || env.Installation == "" {
		r.fail(w, "envelope without installation")
		return
	}
	w.WriteHeader(http.StatusOK)
	now := time.Now()
	k := [2]string{env.Installation, env.Data.Object.ID}
	r.mu.Lock()
	if _, dup := r.acked[k]; !dup && env.Type == "checkout.session.expired" {
		r.acked[k] = now
	}
	r.mu.Unlock()
}

// appFanResult is what the fan-out scenario measured.
type appFanResult struct {
	events, installs, want, acked, bad int
	firstBad                           string
	span                               time.Duration // first commit → last acknowledgement
	delays                             []time.Duration
}

func (a appFanResult) rate() float64 {
	if a.span <= 0 {
		return 0
	}
	return float64(a.acked) / a.span.Seconds()
}

// operatorPost sends a JSON body to the operator API and decodes the answer into out.
func operatorPost(ctx context.Context, c *http.Client, base, token, path string, in, out any) error {
	b, _ := json.Marshal(in)
	st, _, body, err := do(ctx, c, http.MethodPost, base+path, token, nil, string(b))
	if err := check(st, body, err); err != nil {
		return fmt.Errorf("POST %s: %w", path, err)
	}
	return json.Unmarshal(body, out)
}

// runAppFanout sets up the merchant, the apps and their endpoints, commits the events and
// waits for every delivery (or for nothing to move for 30 s).
func runAppFanout(ctx context.Context, base, operatorToken string) (appFanResult, error) {
	var res appFanResult
	r, err := startAppFanReceiver()
	if err != nil {
		return res, err
	}
	defer r.srv.Close()
	m, err := createMerchant(ctx, base, operatorToken, "Bench app fan-out merchant")
	if err != nil {
		return res, err
	}
	c := newClient(4)
	for i := range appFanoutInstalls {
		var app struct {
			ID string `json:"id"`
		}
		if err := operatorPost(ctx, c, base, operatorToken, "/operator/v1/apps", map[string]any{
			"name": "Bench app " + strconv.Itoa(i), "redirect_uris": []string{"https://bench.example/cb"}, "scopes": []string{"payments:read"},
		}, &app); err != nil {
			return res, err
		}
		var inst struct {
			Installation string `json:"installation"`
		}
		if err := operatorPost(ctx, c, base, operatorToken, "/operator/v1/apps/"+app.ID+"/installations",
			map[string]any{"merchant_id": m.ID}, &inst); err != nil {
			return res, err
		}
		var ep struct {
			Secret string `json:"secret"`
		}
		if err := operatorPost(ctx, c, base, operatorToken, "/operator/v1/apps/"+app.ID+"/webhook_endpoints",
			map[string]any{"url": r.url + strconv.Itoa(i), "events": []string{"*"}}, &ep); err != nil {
			return res, err
		}
		r.mu.Lock()
		r.secrets = append(r.secrets, ep.Secret)
		r.mu.Unlock()
	}
	produce := api{base: base, key: m.TestKey}.expireOp(appFanoutName, "", r.commit).newOp(0)
	start := time.Now()
	for range appFanoutEvents {
		if err := produce(ctx); err != nil {
			return res, err
		}
	}
	want := appFanoutEvents * appFanoutInstalls
	last, lastN := time.Now(), -1
	for ctx.Err() == nil {
		r.mu.Lock()
		n := len(r.acked)
		r.mu.Unlock()
		if n >= want {
			break
		}
		if n != lastN {
			last, lastN = time.Now(), n
		} else if time.Since(last) > 30*time.Second {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	res = appFanResult{events: len(r.committed), installs: appFanoutInstalls, want: want, acked: len(r.acked), bad: r.bad, firstBad: r.firstBad}
	var lastAck time.Time
	for k, at := range r.acked {
		if c, ok := r.committed[k[1]]; ok {
			res.delays = append(res.delays, at.Sub(c))
		}
		if at.After(lastAck) {
			lastAck = at
		}
	}
	slices.Sort(res.delays)
	if res.acked > 0 {
		res.span = lastAck.Sub(start)
	}
	return res, nil
}

func (r *appFanReceiver) commit(id string, at time.Time) {
	r.mu.Lock()
	r.committed[id] = at
	r.mu.Unlock()
}

// reportAppFanout prints the fan-out row.
func reportAppFanout(w io.Writer, a appFanResult) {
	q := func(p float64) time.Duration { return result{lat: a.delays}.quantile(p) }
	fmt.Fprintf(w, "\nApp event fan-out (%d installations on one merchant, each app endpoint subscribed to *; %d checkout.session.expired events, signature verified per endpoint):\n",
		a.installs, a.events)
	fmt.Fprintf(w, "  %d of %d deliveries acknowledged at %.0f deliveries/s (first commit → last 2xx)\n", a.acked, a.want, a.rate())
	fmt.Fprintf(w, "  delay commit → acknowledged: p50 %s ms, p99 %s ms, max %s ms\n", ms(q(0.5)), ms(q(0.99)), ms(q(1)))
	if a.acked < a.want || a.bad > 0 {
		fmt.Fprintf(w, "  FLAGGED: %d deliveries missing, %d failed verification %s\n", a.want-a.acked, a.bad, a.firstBad)
	}
}
