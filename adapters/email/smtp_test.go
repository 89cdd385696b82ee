package email_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"mime"
	"mime/multipart"
	"net"
	"net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/kassa-pay/kassa/adapters/email"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// received is one message the test server accepted.
type received struct {
	authUser string
	from     string
	to       []string
	data     []byte
	tls      bool
}

// testServer is an in-process SMTP server (emersion/go-smtp) on 127.0.0.1:0 that accepts
// AUTH PLAIN for one user and records what it receives.
type testServer struct {
	addr string
	port int
	user string
	pass string

	mu       sync.Mutex
	got      []received
	authFail int
	rcptErr  error // returned by RCPT TO when set
}

type serverMode int

const (
	plainServer    serverMode = iota // no TLS at all, insecure auth allowed (localhost)
	startTLSServer                   // STARTTLS offered
	implicitServer                   // TLS from the first byte
)

func newTestServer(t *testing.T, mode serverMode, cert *tls.Certificate) *testServer {
	t.Helper()
	ts := &testServer{user: "kassa", pass: "s3cret"}
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		_, isTLS := c.TLSConnectionState()
		return &session{ts: ts, tls: isTLS}, nil
	}))
	srv.Domain = "localhost"
	srv.ReadTimeout = 10 * time.Second
	srv.WriteTimeout = 10 * time.Second
	srv.MaxMessageBytes = 2 << 20
	srv.AllowInsecureAuth = mode == plainServer
	var l net.Listener
	var err error
	l, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if mode != plainServer {
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{*cert}, MinVersion: tls.VersionTLS12}
	}
	if mode == implicitServer {
		l = tls.NewListener(l, srv.TLSConfig)
	}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	ts.addr = l.Addr().String()
	ts.port = l.Addr().(*net.TCPAddr).Port
	return ts
}

func (ts *testServer) messages() []received {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return append([]received(nil), ts.got...)
}

type session struct {
	ts   *testServer
	tls  bool
	user string
	cur  received
}

func (s *session) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *session) Auth(mech string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(identity, username, password string) error {
		if username != s.ts.user || password != s.ts.pass {
			s.ts.mu.Lock()
			s.ts.authFail++
			s.ts.mu.Unlock()
			return smtp.ErrAuthFailed
		}
		s.user = username
		return nil
	}), nil
}

func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	if s.user == "" {
		return smtp.ErrAuthRequired
	}
	s.cur = received{authUser: s.user, from: from, tls: s.tls}
	return nil
}

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.ts.mu.Lock()
	rerr := s.ts.rcptErr
	s.ts.mu.Unlock()
	if rerr != nil {
		return rerr
	}
	s.cur.to = append(s.cur.to, to)
	return nil
}

func (s *session) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.cur.data = b
	s.ts.mu.Lock()
	s.ts.got = append(s.ts.got, s.cur)
	s.ts.mu.Unlock()
	return nil
}

func (s *session) Reset()        { s.cur = received{} }
func (s *session) Logout() error { return nil }

// selfSigned returns a certificate for 127.0.0.1 and a pool that trusts it.
func selfSigned(t *testing.T) (*tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kassa test smtp"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

var testScope = core.Scope{MerchantID: "mer_test", Env: core.EnvTest}

func testMessage() ports.Message {
	return ports.Message{
		Scope:   testScope,
		To:      "buyer@example.com",
		Subject: "Your receipt from Café Ünïcode",
		Text:    "Amount paid: 10.50 EUR\nThank you.\n",
		HTML:    "<p>Amount paid: <b>10.50 EUR</b></p>",
		Headers: map[string]string{"X-Kassa-Payment": "py_123"},
	}
}

// parsed is a received message taken apart.
type parsed struct {
	header    mail.Header
	subject   string
	text      string
	html      string
	mediaType string
}

func parseMIME(t *testing.T, data []byte) parsed {
	t.Helper()
	msg, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("received message does not parse: %v\n%s", err, data)
	}
	var p parsed
	p.header = msg.Header
	dec := new(mime.WordDecoder)
	if p.subject, err = dec.DecodeHeader(msg.Header.Get("Subject")); err != nil {
		t.Fatal(err)
	}
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil {
		t.Fatal(err)
	}
	p.mediaType = mt
	if !strings.HasPrefix(mt, "multipart/") {
		t.Fatalf("Content-Type = %s, want multipart/alternative", mt)
	}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(part) // quoted-printable is decoded by the reader
		if err != nil {
			t.Fatal(err)
		}
		pt, _, _ := mime.ParseMediaType(part.Header.Get("Content-Type"))
		switch pt {
		case "text/plain":
			p.text = string(body)
		case "text/html":
			p.html = string(body)
		default:
			t.Errorf("unexpected part %s", pt)
		}
	}
	return p
}

