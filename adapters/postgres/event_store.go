package postgres

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/events"
)

// EventStore reads the events outbox.
type EventStore struct{ db handle }

// NewEventStore returns an EventStore over db.
func NewEventStore(db *sqlx.DB) *EventStore { return &EventStore{db: wrap(db)} }

// eventCols are the columns of an eventRow.
const eventCols = "id, merchant_id, environment, type, created, object_kind, object_id, object"

type eventRow struct {
	ID          string    `db:"id"`
	MerchantID  string    `db:"merchant_id"`
	Environment string    `db:"environment"`
	Type        string    `db:"type"`
	Created     time.Time `db:"created"`
	ObjectKind  string    `db:"object_kind"`
	ObjectID    *string   `db:"object_id"`
	Object      []byte    `db:"object"`
}

func (r eventRow) event() *events.Event {
	e := &events.Event{ID: r.ID, Type: core.EventType(r.Type), Created: r.Created, ObjectKind: core.ObjectKind(r.ObjectKind),
		Object: r.Object, Scope: core.Scope{MerchantID: r.MerchantID, Env: core.Environment(r.Environment)}}
	if r.ObjectID != nil {
		e.ObjectID = *r.ObjectID
	}
	return e
}

// ListEvents pages the scope's events newest first by insertion order.
func (s *EventStore) ListEvents(ctx context.Context, scope core.Scope, q core.ListQuery, typ string) (core.Page[*events.Event], error) {
	rows, hasMore, err := pageBySeq[eventRow](ctx, s.db, pageQuery{
		table: "events", columns: eventCols,
		scope: scope, q: q, filter: when(typ != "", cond{"type = ?", typ}), unknownCursor: events.ErrUnknownCursor,
	})
	if err != nil {
		return core.Page[*events.Event]{}, err
	}
	out := core.Page[*events.Event]{HasMore: hasMore, Items: make([]*events.Event, len(rows))}
	for i, r := range rows {
		out.Items[i] = r.event()
	}
	return out, nil
}

// GetEvent returns one event of the scope.
func (s *EventStore) GetEvent(ctx context.Context, scope core.Scope, id string) (*events.Event, error) {
	var r eventRow
	err := s.db.GetContext(ctx, &r, `SELECT `+eventCols+` FROM events
		WHERE merchant_id = $1 AND environment = $2 AND id = $3`, scope.MerchantID, string(scope.Env), id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, events.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return r.event(), nil
}

// eventsAboutQuery reads the events about any of a set of objects through the events_object
// index (merchant_id, environment, object_id, seq DESC), never the scope's other events: one
// ordered index range per object, merged. (A single "object_id = ANY(…) ORDER BY seq" lets
// the planner, without statistics, walk events_scope, the whole scope newest first.)
const eventsAboutQuery = `SELECT e.id, e.merchant_id, e.environment, e.type, e.created, e.object_kind, e.object_id, e.object
		FROM (SELECT DISTINCT unnest($3::text[])) AS o(id)
		CROSS JOIN LATERAL (
			SELECT id, merchant_id, environment, type, created, object_kind, object_id, object, seq FROM events
			WHERE merchant_id = $1 AND environment = $2 AND object_id = o.id AND seq > 0 -- ListPredicate
			ORDER BY seq DESC LIMIT $4) e
		ORDER BY e.seq DESC LIMIT $4`

// EventsAbout implements events.Store: the scope's events whose object (object_id, the id of
// data.object) is one of ids, newest first.
func (s *EventStore) EventsAbout(ctx context.Context, scope core.Scope, ids []string, limit int) ([]*events.Event, error) {
	var rows []eventRow
	if err := s.db.SelectContext(ctx, &rows, eventsAboutQuery, scope.MerchantID, string(scope.Env), pq.Array(ids), limit); err != nil {
		return nil, err
	}
	out := make([]*events.Event, len(rows))
	for i, r := range rows {
		out[i] = r.event()
	}
	return out, nil
}
