package webhookhttp

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/webhooks"
)

func msg(url string, env core.Environment) webhooks.Message {
	return webhooks.Message{URL: url, Environment: env, EventID: "evt_1", EventType: "invoice.paid",
		Attempt: 3, Body: []byte(`{"id":"evt_1"}`), Secrets: []string{"whsec_a", "whsec_b"}, Timestamp: time.Unix(1700000000, 0)}
}

func TestSendHeadersAndSignature(t *testing.T) {
	var got http.Header
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, body = r.Header.Clone(), must(io.ReadAll(r.Body))
		w.WriteHeader(204)
	}))
	defer srv.Close()
	o := New(Options{}).Send(context.Background(), msg(srv.URL, core.EnvTest))
	if !o.Acknowledged() || o.StatusCode != 204 {
		t.Fatalf("outcome %+v", o)
	}
	mac := func(secret string) string {
		m := hmac.New(sha256.New, []byte(secret))
		fmt.Fprintf(m, "1700000000.%s", body)
		return hex.EncodeToString(m.Sum(nil))
	}
	want := map[string]string{
		"Content-Type":             "application/json",
		"Service-Signature":        "t=1700000000,v1=" + mac("whsec_a") + ",v1=" + mac("whsec_b"),
		"Service-Event-Id":         "evt_1",
		"Service-Event-Type":       "invoice.paid",
		"Service-Environment":      "test",
		"Service-Delivery-Attempt": "3",
	}
	for k, v := range want {
		if got.Get(k) != v {
			t.Errorf("%s = %q, want %q", k, got.Get(k), v)
		}
	}
	if string(body) != `{"id":"evt_1"}` {
		t.Errorf("body %s", body)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestLiveRefusesPrivateAddresses(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	// httptest listens on 127.0.0.1; "localhost" goes through name resolution first.
	for _, u := range []string{srv.URL, strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)} {
		o := New(Options{}).Send(context.Background(), msg(u, core.EnvLive))
		if o.Acknowledged() || o.StatusCode != 0 || !strings.Contains(o.Err, "not public") {
			t.Errorf("live %s: %+v", u, o)
		}
	}
	if hits.Load() != 0 {
		t.Fatal("a live delivery reached loopback")
	}
	if o := New(Options{}).Send(context.Background(), msg(srv.URL, core.EnvTest)); !o.Acknowledged() {
		t.Errorf("test mode may reach loopback: %+v", o)
	}
	if o := New(Options{AllowPrivate: true}).Send(context.Background(), msg(srv.URL, core.EnvLive)); !o.Acknowledged() {
		t.Errorf("AllowPrivate: %+v", o)
	}
}

func TestPublic(t *testing.T) {
	for s, want := range map[string]bool{
		"8.8.8.8": true, "2606:4700:4700::1111": true, "93.184.216.34": true,
		"127.0.0.1": false, "::1": false, "10.1.2.3": false, "172.16.0.1": false, "192.168.1.1": false,
		"169.254.169.254": false, "fe80::1": false, "fd00::1": false, "0.0.0.0": false, "::": false,
		"100.64.0.1": false, "::ffff:127.0.0.1": false, "::ffff:10.0.0.1": false, "224.0.0.1": false,
	} {
		if got := Public(netip.MustParseAddr(s)); got != want {
			t.Errorf("Public(%s) = %v", s, got)
		}
	}
}

func TestRedirectNotFollowed(t *testing.T) {
	var followed atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { followed.Add(1) }))
	defer target.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL, http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	o := New(Options{}).Send(context.Background(), msg(srv.URL, core.EnvTest))
	if o.StatusCode != 307 || o.Acknowledged() || followed.Load() != 0 {
		t.Fatalf("redirect: %+v, followed %d", o, followed.Load())
	}
}

func TestTimeoutAndExcerpt(t *testing.T) {
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	defer close(release)
	start := time.Now()
	o := New(Options{Timeout: 150 * time.Millisecond}).Send(context.Background(), msg(slow.URL, core.EnvTest))
	if o.Acknowledged() || !strings.HasPrefix(o.Err, "timeout") || time.Since(start) > 2*time.Second {
		t.Fatalf("timeout: %+v after %v", o, time.Since(start))
	}

	big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(500)
		_, _ = w.Write([]byte(strings.Repeat("x", 100_000)))
	}))
	defer big.Close()
	o = New(Options{}).Send(context.Background(), msg(big.URL, core.EnvTest))
	if o.StatusCode != 500 || len(o.Excerpt) != webhooks.ExcerptLimit || o.Err != "" {
		t.Fatalf("excerpt: status %d, %d bytes, err %q", o.StatusCode, len(o.Excerpt), o.Err)
	}
}
