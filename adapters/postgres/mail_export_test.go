package postgres

import (
	"context"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/core"
)

// QueueMails runs the statement that queues mails in the transaction of their cause, on db
// (for the mail queue's contract suite).
func QueueMails(ctx context.Context, db *sqlx.DB, mails []core.Mail) error {
	q, args := mailInsert(mails, 1)
	_, err := db.ExecContext(ctx, q, args...)
	return err
}
