package email_test

import (
	"context"
	"errors"
	"testing"

	"github.com/kassa-pay/kassa/adapters/email"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// An e-mail inside a unit of work is not sent (not even connected for): the mailer answers
// ports.ErrInsideTransaction.
func TestSMTPRefusesToSendInsideATransaction(t *testing.T) {
	t.Parallel()
	m, err := email.NewSMTP(email.SMTPConfig{Host: "127.0.0.1", Port: 1, TLS: email.TLSOpportunistic, From: "receipts@kassa.example"})
	if err != nil {
		t.Fatal(err)
	}
	msg := ports.Message{Scope: core.Scope{MerchantID: "mer_x", Env: core.EnvLive}, To: "buyer@example.com", Subject: "Receipt", Text: "text"}
	if err := m.Send(ports.WithinTransaction(context.Background()), msg); !errors.Is(err, ports.ErrInsideTransaction) {
		t.Fatalf("Send: %v, want ErrInsideTransaction", err)
	}
}