func TestSMTPSendsMultipartWithAuth(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, plainServer, nil)
	m, err := email.NewSMTP(email.SMTPConfig{
		Host: "127.0.0.1", Port: ts.port, Username: ts.user, Password: ts.pass,
		TLS: email.TLSOpportunistic, Timeout: 5 * time.Second, From: "Kassa Receipts <receipts@kassa.example>",
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Send(context.Background(), testMessage()); err != nil {
		t.Fatalf("Send: %v", err)
	}
	got := ts.messages()
	if len(got) != 1 {
		t.Fatalf("server received %d messages, want 1", len(got))
	}
	r := got[0]
	if r.authUser != ts.user {
		t.Errorf("authenticated user = %q, want %q (AUTH PLAIN was not used)", r.authUser, ts.user)
	}
	if r.from != "receipts@kassa.example" || len(r.to) != 1 || r.to[0] != "buyer@example.com" {
		t.Errorf("envelope = %q → %q", r.from, r.to)
	}
	p := parseMIME(t, r.data)
	if p.mediaType != "multipart/alternative" {
		t.Errorf("media type = %s, want multipart/alternative", p.mediaType)
	}
	if p.subject != "Your receipt from Café Ünïcode" {
		t.Errorf("Subject = %q", p.subject)
	}
	from, err := mail.ParseAddress(p.header.Get("From"))
	if err != nil || from.Address != "receipts@kassa.example" || from.Name != "Kassa Receipts" {
		t.Errorf("From = %q (%v)", p.header.Get("From"), err)
	}
	to, err := mail.ParseAddress(p.header.Get("To"))
	if err != nil || to.Address != "buyer@example.com" {
		t.Errorf("To = %q (%v)", p.header.Get("To"), err)
	}
	if p.header.Get("X-Kassa-Payment") != "py_123" {
		t.Errorf("X-Kassa-Payment = %q", p.header.Get("X-Kassa-Payment"))
	}
	if p.header.Get("Message-Id") == "" || p.header.Get("Date") == "" {
		t.Errorf("Message-ID %q, Date %q: both wanted", p.header.Get("Message-Id"), p.header.Get("Date"))
	}
	if p.text != "Amount paid: 10.50 EUR\nThank you.\n" && p.text != "Amount paid: 10.50 EUR\r\nThank you.\r\n" {
		t.Errorf("text part = %q", p.text)
	}
	if p.html != "<p>Amount paid: <b>10.50 EUR</b></p>" {
		t.Errorf("html part = %q", p.html)
	}
}

func TestSMTPMessageFromOverridesDefault(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, plainServer, nil)
	m, err := email.NewSMTP(email.SMTPConfig{Host: "localhost", Port: ts.port, Username: ts.user, Password: ts.pass,
		TLS: email.TLSOpportunistic, From: "receipts@kassa.example"})
	if err != nil {
		t.Fatal(err)
	}
	msg := testMessage()
	msg.From = "Shop <shop@merchant.example>"
	msg.HTML = ""
	if err := m.Send(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	got := ts.messages()
	if len(got) != 1 || got[0].from != "shop@merchant.example" {
		t.Fatalf("got %+v", got)
	}
}

func TestSMTPStartTLSAndImplicitTLS(t *testing.T) {
	t.Parallel()
	cert, pool := selfSigned(t)
	for _, c := range []struct {
		name string
		mode serverMode
		tls  email.TLSMode
	}{
		{"starttls", startTLSServer, email.TLSStartTLS},
		{"implicit", implicitServer, email.TLSImplicit},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ts := newTestServer(t, c.mode, cert)
			m, err := email.NewSMTP(email.SMTPConfig{Host: "127.0.0.1", Port: ts.port, Username: ts.user, Password: ts.pass,
				TLS: c.tls, Timeout: 5 * time.Second, From: "receipts@kassa.example",
				TLSConfig: &tls.Config{RootCAs: pool}})
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Send(context.Background(), testMessage()); err != nil {
				t.Fatalf("Send: %v", err)
			}
			got := ts.messages()
			if len(got) != 1 || !got[0].tls || got[0].authUser != ts.user {
				t.Fatalf("got %d messages; tls=%v auth=%q", len(got), len(got) == 1 && got[0].tls, func() string {
					if len(got) == 1 {
						return got[0].authUser
					}
					return ""
				}())
			}
			p := parseMIME(t, got[0].data)
			if p.text == "" || p.html == "" {
				t.Errorf("parts missing: text %q html %q", p.text, p.html)
			}
		})
	}
}

