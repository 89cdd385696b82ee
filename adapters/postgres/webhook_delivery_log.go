package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/webhooks"
)

// The delivery log of the dashboard (webhooks.Store ListDeliveries, GetDelivery, Redeliver,
// InsertTestDelivery). Every query names the scope: a delivery id of another merchant or
// environment is not found.

const deliveryCols = `merchant_id, environment, id, endpoint_id, event_id, event_type, status, attempts,
	next_attempt_at, created, last_attempt_at, completed_at`

type deliveryRow struct {
	MerchantID    string       `db:"merchant_id"`
	Environment   string       `db:"environment"`
	ID            string       `db:"id"`
	EndpointID    string       `db:"endpoint_id"`
	EventID       string       `db:"event_id"`
	EventType     string       `db:"event_type"`
	Status        string       `db:"status"`
	Attempts      int          `db:"attempts"`
	NextAttemptAt sql.NullTime `db:"next_attempt_at"`
	Created       time.Time    `db:"created"`
	LastAttemptAt sql.NullTime `db:"last_attempt_at"`
	CompletedAt   sql.NullTime `db:"completed_at"`
}

func (r *deliveryRow) delivery() *webhooks.Delivery {
	return &webhooks.Delivery{
		ID: r.ID, Scope: core.Scope{MerchantID: r.MerchantID, Env: core.Environment(r.Environment)},
		EndpointID: r.EndpointID, EventID: r.EventID, EventType: r.EventType,
		Status: webhooks.DeliveryStatus(r.Status), Attempts: r.Attempts, NextAttemptAt: nullTime(r.NextAttemptAt),
		Created: r.Created.UTC(), LastAttemptAt: nullTime(r.LastAttemptAt), CompletedAt: nullTime(r.CompletedAt),
	}
}

type attemptLogRow struct {
	Attempt    int            `db:"attempt"`
	StartedAt  time.Time      `db:"started_at"`
	LatencyMS  int64          `db:"latency_ms"`
	StatusCode sql.NullInt64  `db:"status_code"`
	Excerpt    string         `db:"response_excerpt"`
	Error      sql.NullString `db:"error"`
}

// ListDeliveries pages one endpoint's deliveries, newest first.
func (s *WebhookStore) ListDeliveries(ctx context.Context, scope core.Scope, endpointID string, q core.ListQuery) (core.Page[*webhooks.Delivery], error) {
	rows, hasMore, err := pageBySeq[deliveryRow](ctx, s.db, pageQuery{
		table: "webhook_deliveries", columns: deliveryCols, scope: scope, q: q,
		within: []cond{{"endpoint_id = ?", endpointID}}, unknownCursor: webhooks.ErrUnknownCursor,
	})
	if err != nil {
		return core.Page[*webhooks.Delivery]{}, err
	}
	out := core.Page[*webhooks.Delivery]{HasMore: hasMore, Items: make([]*webhooks.Delivery, len(rows))}
	for i := range rows {
		out.Items[i] = rows[i].delivery()
	}
	return out, nil
}

// GetDelivery reads one delivery with its attempts.
func (s *WebhookStore) GetDelivery(ctx context.Context, scope core.Scope, id string) (*webhooks.DeliveryDetail, error) {
	var r deliveryRow
	err := s.db.GetContext(ctx, &r, `SELECT `+deliveryCols+` FROM webhook_deliveries
		WHERE merchant_id = $1 AND environment = $2 AND id = $3 AND installation_id IS NULL`, scope.MerchantID, string(scope.Env), id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, webhooks.ErrDeliveryNotFound
	}
	if err != nil {
		return nil, err
	}
	var rows []attemptLogRow
	if err := s.db.SelectContext(ctx, &rows, `SELECT attempt, started_at, latency_ms, status_code, response_excerpt, error
		FROM webhook_attempts WHERE merchant_id = $1 AND environment = $2 AND delivery_id = $3 ORDER BY attempt`,
		scope.MerchantID, string(scope.Env), id); err != nil {
		return nil, err
	}
	d := &webhooks.DeliveryDetail{Delivery: *r.delivery(), AttemptLog: make([]webhooks.Attempt, len(rows))}
	for i, a := range rows {
		d.AttemptLog[i] = webhooks.Attempt{Number: a.Attempt, StartedAt: a.StartedAt.UTC(), Outcome: webhooks.Outcome{
			StatusCode: int(a.StatusCode.Int64), Latency: time.Duration(a.LatencyMS) * time.Millisecond,
			Excerpt: a.Excerpt, Err: a.Error.String,
		}}
	}
	return d, nil
}

