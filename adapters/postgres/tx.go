package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/adapters/wire"
	"github.com/kassa-pay/kassa/core"
)

// inTx runs fn in one transaction: committed when fn returns nil, rolled back otherwise (and on
// panic). Every store method that changes state goes through it, together with its events.
func inTx(ctx context.Context, db *sqlx.DB, fn func(tx *sqlx.Tx) error) (err error) {
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() {
		if p := recover(); p != nil {
			_ = tx.Rollback()
			panic(p)
		}
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	if err = fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// insertEvents writes events to the outbox inside the caller's transaction, so an event exists
// exactly when the change it reports was committed. They go in one INSERT (one round trip), in
// their order: seq, which orders the outbox, follows the order of the VALUES rows.
func insertEvents(ctx context.Context, tx *sqlx.Tx, events []core.Event) error {
	if len(events) == 0 {
		return nil
	}
	const cols = 7
	rows := make([]string, len(events))
	args := make([]any, 0, cols*len(events))
	for i, e := range events {
		// data: the event rendered for the merchant channel, the form GET /v1/events and
		// merchant webhooks carry (adapters/wire renders every channel).
		obj, err := wire.MerchantPayload(e)
		if err != nil {
			return fmt.Errorf("outbox: %w", err)
		}
		payload, err := jsonText(obj)
		if err != nil {
			return fmt.Errorf("outbox: encode %s: %w", e.Type, err)
		}
		n := i * cols
		rows[i] = fmt.Sprintf("($%d, $%d, $%d, $%d, $%d, $%d, $%d)", n+1, n+2, n+3, n+4, n+5, n+6, n+7)
		// object_id: the indexed id of the object the event is about (NULL: none).
		var objectID *string
		if e.ObjectID != "" {
			objectID = &e.ObjectID
		}
		args = append(args, e.ID, e.Scope.MerchantID, string(e.Scope.Env), string(e.Type), e.Created, payload, objectID)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO events (id, merchant_id, environment, type, created, data, object_id)
		VALUES `+strings.Join(rows, ", "), args...); err != nil {
		return fmt.Errorf("outbox: insert %s: %w", events[0].Type, err)
	}
	return nil
}

// jsonText encodes v for a json/jsonb parameter. It is passed as text: with lib/pq's
// binary_parameters (see Open) a []byte argument would be sent in binary format, which jsonb
// does not accept as plain JSON.
func jsonText(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}