func TestSMTPMandatoryStartTLSRefusesPlainServer(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, plainServer, nil)
	m, err := email.NewSMTP(email.SMTPConfig{Host: "127.0.0.1", Port: ts.port, Username: ts.user, Password: ts.pass,
		TLS: email.TLSStartTLS, Timeout: 5 * time.Second, From: "receipts@kassa.example"})
	if err != nil {
		t.Fatal(err)
	}
	err = m.Send(context.Background(), testMessage())
	if err == nil {
		t.Fatal("sent over a connection without TLS")
	}
	if ports.IsPermanent(err) {
		t.Errorf("a server without STARTTLS is a transient (configuration) failure, got permanent: %v", err)
	}
	if len(ts.messages()) != 0 {
		t.Error("the server received a message")
	}
}

func TestSMTPFailuresAreClassified(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		rcptErr   error
		permanent bool
	}{
		{"550 user unknown", &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "<buyer@example.com>: no such user"}, true},
		{"451 try later", &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "greylisted <buyer@example.com>"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ts := newTestServer(t, plainServer, nil)
			ts.mu.Lock()
			ts.rcptErr = c.rcptErr
			ts.mu.Unlock()
			m, err := email.NewSMTP(email.SMTPConfig{Host: "127.0.0.1", Port: ts.port, Username: ts.user, Password: ts.pass,
				TLS: email.TLSOpportunistic, Timeout: 5 * time.Second, From: "receipts@kassa.example"})
			if err != nil {
				t.Fatal(err)
			}
			err = m.Send(context.Background(), testMessage())
			if err == nil {
				t.Fatal("no error")
			}
			if ports.IsPermanent(err) != c.permanent {
				t.Errorf("IsPermanent = %v, want %v: %v", ports.IsPermanent(err), c.permanent, err)
			}
			if strings.Contains(err.Error(), "buyer@example.com") {
				t.Errorf("error names the recipient: %v", err)
			}
			var se *email.SendError
			if !errors.As(err, &se) || se.Code != c.rcptErr.(*smtp.SMTPError).Code {
				t.Errorf("SendError code = %+v", se)
			}
		})
	}
	t.Run("wrong password", func(t *testing.T) {
		t.Parallel()
		ts := newTestServer(t, plainServer, nil)
		m, _ := email.NewSMTP(email.SMTPConfig{Host: "127.0.0.1", Port: ts.port, Username: ts.user, Password: "wrong",
			TLS: email.TLSOpportunistic, Timeout: 5 * time.Second, From: "receipts@kassa.example"})
		err := m.Send(context.Background(), testMessage())
		if err == nil || ports.IsPermanent(err) {
			t.Fatalf("err = %v, want a transient failure", err)
		}
		if strings.Contains(err.Error(), "wrong") {
			t.Errorf("error shows the password: %v", err)
		}
	})
	t.Run("connection refused", func(t *testing.T) {
		t.Parallel()
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		m, _ := email.NewSMTP(email.SMTPConfig{Host: "127.0.0.1", Port: port, TLS: email.TLSOpportunistic,
			Timeout: 2 * time.Second, From: "receipts@kassa.example"})
		err = m.Send(context.Background(), testMessage())
		if err == nil || ports.IsPermanent(err) {
			t.Fatalf("err = %v, want a transient failure", err)
		}
	})
	t.Run("invalid message", func(t *testing.T) {
		t.Parallel()
		m, _ := email.NewSMTP(email.SMTPConfig{Host: "127.0.0.1", Port: 1, TLS: email.TLSOpportunistic, From: "receipts@kassa.example"})
		msg := testMessage()
		msg.To = "not an address"
		if err := m.Send(context.Background(), msg); !ports.IsPermanent(err) {
			t.Fatalf("err = %v, want permanent", err)
		}
	})
}

