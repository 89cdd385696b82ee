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