// lockEndpointStatus reads an endpoint's status FOR SHARE: a concurrent disable (which locks
// it FOR UPDATE) waits for this transaction, then sees and disables the delivery it made
// pending, so no pending delivery is left behind a disabled endpoint.
func lockEndpointStatus(ctx context.Context, tx *sqlx.Tx, scope core.Scope, id string) (webhooks.Status, error) {
	var status string
	err := tx.GetContext(ctx, &status, `SELECT status FROM webhook_endpoints
		WHERE merchant_id = $1 AND environment = $2 AND id = $3 FOR SHARE`, scope.MerchantID, string(scope.Env), id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", webhooks.ErrNotFound
	}
	return webhooks.Status(status), err
}

// notifyWorkers wakes the delivery workers (LISTEN kassa_webhooks) when the transaction
// commits, as the outbox writer does for new events (fanoutInsert).
func notifyWorkers(ctx context.Context, tx *sqlx.Tx) error {
	_, err := tx.ExecContext(ctx, `SELECT pg_notify('`+WebhookChannel+`', '')`)
	return err
}

// Redeliver makes a delivery pending and due at now (see webhooks.Store).
func (s *WebhookStore) Redeliver(ctx context.Context, scope core.Scope, id string, now time.Time) (*webhooks.Delivery, error) {
	var out *webhooks.Delivery
	err := inTx(ctx, s.db, func(tx *sqlx.Tx) error {
		// The endpoint is locked before the delivery, in the order RecordAttempt and
		// UpdateEndpoint take them.
		var endpointID string
		err := tx.GetContext(ctx, &endpointID, `SELECT endpoint_id FROM webhook_deliveries
			WHERE merchant_id = $1 AND environment = $2 AND id = $3 AND installation_id IS NULL`, scope.MerchantID, string(scope.Env), id)
		if errors.Is(err, sql.ErrNoRows) {
			return webhooks.ErrDeliveryNotFound
		}
		if err != nil {
			return err
		}
		status, err := lockEndpointStatus(ctx, tx, scope, endpointID)
		if errors.Is(err, webhooks.ErrNotFound) {
			return webhooks.ErrDeliveryNotFound // deleted meanwhile, with its deliveries
		}
		if err != nil {
			return err
		}
		if status != webhooks.StatusEnabled {
			return webhooks.ErrEndpointDisabled
		}
		var r deliveryRow
		err = tx.GetContext(ctx, &r, `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = $4, completed_at = NULL
			WHERE merchant_id = $1 AND environment = $2 AND id = $3 RETURNING `+deliveryCols,
			scope.MerchantID, string(scope.Env), id, now)
		if errors.Is(err, sql.ErrNoRows) {
			return webhooks.ErrDeliveryNotFound
		}
		if err != nil {
			return fmt.Errorf("webhook_deliveries: redeliver: %w", err)
		}
		out = r.delivery()
		return notifyWorkers(ctx, tx)
	})
	return out, err
}

// InsertTestDelivery stores a test event in a delivery of its own (see webhooks.Store).
func (s *WebhookStore) InsertTestDelivery(ctx context.Context, endpointID string, ev webhooks.OutboxEvent, now time.Time) (*webhooks.Delivery, error) {
	scope := ev.Scope
	var out *webhooks.Delivery
	err := inTx(ctx, s.db, func(tx *sqlx.Tx) error {
		status, err := lockEndpointStatus(ctx, tx, scope, endpointID)
		if err != nil {
			return err
		}
		if status != webhooks.StatusEnabled {
			return webhooks.ErrEndpointDisabled
		}
		var r deliveryRow
		if err := tx.GetContext(ctx, &r, `INSERT INTO webhook_deliveries (merchant_id, environment, id, endpoint_id,
			event_id, event_type, status, next_attempt_at, created, test_event_created, test_event_data)
			VALUES ($1, $2, $3, $4, $5, $6, 'pending', $7, $7, $8, $9) RETURNING `+deliveryCols,
			scope.MerchantID, string(scope.Env), core.NewID(webhooks.PrefixDelivery), endpointID, ev.ID, string(ev.Type),
			now, ev.Created, string(ev.Object)); err != nil { // text: jsonb in binary form needs a version byte
			return fmt.Errorf("webhook_deliveries: insert test: %w", err)
		}
		out = r.delivery()
		return notifyWorkers(ctx, tx)
	})
	return out, err
}
