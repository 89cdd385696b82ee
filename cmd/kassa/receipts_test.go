package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/adapters/sandbox"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/checkout"
	"github.com/kassa-pay/kassa/ports"
)

// smtpSink is an in-process SMTP server (emersion/go-smtp) on 127.0.0.1 without TLS that
// accepts AUTH PLAIN for kassa/s3cret and records every message. rcptErr, when set, answers
// RCPT TO with that error.
type smtpSink struct {
	port int

	mu      sync.Mutex
	got     [][]byte
	rcpt    []string
	rcptErr error
}

func newSMTPSink(t *testing.T) *smtpSink {
	t.Helper()
	sink := &smtpSink{}
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &sinkSession{sink: sink}, nil }))
	srv.Domain = "localhost"
	srv.AllowInsecureAuth = true
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	sink.port = l.Addr().(*net.TCPAddr).Port
	return sink
}

func (s *smtpSink) url() string {
	return fmt.Sprintf("smtp://kassa:s3cret@127.0.0.1:%d?tls=opportunistic", s.port)
}

func (s *smtpSink) messages() ([][]byte, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.got...), append([]string(nil), s.rcpt...)
}

type sinkSession struct {
	sink   *smtpSink
	authed bool
	to     []string
}

func (s *sinkSession) AuthMechanisms() []string { return []string{sasl.Plain} }
func (s *sinkSession) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != "kassa" || pass != "s3cret" {
			return smtp.ErrAuthFailed
		}
		s.authed = true
		return nil
	}), nil
}
func (s *sinkSession) Mail(string, *smtp.MailOptions) error {
	if !s.authed {
		return smtp.ErrAuthRequired
	}
	return nil
}
func (s *sinkSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.sink.mu.Lock()
	defer s.sink.mu.Unlock()
	if s.sink.rcptErr != nil {
		return s.sink.rcptErr
	}
	s.to = append(s.to, to)
	return nil
}
func (s *sinkSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.sink.mu.Lock()
	s.sink.got = append(s.sink.got, b)
	s.sink.rcpt = append(s.sink.rcpt, s.to...)
	s.sink.mu.Unlock()
	return nil
}
func (s *sinkSession) Reset()        { s.to = nil }
func (s *sinkSession) Logout() error { return nil }

