package mail_test

import (
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/mail/mailtest"
)

// TestFakeQueueContract: the in-memory queue behaves as the Postgres one does
// (adapters/postgres runs the same suite).
func TestFakeQueueContract(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	mailtest.Run(t, func(t *testing.T) mailtest.Subject {
		q := mailtest.NewQueue()
		return mailtest.Subject{
			Store: q,
			Scope: func(*testing.T) core.Scope {
				return core.Scope{MerchantID: "mer_" + core.RandomBase62(24), Env: core.EnvTest}
			},
			Enqueue: func(_ *testing.T, mails ...core.Mail) []string { return q.Enqueue(t0, mails...) },
			State: func(t *testing.T, scope core.Scope, id string) mailtest.State {
				st, ok := q.StateOf(scope, id)
				if !ok {
					t.Fatalf("no mail %s", id)
				}
				return st
			},
			Now: func() time.Time { return t0 },
		}
	})
}
