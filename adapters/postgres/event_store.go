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

type eventRow struct {
	ID          string    `db:"id"`
	MerchantID  string    `db:"merchant_id"`
	Environment string    `db:"environment"`
	Type        string    `db:"type"`
	Created     time.Time `db:"created"`
	Data        []byte    `db:"data"`
}

func (r eventRow) event() *events.Event {
	return &events.Event{ID: r.ID, Type: r.Type, Created: r.Created, Data: r.Data,
		Scope: core.Scope{MerchantID: r.MerchantID, Env: core.Environment(r.Environment)}}
}

// ListEvents pages the scope's events newest first by insertion order.
func (s *EventStore) ListEvents(ctx context.Context, scope core.Scope, q core.ListQuery, typ string) (core.Page[*events.Event], error) {
	rows, hasMore, err := pageBySeq[eventRow](ctx, s.db, pageQuery{
		table: "events", columns: "id, merchant_id, environment, type, created, data",
		scope: scope, q: q, filter: when(typ != "", cond{"type = ?", typ}),
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
	err := s.db.GetContext(ctx, &r, `SELECT id, merchant_id, environment, type, created, data FROM events
		WHERE merchant_id = $1 AND environment = $2 AND id = $3`, scope.MerchantID, string(scope.Env), id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, core.NotFound("event", "id", id)
	}
	if err != nil {
		return nil, err
	}
	return r.event(), nil
}

// EventsAbout implements events.Store: the scope's events whose payload object has one of ids
// (payloads are the objects themselves), newest first.
func (s *EventStore) EventsAbout(ctx context.Context, scope core.Scope, ids []string, limit int) ([]*events.Event, error) {
	var rows []eventRow
	if err := s.db.SelectContext(ctx, &rows, `SELECT id, merchant_id, environment, type, created, data FROM events
		WHERE merchant_id = $1 AND environment = $2 AND data->>'id' = ANY($3)
		ORDER BY seq DESC LIMIT $4`, scope.MerchantID, string(scope.Env), pq.Array(ids), limit); err != nil {
		return nil, err
	}
	out := make([]*events.Event, len(rows))
	for i, r := range rows {
		out[i] = r.event()
	}
	return out, nil
}
