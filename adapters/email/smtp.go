// Package email sends Kassa's e-mail: the SMTP adapter behind ports.Mailer and the rendering
// of the messages themselves (payment receipts). It never logs a body, and the errors it
// returns name no recipient or sender address.
package email

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"

	"github.com/kassa-pay/kassa/ports"
)

// TLSMode is how the SMTP connection is secured.
type TLSMode string

const (
	// TLSStartTLS connects in clear and requires STARTTLS before anything else is said
	// (submission, usually port 587). The default.
	TLSStartTLS TLSMode = "starttls"
	// TLSImplicit speaks TLS from the first byte (SMTPS, usually port 465).
	TLSImplicit TLSMode = "tls"
	// TLSOpportunistic uses STARTTLS when the server offers it and continues in clear
	// otherwise, credentials included. Only allowed for a loopback host (local development
	// with a mail catcher).
	TLSOpportunistic TLSMode = "opportunistic"
)

// DefaultSMTPTimeout bounds connecting and each exchange with the server.
const DefaultSMTPTimeout = 15 * time.Second

// SMTPConfig configures the SMTP adapter.
type SMTPConfig struct {
	Host     string
	Port     int // 0: 587 for starttls and opportunistic, 465 for tls
	Username string
	Password string // with Username: authenticate (SCRAM, CRAM-MD5, PLAIN or LOGIN, as offered)
	TLS      TLSMode
	Timeout  time.Duration // 0: DefaultSMTPTimeout
	From     string        // sender of messages whose From is empty, e.g. "Kassa <receipts@shop.example>"
	// TLSConfig overrides the TLS settings (e.g. extra root CAs); ServerName defaults to Host
	// and the minimum version to TLS 1.2.
	TLSConfig *tls.Config
}

// SMTP sends messages through one SMTP server, one connection per message. It is safe for
// concurrent use.
type SMTP struct {
	cfg  SMTPConfig
	from *mail.Address
}

var _ ports.Mailer = (*SMTP)(nil)

// NewSMTP checks cfg and returns the adapter. It does not connect.
func NewSMTP(cfg SMTPConfig) (*SMTP, error) {
	if cfg.Host == "" {
		return nil, errors.New("smtp: host is required")
	}
	if cfg.TLS == "" {
		cfg.TLS = TLSStartTLS
	}
	switch cfg.TLS {
	case TLSStartTLS, TLSOpportunistic:
		if cfg.Port == 0 {
			cfg.Port = 587
		}
	case TLSImplicit:
		if cfg.Port == 0 {
			cfg.Port = 465
		}
	default:
		return nil, fmt.Errorf("smtp: unknown TLS mode %q (starttls, tls or opportunistic)", cfg.TLS)
	}
	if cfg.TLS == TLSOpportunistic && !isLoopback(cfg.Host) {
		return nil, fmt.Errorf("smtp: TLS mode %q is only allowed for a loopback host, not %q", cfg.TLS, cfg.Host)
	}
	if cfg.Port < 1 || cfg.Port > 65535 {
		return nil, fmt.Errorf("smtp: port %d out of range", cfg.Port)
	}
	if cfg.Password != "" && cfg.Username == "" {
		return nil, errors.New("smtp: a password needs a username")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultSMTPTimeout
	}
	if cfg.From == "" || strings.ContainsAny(cfg.From, "\r\n") {
		return nil, errors.New("smtp: a sender address (From) is required")
	}
	from, err := mail.ParseAddress(cfg.From)
	if err != nil {
		return nil, fmt.Errorf("smtp: sender address: %w", err)
	}
	return &SMTP{cfg: cfg, from: from}, nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (s *SMTP) client() (*gomail.Client, error) {
	tlsConf := &tls.Config{MinVersion: tls.VersionTLS12}
	if s.cfg.TLSConfig != nil {
		tlsConf = s.cfg.TLSConfig.Clone()
		if tlsConf.MinVersion == 0 {
			tlsConf.MinVersion = tls.VersionTLS12
		}
	}
	if tlsConf.ServerName == "" {
		tlsConf.ServerName = s.cfg.Host
	}
	opts := []gomail.Option{
		gomail.WithPort(s.cfg.Port),
		gomail.WithTimeout(s.cfg.Timeout),
		gomail.WithTLSConfig(tlsConf),
	}
	switch s.cfg.TLS {
	case TLSImplicit:
		opts = append(opts, gomail.WithSSL())
	case TLSOpportunistic:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSOpportunistic))
	default:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	}
	if s.cfg.Username != "" {
		opts = append(opts, gomail.WithUsername(s.cfg.Username), gomail.WithPassword(s.cfg.Password))
		if s.cfg.TLS == TLSOpportunistic {
			// Loopback only (NewSMTP): PLAIN and LOGIN may go in clear when there is no TLS.
			opts = append(opts, gomail.WithOpportunisticSMTPAuth(gomail.SMTPAuthSCRAMSHA256,
				gomail.SMTPAuthCramMD5, gomail.SMTPAuthPlainNoEnc, gomail.SMTPAuthLoginNoEnc))
		} else {
			// Over TLS: the strongest mechanism the server offers.
			opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover))
		}
	}
	return gomail.NewClient(s.cfg.Host, opts...)
}