// paySession creates a session of scope (customer grace@example.com, reference order-42) and
// pays it through the sandbox with source (a card number or an IBAN), as the browser API does.
func paySession(t *testing.T, a *app, scope core.Scope, source string) *checkout.Session {
	t.Helper()
	ctx := context.Background()
	amount, ref := int64(1999), "order-42"
	s, err := a.checkout.Create(ctx, core.Caller{Scope: scope, Onboarded: true}, checkout.CreateInput{
		Amount: &amount, Currency: "eur", CustomerName: "Grace Hopper", CustomerEmail: "grace@example.com", Reference: &ref})
	if err != nil {
		t.Fatal(err)
	}
	in := checkout.ConfirmInput{Method: ports.MethodCard, Card: &ports.CardDetails{Number: source, ExpMonth: 12, ExpYear: 2031, CVC: "123"}}
	if strings.HasPrefix(source, "DE") {
		in = checkout.ConfirmInput{Method: ports.MethodSEPADebit, SEPA: &ports.SEPADetails{IBAN: source, AccountHolder: "Grace Hopper"}}
	}
	res, err := a.checkout.Confirm(ctx, s.ID(), s.ClientSecret(), in)
	if err != nil {
		t.Fatal(err)
	}
	done := res.Session
	return done
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// The receipt of a card payment (queued with the payment) and of a SEPA payment (queued when
// a test clock advance settles it) reach a real SMTP server once each, rendered in full.
func TestReceiptsReachSMTP(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	a := wire(db, "https://pay.example.test", nil, clockWiring{})
	sink := newSMTPSink(t)
	w, err := mailWorker(quietLog(), a, config{SMTPURL: sink.url(), SMTPTestMail: true, MailFrom: "Shop <receipts@shop.example>"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	card := paySession(t, a, scope, "4242424242424242")
	sepa := paySession(t, a, scope, "DE89370400440532013000")
	if n, err := w.RunOnce(ctx); err != nil || n != 1 {
		t.Fatalf("first round: %d %v (only the card payment has succeeded)", n, err)
	}
	secs := int64(sandbox.SettleDelay/time.Second) + 1
	if _, err := a.testclock.Advance(ctx, scope, &secs, nil); err != nil {
		t.Fatal(err)
	}
	if n, err := w.RunOnce(ctx); err != nil || n != 1 {
		t.Fatalf("round after settlement: %d %v", n, err)
	}
	if n, err := w.RunOnce(ctx); err != nil || n != 0 {
		t.Fatalf("nothing left: %d %v", n, err)
	}

	got, rcpt := sink.messages()
	if len(got) != 2 || len(rcpt) != 2 || rcpt[0] != "grace@example.com" || rcpt[1] != "grace@example.com" {
		t.Fatalf("%d messages to %v", len(got), rcpt)
	}
	for i, want := range []struct{ paymentID, method string }{
		{card.Payment().ID(), "Visa •••• 4242"},
		{sepa.Payment().ID(), "SEPA Direct Debit •••• 3000"},
	} {
		msg, err := mail.ReadMessage(bytes.NewReader(got[i]))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(msg.Body)
		text := decodeQP(string(body))
		if msg.Header.Get("X-Kassa-Payment") != want.paymentID || !strings.Contains(msg.Header.Get("From"), "receipts@shop.example") {
			t.Errorf("message %d headers %v", i, msg.Header)
		}
		for _, s := range []string{"Receipt from Test merchant", "19.99", "order-42", want.method, want.paymentID, "text/html"} {
			if !strings.Contains(text, s) {
				t.Errorf("message %d lacks %q:\n%s", i, s, text)
			}
		}
	}
	var statuses []string
	if err := db.Select(&statuses, `SELECT status FROM mail_outbox WHERE merchant_id = $1 ORDER BY created`, scope.MerchantID); err != nil {
		t.Fatal(err)
	}
	if len(statuses) != 2 || statuses[0] != "sent" || statuses[1] != "sent" {
		t.Fatalf("outbox %v", statuses)
	}
}

// decodeQP undoes quoted-printable soft line breaks and the =XX escapes the test looks for.
func decodeQP(s string) string {
	s = strings.ReplaceAll(s, "=\r\n", "")
	s = strings.ReplaceAll(s, "=E2=80=A2", "•")
	return strings.ReplaceAll(s, "=3D", "=")
}

// A 4xx reply is retried later; a 5xx reply drops the receipt.
func TestReceiptFailuresRetryOrDrop(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	a := wire(db, "https://pay.example.test", nil, clockWiring{})
	sink := newSMTPSink(t)
	w, err := mailWorker(quietLog(), a, config{SMTPURL: sink.url(), SMTPTestMail: true, MailFrom: defaultMailFrom})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	paySession(t, a, scope, "4242424242424242")
	state := func() (status string, attempts int, due time.Time) {
		t.Helper()
		var row struct {
			Status   string    `db:"status"`
			Attempts int       `db:"attempts"`
			Next     time.Time `db:"next_attempt_at"`
		}
		if err := db.Get(&row, `SELECT status, attempts, next_attempt_at FROM mail_outbox WHERE merchant_id = $1`, scope.MerchantID); err != nil {
			t.Fatal(err)
		}
		return row.Status, row.Attempts, row.Next
	}

	sink.mu.Lock()
	sink.rcptErr = &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "try later"}
	sink.mu.Unlock()
	if n, err := w.RunOnce(ctx); err != nil || n != 1 {
		t.Fatalf("%d %v", n, err)
	}
	st, attempts, due := state()
	if st != "pending" || attempts != 1 || time.Until(due) < 20*time.Second {
		t.Fatalf("after a 451: %s, %d attempts, due in %s", st, attempts, time.Until(due))
	}
	// Make it due again; now the server refuses the recipient for good.
	if _, err := db.Exec(`UPDATE mail_outbox SET next_attempt_at = now() - interval '1 second' WHERE merchant_id = $1`, scope.MerchantID); err != nil {
		t.Fatal(err)
	}
	sink.mu.Lock()
	sink.rcptErr = &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such user"}
	sink.mu.Unlock()
	if n, err := w.RunOnce(ctx); err != nil || n != 1 {
		t.Fatalf("%d %v", n, err)
	}
	if st, attempts, _ := state(); st != "dropped" || attempts != 2 {
		t.Fatalf("after a 550: %s, %d attempts", st, attempts)
	}
	if got, _ := sink.messages(); len(got) != 0 {
		t.Fatalf("%d messages delivered", len(got))
	}
	var lastErr string
	if err := db.Get(&lastErr, `SELECT last_error FROM mail_outbox WHERE merchant_id = $1`, scope.MerchantID); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(lastErr, "grace@example.com") {
		t.Errorf("stored error names the recipient: %s", lastErr)
	}
}

// Without an SMTP URL receipts go to the development mailbox.
func TestReceiptsWithoutSMTPGoToTheMailbox(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	a := wire(db, "https://pay.example.test", nil, clockWiring{})
	w, err := mailWorker(quietLog(), a, config{MailFrom: defaultMailFrom})
	if err != nil {
		t.Fatal(err)
	}
	paySession(t, a, scope, "4242424242424242")
	if n, err := w.RunOnce(context.Background()); err != nil || n != 1 {
		t.Fatalf("%d %v", n, err)
	}
	var subjects []string
	if err := db.Select(&subjects, `SELECT subject FROM mailbox_messages WHERE merchant_id = $1 AND to_address = 'grace@example.com'`,
		scope.MerchantID); err != nil {
		t.Fatal(err)
	}
	if len(subjects) != 1 || subjects[0] != "Your receipt from Test merchant" {
		t.Fatalf("mailbox %v", subjects)
	}
}

// With an SMTP URL but without --smtp-test-mail, a test-mode receipt stays in the development
// mailbox: nothing reaches the mail server, whatever customer_email a test key gave.
func TestTestModeReceiptsStayInTheMailboxWithSMTP(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	a := wire(db, "https://pay.example.test", nil, clockWiring{})
	sink := newSMTPSink(t)
	w, err := mailWorker(quietLog(), a, config{SMTPURL: sink.url(), MailFrom: defaultMailFrom})
	if err != nil {
		t.Fatal(err)
	}
	paySession(t, a, scope, "4242424242424242")
	if n, err := w.RunOnce(context.Background()); err != nil || n != 1 {
		t.Fatalf("%d %v", n, err)
	}
	if got, rcpt := sink.messages(); len(got) != 0 {
		t.Fatalf("the mail server received %d test-mode messages for %v", len(got), rcpt)
	}
	var n int
	if err := db.Get(&n, `SELECT count(*) FROM mailbox_messages WHERE merchant_id = $1 AND environment = 'test' AND to_address = 'grace@example.com'`,
		scope.MerchantID); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("%d receipts in the test mailbox, want 1", n)
	}
}

// modeMailer sends live messages through the live mailer and test ones through the test mailer.
func TestModeMailerRoutesByEnvironment(t *testing.T) {
	t.Parallel()
	var live, test []string
	m := modeMailer{
		live: mailerFunc(func(msg ports.Message) error { live = append(live, msg.To); return nil }),
		test: mailerFunc(func(msg ports.Message) error { test = append(test, msg.To); return nil }),
	}
	for _, msg := range []ports.Message{
		{Scope: core.Scope{MerchantID: "mer_1", Env: core.EnvLive}, To: "live@example.com"},
		{Scope: core.Scope{MerchantID: "mer_1", Env: core.EnvTest}, To: "test@example.com"},
	} {
		if err := m.Send(context.Background(), msg); err != nil {
			t.Fatal(err)
		}
	}
	if len(live) != 1 || live[0] != "live@example.com" || len(test) != 1 || test[0] != "test@example.com" {
		t.Fatalf("live %v, test %v", live, test)
	}
}

type mailerFunc func(ports.Message) error

func (f mailerFunc) Send(_ context.Context, m ports.Message) error { return f(m) }

func TestParseSMTPURL(t *testing.T) {
	t.Parallel()
	cfg, err := parseSMTPURL("smtp://user%40shop:p%3Ass@mail.example.com:2525", defaultMailFrom)
	if err != nil || cfg.Host != "mail.example.com" || cfg.Port != 2525 || cfg.Username != "user@shop" ||
		cfg.Password != "p:ss" || cfg.TLS != "starttls" || cfg.From != defaultMailFrom {
		t.Fatalf("%+v %v", cfg, err)
	}
	cfg, err = parseSMTPURL("smtps://mail.example.com", defaultMailFrom)
	if err != nil || cfg.TLS != "tls" || cfg.Port != 0 || cfg.Username != "" {
		t.Fatalf("%+v %v", cfg, err)
	}
	for _, bad := range []string{"http://mail.example.com", "smtp://mail.example.com:x", "smtps://h?tls=opportunistic",
		"smtp://h?foo=1", "smtp://h/path", "::"} {
		if _, err := parseSMTPURL(bad, defaultMailFrom); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	_, err = parseSMTPURL("smtp://u:topsecret@h:x", defaultMailFrom)
	if err == nil || strings.Contains(err.Error(), "topsecret") {
		t.Errorf("error %v", err)
	}
	if _, err := newMailer(config{SMTPURL: "smtp://mail.example.com?tls=opportunistic", MailFrom: defaultMailFrom}, nil, nil, quietLog()); err == nil {
		t.Error("opportunistic TLS to a remote host accepted")
	}
}
