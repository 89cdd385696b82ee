package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/adapters/email"
	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// defaultMailFrom is the sender when --mail-from is not given.
const defaultMailFrom = "Kassa <no-reply@localhost>"

// parseSMTPURL reads --smtp-url / KASSA_SMTP_URL:
//
//	smtp://user:pass@host:587   STARTTLS required (port 587 by default)
//	smtps://user:pass@host:465  TLS from the first byte (port 465 by default)
//
// The query parameter tls=opportunistic (smtp:// on a loopback host only) allows a local mail
// catcher without TLS. User and password are URL-encoded; both are optional.
func parseSMTPURL(raw, from string) (email.SMTPConfig, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return email.SMTPConfig{}, errors.New("not a URL") // the URL may hold a password: not echoed
	}
	cfg := email.SMTPConfig{Host: u.Hostname(), From: from}
	switch u.Scheme {
	case "smtp":
		cfg.TLS = email.TLSStartTLS
	case "smtps":
		cfg.TLS = email.TLSImplicit
	default:
		return email.SMTPConfig{}, fmt.Errorf("scheme %q: want smtp:// (STARTTLS) or smtps:// (implicit TLS)", u.Scheme)
	}
	if p := u.Port(); p != "" {
		if cfg.Port, err = strconv.Atoi(p); err != nil {
			return email.SMTPConfig{}, fmt.Errorf("port %q is not a number", p)
		}
	}
	if u.User != nil {
		cfg.Username = u.User.Username()
		cfg.Password, _ = u.User.Password()
	}
	for k, v := range u.Query() {
		switch {
		case k == "tls" && len(v) == 1 && u.Scheme == "smtp" && strings.EqualFold(v[0], "opportunistic"):
			cfg.TLS = email.TLSOpportunistic
		default:
			return email.SMTPConfig{}, fmt.Errorf("unknown parameter %q (only tls=opportunistic, with smtp://)", k)
		}
	}
	if u.Path != "" && u.Path != "/" {
		return email.SMTPConfig{}, errors.New("a path is not allowed")
	}
	return cfg, nil
}

// newMailer picks the mailer of receipts: SMTP when cfg.SMTPURL is set, else the development
// mailbox (messages kept in mailbox_messages and shown in the dashboard's test mode). A live
// deployment without SMTP still starts, with a warning, so that no payment is refused for it.
// With SMTP, test-mode mail still goes to the mailbox unless cfg.SMTPTestMail: anybody with a
// test key can pay a session with any customer_email, and the operator's mail server must not
// become their way to mail strangers.
func newMailer(cfg config, db *sqlx.DB, clocks ports.Clocks, log *slog.Logger) (ports.Mailer, error) {
	if cfg.SMTPURL == "" {
		log.Warn("KASSA_SMTP_URL is not set: e-mail (receipts) goes to the development mailbox and is not sent; set an SMTP URL in production")
		return postgres.NewMailboxStore(db, clocks, cfg.MailFrom)
	}
	sc, err := parseSMTPURL(cfg.SMTPURL, cfg.MailFrom)
	if err != nil {
		return nil, fmt.Errorf("KASSA_SMTP_URL: %w", err)
	}
	m, err := email.NewSMTP(sc)
	if err != nil {
		return nil, fmt.Errorf("KASSA_SMTP_URL: %w", err)
	}
	if cfg.SMTPTestMail {
		log.Info("e-mail goes through SMTP, test mode included", "host", sc.Host, "port", sc.Port, "tls", string(sc.TLS))
		return m, nil
	}
	mailbox, err := postgres.NewMailboxStore(db, clocks, cfg.MailFrom)
	if err != nil {
		return nil, err
	}
	log.Info("live e-mail goes through SMTP; test-mode e-mail stays in the development mailbox", "host", sc.Host, "port", sc.Port, "tls", string(sc.TLS))
	return modeMailer{live: m, test: mailbox}, nil
}

// modeMailer sends each message by its environment: live through live, test through test.
// It sends one message at a time (no ports.BatchMailer), as the SMTP mailer does.
type modeMailer struct{ live, test ports.Mailer }

func (m modeMailer) Send(ctx context.Context, msg ports.Message) error {
	if msg.Scope.Env == core.EnvLive {
		return m.live.Send(ctx, msg)
	}
	return m.test.Send(ctx, msg)
}