// Send delivers m. Invalid messages and 5xx replies to the envelope or the data are
// permanent (ports.ErrPermanent); connection, TLS, authentication and 4xx failures are
// transient, since retrying after the server or the configuration is fixed succeeds.
//
// Inside a unit of work it sends nothing: ports.ErrInsideTransaction.
func (s *SMTP) Send(ctx context.Context, m ports.Message) error {
	if err := ports.OutsideTransaction(ctx); err != nil {
		return err
	}
	if err := m.Validate(); err != nil {
		return err
	}
	msg, err := s.compose(m)
	if err != nil {
		return ports.Permanent(fmt.Errorf("smtp: compose: %w", err))
	}
	c, err := s.client()
	if err != nil {
		return fmt.Errorf("smtp: client: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 2*s.cfg.Timeout)
	defer cancel()
	if err := c.DialAndSendWithContext(ctx, msg); err != nil {
		return classify(err, m, s.from.Address)
	}
	return nil
}

func (s *SMTP) compose(m ports.Message) (*gomail.Msg, error) {
	msg := gomail.NewMsg(gomail.WithNoDefaultUserAgent())
	if m.From != "" {
		if err := msg.From(m.From); err != nil {
			return nil, errors.New("invalid sender")
		}
	} else {
		msg.FromMailAddress(s.from)
	}
	if err := msg.To(m.To); err != nil {
		return nil, errors.New("invalid recipient")
	}
	msg.Subject(m.Subject)
	msg.SetDate()
	if m.MailID != "" {
		// The same queued mail sent again (a worker died before recording the first delivery)
		// carries the same Message-ID, by which the receiving side can recognise it.
		msg.SetMessageIDWithValue(m.MailID + "@" + messageIDDomain(s.from.Address))
	} else {
		msg.SetMessageID()
	}
	for k, v := range m.Headers {
		msg.SetGenHeader(gomail.Header(k), v)
	}
	msg.SetBodyString(gomail.TypeTextPlain, m.Text)
	if m.HTML != "" {
		msg.AddAlternativeString(gomail.TypeTextHTML, m.HTML)
	}
	// go-mail wraps the text/HTML alternative and the files in multipart/mixed and encodes
	// each file in base64 with its name in Content-Disposition (a non-ASCII name as RFC 2047
	// encoded words, which mail clients decode).
	for _, a := range m.Attachments {
		msg.AttachReadSeeker(a.Filename, bytes.NewReader(a.Data),
			gomail.WithFileContentType(gomail.ContentType(a.ContentType)), gomail.WithFileEncoding(gomail.EncodingB64))
	}
	return msg, nil
}

// SendError is a failed delivery, with the addresses taken out of the server's reply.
type SendError struct {
	Stage     string // "dial" (connect, TLS, auth) or the go-mail stage ("sending SMTP RCPT TO command", …)
	Code      int    // SMTP reply code, 0 when the server gave none
	Temporary bool
	Detail    string
}

func (e *SendError) Error() string {
	if e.Code != 0 {
		return fmt.Sprintf("smtp: %s: %d: %s", e.Stage, e.Code, e.Detail)
	}
	return fmt.Sprintf("smtp: %s: %s", e.Stage, e.Detail)
}

// classify turns a go-mail error into a SendError, permanent when the server refused the
// message itself with a 5xx reply (or go-mail refused its addresses).
func classify(err error, m ports.Message, defaultFrom string) error {
	redact := func(s string) string {
		for _, a := range []string{m.To, m.From, defaultFrom} {
			if a != "" {
				s = strings.ReplaceAll(s, a, "[address]")
			}
		}
		return s
	}
	var se *gomail.SendError
	if !errors.As(err, &se) { // connect, TLS, authentication, timeout, cancellation
		return &SendError{Stage: "dial", Temporary: true, Detail: redact(err.Error())}
	}
	out := &SendError{Stage: se.Reason.String(), Code: se.ErrorCode(), Temporary: se.IsTemp(), Detail: redact(err.Error())}
	permanent := false
	switch se.Reason {
	case gomail.ErrGetSender, gomail.ErrGetRcpts, gomail.ErrNoUnencoded:
		permanent = true
	case gomail.ErrSMTPMailFrom, gomail.ErrSMTPRcptTo, gomail.ErrSMTPData, gomail.ErrSMTPDataClose:
		permanent = se.ErrorCode() >= 500 && se.ErrorCode() < 600
	default: // reset, write, connection check, ambiguous: the next attempt may succeed
	}
	if permanent {
		out.Temporary = false
		return ports.Permanent(out)
	}
	out.Temporary = true
	return out
}

// messageIDDomain is the right-hand side of the Message-IDs of queued mails: the sender's
// domain.
func messageIDDomain(from string) string {
	if i := strings.LastIndexByte(from, '@'); i >= 0 && i < len(from)-1 {
		return from[i+1:]
	}
	return "localhost"
}
