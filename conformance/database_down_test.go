package conformance

import (
	"context"
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/conformance/harness"
	"github.com/kassa-pay/kassa/core"
	op "github.com/kassa-pay/kassa/openapi/gen/operatorapi"
)

// cuttableProxy forwards TCP connections to a PostgreSQL server until it is cut: then it
// refuses new connections and closes the open ones, as a database that went down; restored,
// it listens on the same address again.
type cuttableProxy struct {
	mu     sync.Mutex
	addr   string
	target string
	l      net.Listener
	conns  map[net.Conn]struct{}
}

func (p *cuttableProxy) listen() error {
	l, err := net.Listen("tcp", p.addr)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.l, p.addr = l, l.Addr().String()
	p.mu.Unlock()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go p.forward(c)
		}
	}()
	return nil
}

func (p *cuttableProxy) forward(c net.Conn) {
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	if p.conns == nil {
		p.conns = map[net.Conn]struct{}{}
	}
	p.conns[c], p.conns[up] = struct{}{}, struct{}{}
	p.mu.Unlock()
	go func() { _, _ = io.Copy(up, c); up.Close() }()
	_, _ = io.Copy(c, up)
	c.Close()
}

// cut closes the listener and every forwarded connection.
func (p *cuttableProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.l.Close()
	for c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// While PostgreSQL cannot be reached the APIs answer 503 api_error/service_unavailable with
// Retry-After (documented on every operation), not an opaque 500; when it is back they answer
// again without a restart.
func TestDatabaseDown(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "7", "while the database is down every API answers 503 service_unavailable with Retry-After, and recovers", func(t *testing.T) {
		t.Parallel()
		if !target.CanLaunchSiblings() {
			t.Skip("needs a server the harness started: the case cuts its database connection")
		}
		proxy := &cuttableProxy{addr: "127.0.0.1:0"}
		srv, drop, err := target.LoneVia(context.Background(), "database-down", harness.Options{}, func(dbURL string) (string, error) {
			u, err := url.Parse(dbURL)
			if err != nil {
				return "", err
			}
			proxy.target = u.Host
			if err := proxy.listen(); err != nil {
				return "", err
			}
			u.Host = proxy.addr
			return u.String(), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		defer drop()
		defer srv.Stop()
		defer func() { proxy.mu.Lock(); proxy.l.Close(); proxy.mu.Unlock() }()

		created, err := operatorAt(t, srv).CreateMerchantWithResponse(context.Background(), op.MerchantCreate{
			Name: "Outage " + core.RandomBase62(6), Country: "DE", Email: "owner@example.com"})
		if err != nil || created.JSON201 == nil {
			t.Fatalf("create merchant: %v %v", err, created)
		}
		key := created.JSON201.TestKey
		if r := rawAt(t, srv.BaseURL, "GET", "/v1/checkout/sessions", key, "", nil); r.Status != 200 {
			t.Fatalf("before the outage: %d %s", r.Status, r.Body)
		}

		proxy.cut()
		unavailable := func(what string, r Raw) {
			t.Helper()
			wantError(t, r.Status, r.Header, r.Body, 503, "api_error", "service_unavailable", "")
			if r.Header.Get("Retry-After") == "" {
				t.Fatalf("%s: 503 without Retry-After", what)
			}
		}
		unavailable("list sessions", rawAt(t, srv.BaseURL, "GET", "/v1/checkout/sessions", key, "", nil))
		unavailable("keyed create", rawAt(t, srv.BaseURL, "POST", "/v1/checkout/sessions", key,
			`{"amount": 2500, "currency": "eur", "customer_name": "Ada Lovelace", "customer_email": "ada@example.com"}`,
			map[string]string{"Idempotency-Key": "outage-" + core.RandomBase62(8)}))
		unavailable("operator", rawAt(t, srv.BaseURL, "POST", "/operator/v1/merchants", srv.OperatorToken,
			`{"name": "Shop", "country": "DE", "email": "o@example.com"}`, nil))
		unavailable("dashboard sign-in", rawAt(t, srv.DashboardURL, "POST", "/api/v1/session", "",
			`{"email": "owner@example.com", "password": "not the password"}`, nil))
		unavailable("browser API", rawAt(t, srv.CheckoutURL, "GET", "/api/v1/checkout/sessions/cs_"+core.RandomBase62(24), "cs_x_secret_"+core.RandomBase62(32), "", nil))

		if err := proxy.listen(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(15 * time.Second)
		for {
			r := rawAt(t, srv.BaseURL, "GET", "/v1/checkout/sessions", key, "", nil)
			if r.Status == 200 {
				break
			}
			if r.Status != 503 || time.Now().After(deadline) {
				t.Fatalf("after the database came back: %d %s", r.Status, r.Body)
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
}
