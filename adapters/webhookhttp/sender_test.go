package webhookhttp

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
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
	// The receivers of these tests listen on loopback: the development flag lets them be reached.
	o := New(Options{AllowPrivate: true}).Send(context.Background(), msg(srv.URL, core.EnvTest))
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

// Every mode refuses addresses that are not public, checked on the address connected to after
// name resolution: "localhost" passes no name check here and is refused at connect time.
func TestRefusesPrivateAddresses(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		io.WriteString(w, "internal service secret")
	}))
	defer srv.Close()
	// httptest listens on 127.0.0.1; "localhost" goes through name resolution first.
	for _, env := range []core.Environment{core.EnvLive, core.EnvTest} {
		for _, u := range []string{srv.URL, strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)} {
			o := New(Options{}).Send(context.Background(), msg(u, env))
			if o.Acknowledged() || o.StatusCode != 0 || !strings.Contains(o.Err, "not public") || o.Excerpt != "" {
				t.Errorf("%s %s: %+v", env, u, o)
			}
		}
	}
	if hits.Load() != 0 {
		t.Fatal("a delivery reached loopback")
	}
	for _, env := range []core.Environment{core.EnvLive, core.EnvTest} {
		if o := New(Options{AllowPrivate: true}).Send(context.Background(), msg(srv.URL, env)); !o.Acknowledged() {
			t.Errorf("AllowPrivate %s: %+v", env, o)
		}
	}
}

// A name that resolves to a loopback address is refused when connecting, whatever it resolved
// to when the endpoint was saved (DNS rebinding): the resolver here answers 127.0.0.1 for
// rebind.example.
func TestRefusesNameResolvingToLoopback(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	port := srv.URL[strings.LastIndexByte(srv.URL, ':')+1:]
	c := newClient(Options{Timeout: 2 * time.Second, resolve: func(ctx context.Context, host string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}})
	_, err := c.Post("http://rebind.example:"+port+"/", "application/json", strings.NewReader("{}"))
	if !errors.Is(err, ErrForbiddenAddress) || hits.Load() != 0 {
		t.Fatalf("err %v, hits %d", err, hits.Load())
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
	o := New(Options{AllowPrivate: true}).Send(context.Background(), msg(srv.URL, core.EnvLive))
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
	o := New(Options{Timeout: 150 * time.Millisecond, AllowPrivate: true}).Send(context.Background(), msg(slow.URL, core.EnvTest))
	if o.Acknowledged() || !strings.HasPrefix(o.Err, "timeout") || time.Since(start) > 2*time.Second {
		t.Fatalf("timeout: %+v after %v", o, time.Since(start))
	}

	big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(500)
		_, _ = w.Write([]byte(strings.Repeat("x", 100_000)))
	}))
	defer big.Close()
	o = New(Options{AllowPrivate: true}).Send(context.Background(), msg(big.URL, core.EnvTest))
	if o.StatusCode != 500 || len(o.Excerpt) != webhooks.ExcerptLimit || o.Err != "" {
		t.Fatalf("excerpt: status %d, %d bytes, err %q", o.StatusCode, len(o.Excerpt), o.Err)
	}
}

// A failed delivery says what failed in the words of the endpoint's URL: never the address its
// host resolved to, nor the resolver's address (the delivery log is the merchant's to read,
// the network is Kassa's).
func TestFailureMessagesHideInternalAddresses(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close() // nothing listens there any more: connection refused
	resolveTo := func(a string) func(context.Context, string) ([]netip.Addr, error) {
		return func(context.Context, string) ([]netip.Addr, error) { return []netip.Addr{netip.MustParseAddr(a)}, nil }
	}
	for _, c := range []struct {
		name string
		o    Options
		want string
	}{
		{"resolves to a private address", Options{resolve: resolveTo("10.1.2.3")},
			"refused: hooks.example resolves to an address that is not public (deliveries go to public addresses only)"},
		{"resolves to loopback", Options{resolve: resolveTo("127.0.0.1")},
			"refused: hooks.example resolves to an address that is not public (deliveries go to public addresses only)"},
		{"connection refused", Options{AllowPrivate: true, resolve: resolveTo("127.0.0.1")},
			"connection refused by hooks.example:" + port},
		{"not found by the resolver", Options{resolve: func(_ context.Context, host string) ([]netip.Addr, error) {
			return nil, &net.DNSError{Err: "no such host", Name: host, Server: "10.0.0.2:53", IsNotFound: true}
		}}, "name resolution failed: hooks.example was not found"},
		{"resolver timeout", Options{resolve: func(_ context.Context, host string) ([]netip.Addr, error) {
			return nil, &net.DNSError{Err: "i/o timeout", Name: host, Server: "10.0.0.2:53", IsTimeout: true}
		}}, "name resolution failed: no answer for hooks.example in time"},
		{"resolver failure", Options{resolve: func(_ context.Context, host string) ([]netip.Addr, error) {
			return nil, &net.DNSError{Err: "server misbehaving", Name: host, Server: "10.0.0.2:53"}
		}}, "name resolution failed for hooks.example"},
	} {
		o := New(c.o).Send(context.Background(), msg("http://hooks.example:"+port+"/hook", core.EnvLive))
		if o.Err != c.want {
			t.Errorf("%s: %q, want %q", c.name, o.Err, c.want)
		}
		for _, internal := range []string{"10.1.2.3", "127.0.0.1", "10.0.0.2", ":53"} {
			if strings.Contains(o.Err, internal) {
				t.Errorf("%s: %q names the internal address %s", c.name, o.Err, internal)
			}
		}
	}
}
