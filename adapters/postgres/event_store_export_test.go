package postgres

import (
	"context"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/core"
)

// EventsAboutQuery is the query EventStore.EventsAbout runs, for EXPLAIN.
const EventsAboutQuery = eventsAboutQuery

// InsertEvents writes events to the outbox in a transaction of their own.
func InsertEvents(ctx context.Context, db *sqlx.DB, evs []core.Event) error {
	return inTx(ctx, db, func(tx *sqlx.Tx) error { return insertEvents(ctx, tx, evs) })
}

// InsertEventRecords writes kept events as the outbox writer does (the events rows and their
// fan-out queue entries, one flush), in a transaction of their own: for tests that need an
// event of a type no module writes yet.
func InsertEventRecords(ctx context.Context, db *sqlx.DB, rs ...core.EventRecord) error {
	rows := make([][]any, len(rs))
	for i, r := range rs {
		var objectID *string
		if r.ObjectID != "" {
			objectID = &r.ObjectID
		}
		rows[i] = []any{r.ID, r.Scope.MerchantID, string(r.Scope.Env), string(r.Type), r.Created, string(r.Object), objectID, string(r.ObjectKind)}
	}
	w := outboxInsert(rows)
	return inTx(ctx, db, func(tx *sqlx.Tx) error { _, err := tx.ExecContext(ctx, w.sql, w.args...); return err })
}

// MigrateTo moves the schema to version (down or up).
func MigrateTo(ctx context.Context, db *sqlx.DB, version int64) error {
	p, err := provider(db.DB)
	if err != nil {
		return err
	}
	if cur, err := p.GetDBVersion(ctx); err != nil {
		return err
	} else if cur > version {
		_, err = p.DownTo(ctx, version)
		return err
	}
	_, err = p.UpTo(ctx, version)
	return err
}

// FanoutQueued is the outbox writer's probe of the fan-out queue, for EXPLAIN.
const FanoutQueued = fanoutQueued
