package postgres_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/mail"
	"github.com/kassa-pay/kassa/modules/mail/mailtest"
)

// The mail queue's contract (modules/mail/mailtest), which the mail module's fake passes too.
// Each case gets a database of its own: claims take due mail of every merchant.
func TestMailOutboxStoreContract(t *testing.T) {
	t.Parallel()
	mailtest.Run(t, func(t *testing.T) mailtest.Subject {
		db := pgtest.New(t)
		return mailtest.Subject{
			Store: postgres.NewMailOutboxStore(db),
			Scope: func(t *testing.T) core.Scope { return pgtest.Merchant(t, db) },
			Enqueue: func(t *testing.T, mails ...core.Mail) []string {
				t.Helper()
				if err := postgres.QueueMails(context.Background(), db, mails); err != nil {
					t.Fatal(err)
				}
				ids := make([]string, len(mails))
				for i, m := range mails {
					if err := db.Get(&ids[i], `SELECT id FROM mail_outbox WHERE merchant_id = $1 AND environment = $2
						AND subject_id = $3 AND kind = $4`, m.Scope.MerchantID, string(m.Scope.Env), m.SubjectID, string(m.Kind)); err != nil {
						t.Fatal(err)
					}
				}
				return ids
			},
			State: func(t *testing.T, scope core.Scope, id string) mailtest.State {
				t.Helper()
				var r struct {
					Status    string         `db:"status"`
					Attempts  int            `db:"attempts"`
					LastError sql.NullString `db:"last_error"`
					Next      time.Time      `db:"next_attempt_at"`
				}
				if err := db.Get(&r, `SELECT status, attempts, last_error, next_attempt_at FROM mail_outbox
					WHERE merchant_id = $1 AND environment = $2 AND id = $3`, scope.MerchantID, string(scope.Env), id); err != nil {
					t.Fatal(err)
				}
				return mailtest.State{Status: mail.Status(r.Status), Attempts: r.Attempts, LastError: r.LastError.String, Next: r.Next.UTC()}
			},
			// Mail is due at the database's time in whole seconds: a second later, all of it is.
			Now: func() time.Time { return time.Now().UTC().Truncate(time.Second).Add(time.Second) },
		}
	})
}
