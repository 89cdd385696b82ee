package postgres_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
)

// tcpProxy forwards connections to upstream until cut, which closes them all and refuses new
// ones (the database is down, as in a restart) until restore.
type tcpProxy struct {
	addr     string
	upstream string
	mu       sync.Mutex
	ln       net.Listener
	conns    []net.Conn
}

func newTCPProxy(t *testing.T, upstream string) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{addr: ln.Addr().String(), upstream: upstream}
	p.serve(ln)
	t.Cleanup(p.cut)
	return p
}

func (p *tcpProxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", p.upstream)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, u)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(u, c); u.Close() }()
			go func() { _, _ = io.Copy(c, u); c.Close() }()
		}
	}()
}

func (p *tcpProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func (p *tcpProxy) restore(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	p.serve(ln)
}

// After an outage of the database the webhook workers LISTEN again as soon as it is back, not
// after a back-off that grew during the outage: an 8-second outage left the listener retrying
// 7 s after the database returned (and a longer one up to a minute), with deliveries found only
// by polling meanwhile.
func TestListenWebhooksReconnectsAtOnceAfterAnOutage(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dbURL, drop, err := pgtest.CreateDatabase(ctx, pgtest.AdminURL())
	if err != nil {
		t.Skipf("no database: %v", err)
	}
	t.Cleanup(drop)
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newTCPProxy(t, u.Host)
	via := *u
	via.Host = proxy.addr
	db, err := postgres.Open(ctx, dbURL) // the notifier goes to the database directly
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })

	wake, err := postgres.ListenWebhooks(ctx, via.String(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	drain := func() {
		for {
			select {
			case <-wake:
			default:
				return
			}
		}
	}
	notified := func(within time.Duration) bool {
		t.Helper()
		drain()
		if _, err := db.Exec(`SELECT pg_notify($1, '')`, postgres.WebhookChannel); err != nil {
			t.Fatal(err)
		}
		select {
		case <-wake:
			return true
		case <-time.After(within):
			return false
		}
	}
	if !notified(5 * time.Second) {
		t.Fatal("no notification before the outage")
	}

	proxy.cut()
	time.Sleep(8 * time.Second)
	drain()
	proxy.restore(t)
	back := time.Now()
	select {
	case <-wake: // the reconnection wakes the workers
	case <-time.After(3 * time.Second):
		t.Fatal("the listener did not reconnect within 3 s of the database coming back")
	}
	t.Logf("listening again %v after the database came back", time.Since(back).Round(time.Millisecond))
	if !notified(2 * time.Second) {
		t.Fatal("a notification after the outage was not received")
	}
}