func TestNewSMTPConfig(t *testing.T) {
	t.Parallel()
	bad := []email.SMTPConfig{
		{Host: "", From: "a@b.example"},
		{Host: "smtp.example.com", TLS: email.TLSOpportunistic, From: "a@b.example"}, // clear text off loopback
		{Host: "smtp.example.com", TLS: "none", From: "a@b.example"},
		{Host: "smtp.example.com", From: ""},
		{Host: "smtp.example.com", From: "a@b.example\r\nBcc: x@y.example"},
		{Host: "smtp.example.com", Password: "p", From: "a@b.example"},
		{Host: "smtp.example.com", Port: 70000, From: "a@b.example"},
	}
	for i, c := range bad {
		if _, err := email.NewSMTP(c); err == nil {
			t.Errorf("case %d: NewSMTP(%+v) accepted", i, c)
		}
	}
	for _, c := range []email.SMTPConfig{
		{Host: "smtp.example.com", From: "a@b.example"},
		{Host: "smtp.example.com", TLS: email.TLSImplicit, From: "Shop <a@b.example>"},
		{Host: "localhost", TLS: email.TLSOpportunistic, Port: 1025, From: "a@b.example"},
		{Host: "::1", TLS: email.TLSOpportunistic, From: "a@b.example"},
	} {
		if _, err := email.NewSMTP(c); err != nil {
			t.Errorf("NewSMTP(%+v): %v", c, err)
		}
	}
}

// A queued mail sent again (a worker that died after the server accepted it and before it was
// recorded) carries the same Message-ID, derived from its mail id, so that the receiving side
// can recognise the duplicate; a message outside the queue gets a fresh one.
func TestSMTPMessageIDOfAQueuedMailIsStable(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, plainServer, nil)
	m, err := email.NewSMTP(email.SMTPConfig{Host: "127.0.0.1", Port: ts.port, Username: ts.user, Password: ts.pass,
		TLS: email.TLSOpportunistic, From: "Kassa <receipts@kassa.example>"})
	if err != nil {
		t.Fatal(err)
	}
	queued := testMessage()
	queued.MailID = "mob_abc123"
	for _, msg := range []ports.Message{queued, queued, testMessage()} {
		if err := m.Send(context.Background(), msg); err != nil {
			t.Fatal(err)
		}
	}
	got := ts.messages()
	if len(got) != 3 {
		t.Fatalf("%d messages", len(got))
	}
	ids := make([]string, 3)
	for i, r := range got {
		ids[i] = parseMIME(t, r.data).header.Get("Message-Id")
	}
	if ids[0] != "<mob_abc123@kassa.example>" || ids[1] != ids[0] {
		t.Errorf("Message-IDs of one queued mail sent twice: %q, %q", ids[0], ids[1])
	}
	if ids[2] == "" || ids[2] == ids[0] {
		t.Errorf("Message-ID of a message outside the queue: %q", ids[2])
	}
}
