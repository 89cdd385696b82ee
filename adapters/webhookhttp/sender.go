// Package webhookhttp sends webhook deliveries over HTTP (webhooks.Sender): a signed POST of
// the event envelope with the D10 headers, a 10 s timeout, no redirects followed, the response
// body read up to a 4 KiB excerpt, and, in every mode, no destination that is not a public
// address (webhooks.PublicAddress) unless the development flag allows private ones.
package webhookhttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"syscall"
	"time"

	"github.com/kassa-pay/kassa/adapters/signing"
	"github.com/kassa-pay/kassa/modules/webhooks"
	"github.com/kassa-pay/kassa/ports"
)

// Header names of a delivery (D10).
const (
	HeaderSignature   = signing.HeaderName
	HeaderEventID     = "Service-Event-Id"
	HeaderEventType   = "Service-Event-Type"
	HeaderEnvironment = "Service-Environment"
	HeaderAttempt     = "Service-Delivery-Attempt"
)

// UserAgent identifies Kassa's deliveries.
const UserAgent = "Kassa-Webhooks/1.0"

// Options tune a Sender; zero values take the defaults.
type Options struct {
	// Timeout bounds a whole delivery (connect, send, response, body excerpt); default
	// webhooks.Timeout (10 s).
	Timeout time.Duration
	// AllowPrivate lets deliveries reach loopback, private, link-local and other addresses
	// that are not public (KASSA_WEBHOOK_ALLOW_PRIVATE, the development flag). Without it
	// every dialled address is checked, in test mode as in live mode.
	AllowPrivate bool
	// ExcerptLimit caps the response body read; default webhooks.ExcerptLimit (4 KiB).
	ExcerptLimit int
	// resolve replaces name resolution (tests: a name that resolves to loopback).
	resolve func(ctx context.Context, host string) ([]netip.Addr, error)
}

// Sender implements webhooks.Sender.
type Sender struct {
	o      Options
	client *http.Client
}

var _ webhooks.Sender = (*Sender)(nil)

// New returns a Sender.
func New(o Options) *Sender {
	if o.Timeout <= 0 {
		o.Timeout = webhooks.Timeout
	}
	if o.ExcerptLimit <= 0 {
		o.ExcerptLimit = webhooks.ExcerptLimit
	}
	return &Sender{o: o, client: newClient(o)}
}

// ErrForbiddenAddress is the failure of a delivery whose host resolves to an address that is
// not public.
var ErrForbiddenAddress = errors.New("destination address is not public")

// newClient returns the HTTP client of deliveries: o.Timeout per request (default
// webhooks.Timeout), no proxy, no redirect followed (a 3xx is the answer), and unless
// o.AllowPrivate every address it connects to checked with webhooks.PublicAddress after name
// resolution.
func newClient(o Options) *http.Client {
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = webhooks.Timeout
	}
	d := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	if !o.AllowPrivate {
		// Control runs for every address the dialer connects to, after name resolution, so
		// the check applies to the IP actually used: a host that resolves to a public address
		// when the URL is saved and to a private one at delivery time (DNS rebinding) is
		// refused.
		d.Control = func(network, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("%w: %s", ErrForbiddenAddress, address)
			}
			if !webhooks.PublicAddress(ap.Addr()) {
				return fmt.Errorf("%w: %s", ErrForbiddenAddress, ap.Addr())
			}
			return nil
		}
	}
	dial := d.DialContext
	if o.resolve != nil {
		dial = func(ctx context.Context, network, address string) (net.Conn, error) {
			host, port, err := net.SplitHostPort(address)
			if err != nil {
				return nil, err
			}
			ips, err := o.resolve(ctx, host)
			if err != nil {
				return nil, err
			}
			for _, ip := range ips {
				c, dErr := d.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
				if dErr == nil {
					return c, nil
				}
				err = dErr
			}
			return nil, err
		}
	}
	t := &http.Transport{
		Proxy:             nil, // a proxy from the environment would dial on our behalf, past the check
		DialContext:       dial,
		ForceAttemptHTTP2: true,
		MaxIdleConns:      100,
		// At least as many kept-alive connections per host as the worker sends to it at once
		// (its Concurrency, 32 by default; 64 leaves room for a larger setting): with fewer,
		// every delivery beyond them closed its connection after the answer and the next one
		// dialled a new one.
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
		DisableCompression:    true,
	}
	return &http.Client{
		Transport: t,
		Timeout:   timeout,
		// Redirects are not followed: the 3xx is the answer, and it does not acknowledge.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Send performs one delivery and reports its outcome.
//
// Inside a unit of work it sends nothing and answers ports.ErrInsideTransaction as its outcome.
func (s *Sender) Send(ctx context.Context, m webhooks.Message) webhooks.Outcome {
	if err := ports.OutsideTransaction(ctx); err != nil {
		return webhooks.Outcome{Err: err.Error()}
	}
	c := s.client
	ctx, cancel := context.WithTimeout(ctx, s.o.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.URL, bytes.NewReader(m.Body))
	if err != nil {
		return webhooks.Outcome{Err: "invalid request: " + err.Error()}
	}
	req.ContentLength = int64(len(m.Body))
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", UserAgent)
	h.Set(HeaderSignature, signing.Header(m.Timestamp, m.Body, m.Secrets...))
	h.Set(HeaderEventID, m.EventID)
	h.Set(HeaderEventType, m.EventType)
	h.Set(HeaderEnvironment, string(m.Environment))
	h.Set(HeaderAttempt, strconv.Itoa(m.Attempt))

	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return webhooks.Outcome{Latency: time.Since(start), Err: describe(err)}
	}
	defer resp.Body.Close()
	// The status decides; the body only feeds the excerpt, so a failure while reading it (a
	// slow or cut-off body) is not a failed delivery. The rest of a longer body is not read.
	body, _ := io.ReadAll(io.LimitReader(resp.Body, int64(s.o.ExcerptLimit)))
	// A short remainder is read to its end so that the connection can be kept alive for the
	// next delivery; a longer one is dropped with the connection.
	_, _ = io.CopyN(io.Discard, resp.Body, drainLimit)
	return webhooks.Outcome{StatusCode: resp.StatusCode, Latency: time.Since(start), Excerpt: webhooks.Excerpt(body)}
}

// drainLimit is how much of a response body beyond the excerpt is read so that its connection
// can be reused.
const drainLimit = 16 << 10

// describe turns a transport error into the recorded message.
func describe(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, ErrForbiddenAddress):
		var op *net.OpError
		if errors.As(err, &op) && op.Err != nil {
			return op.Err.Error()
		}
		return ErrForbiddenAddress.Error()
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return "timeout: no answer within the delivery timeout"
	}
	return err.Error()
}
