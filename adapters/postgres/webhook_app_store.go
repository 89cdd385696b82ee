package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/webhooks"
)

// App webhook endpoints and the operator's log of an app's deliveries (webhooks.AppStore).
// Deliveries to an app endpoint go through the copy of the endpoint in each merchant
// environment it delivers to (webhook_endpoints rows with app_id set, written by FanOut).

var _ webhooks.AppStore = (*WebhookStore)(nil)

const appEndpointCols = `id, app_id, url, enabled_events, description, secret_sealed, created`

type appEndpointRow struct {
	ID            string         `db:"id"`
	AppID         string         `db:"app_id"`
	URL           string         `db:"url"`
	EnabledEvents pq.StringArray `db:"enabled_events"`
	Description   string         `db:"description"`
	SecretSealed  []byte         `db:"secret_sealed"`
	Created       time.Time      `db:"created"`
}

func (s *WebhookStore) appEndpoint(r *appEndpointRow) *webhooks.AppEndpoint {
	e := &webhooks.AppEndpoint{ID: r.ID, AppID: r.AppID, URL: r.URL, Events: []string(r.EnabledEvents),
		Description: r.Description, Created: r.Created.UTC()}
	secret, err := s.sealer.Open(r.SecretSealed, r.ID)
	if err != nil {
		e.SecretUnavailable = true
	} else {
		e.Secret = secret
	}
	return e
}

// InsertAppEndpoint saves a new app endpoint, at most webhooks.MaxAppEndpoints per app (counted
// with the app row locked).
func (s *WebhookStore) InsertAppEndpoint(ctx context.Context, e *webhooks.AppEndpoint) error {
	sealed, err := s.sealer.Seal(e.Secret, e.ID)
	if err != nil {
		return err
	}
	return inTx(ctx, s.db, func(tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, `SELECT 1 FROM apps WHERE id = $1 FOR UPDATE`, e.AppID); err != nil {
			return err
		}
		var n int
		if err := tx.GetContext(ctx, &n, `SELECT count(*) FROM app_webhook_endpoints WHERE app_id = $1`, e.AppID); err != nil {
			return err
		}
		if n >= webhooks.MaxAppEndpoints {
			return webhooks.ErrEndpointLimit
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO app_webhook_endpoints (`+appEndpointCols+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`, e.ID, e.AppID, e.URL, pq.StringArray(e.Events), e.Description, sealed, e.Created); err != nil {
			return fmt.Errorf("app_webhook_endpoints: insert: %w", err)
		}
		return nil
	})
}

// GetAppEndpoint reads one endpoint of the app.
func (s *WebhookStore) GetAppEndpoint(ctx context.Context, appID, id string) (*webhooks.AppEndpoint, error) {
	var r appEndpointRow
	err := s.db.GetContext(ctx, &r, `SELECT `+appEndpointCols+` FROM app_webhook_endpoints WHERE id = $1 AND app_id = $2`, id, appID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, webhooks.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return s.appEndpoint(&r), nil
}

// ListAppEndpoints returns the app's endpoints, newest first.
func (s *WebhookStore) ListAppEndpoints(ctx context.Context, appID string) ([]*webhooks.AppEndpoint, error) {
	var rows []appEndpointRow
	if err := s.db.SelectContext(ctx, &rows, `SELECT `+appEndpointCols+` FROM app_webhook_endpoints
		WHERE app_id = $1 AND `+ListPredicate+` ORDER BY seq DESC`, appID); err != nil {
		return nil, err
	}
	out := make([]*webhooks.AppEndpoint, len(rows))
	for i := range rows {
		out[i] = s.appEndpoint(&rows[i])
	}
	return out, nil
}

// UpdateAppEndpoint stores the endpoint's url, events and description, on the endpoint and on
// its copies in every merchant environment. Copies that failures disabled (not those of an
// uninstalled app) are enabled again: the operator changed the endpoint.
func (s *WebhookStore) UpdateAppEndpoint(ctx context.Context, e *webhooks.AppEndpoint) error {
	return inTx(ctx, s.db, func(tx *sqlx.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE app_webhook_endpoints SET url = $3, enabled_events = $4, description = $5
			WHERE id = $1 AND app_id = $2`, e.ID, e.AppID, e.URL, pq.StringArray(e.Events), e.Description)
		if err != nil {
			return fmt.Errorf("app_webhook_endpoints: update: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return webhooks.ErrNotFound
		}
		if _, err := tx.ExecContext(ctx, `UPDATE webhook_endpoints SET url = $2, enabled_events = $3, description = $4,
				status = CASE WHEN disabled_reason = $5 THEN status ELSE 'enabled' END,
				disabled_reason = CASE WHEN disabled_reason = $5 THEN disabled_reason END,
				failing_since = CASE WHEN disabled_reason = $5 THEN failing_since END
			WHERE id = $1 AND app_id IS NOT NULL`, e.ID, e.URL, pq.StringArray(e.Events), e.Description,
			string(webhooks.DisabledUninstalled)); err != nil {
			return fmt.Errorf("webhook_endpoints: update app copies: %w", err)
		}
		return nil
	})
}

// DeleteAppEndpoint removes the endpoint and its copies; their deliveries and attempts go with
// the copies (ON DELETE CASCADE).
func (s *WebhookStore) DeleteAppEndpoint(ctx context.Context, appID, id string) error {
	return inTx(ctx, s.db, func(tx *sqlx.Tx) error {
		var found string
		err := tx.GetContext(ctx, &found, `SELECT id FROM app_webhook_endpoints WHERE id = $1 AND app_id = $2 FOR UPDATE`, id, appID)
		if errors.Is(err, sql.ErrNoRows) {
			return webhooks.ErrNotFound
		}
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM webhook_endpoints WHERE id = $1 AND app_id IS NOT NULL`, id); err != nil {
			return fmt.Errorf("webhook_endpoints: delete app copies: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM app_webhook_endpoints WHERE id = $1`, id); err != nil {
			return fmt.Errorf("app_webhook_endpoints: delete: %w", err)
		}
		return nil
	})
}

const appDeliveryCols = `d.merchant_id, d.environment, d.id, d.endpoint_id, d.event_id, d.event_type, d.status, d.attempts,
	d.next_attempt_at, d.created, d.last_attempt_at, d.completed_at, d.installation_id::text AS installation_id`

type appDeliveryRow struct {
	deliveryRow
	Installation string `db:"installation_id"`
}

func (r *appDeliveryRow) appDelivery() *webhooks.AppDelivery {
	return &webhooks.AppDelivery{Delivery: *r.delivery(), Installation: r.Installation}
}

// AppDeliveriesSQL lists an app's deliveries newest first: per installation of the app, its
// deliveries through webhook_deliveries_installation, merged.
const AppDeliveriesSQL = `SELECT ` + appDeliveryCols + `
	FROM app_installations i
	CROSS JOIN LATERAL (SELECT * FROM webhook_deliveries w
		WHERE w.installation_id = i.id ORDER BY w.seq DESC LIMIT $2::int + $3::int + 1) d
	WHERE i.app_id = $1 AND ($4::text = '' OR i.id::text = $4::text)
	ORDER BY d.seq DESC LIMIT $2::int + 1 OFFSET $3::int`

// ListAppDeliveries pages the app's deliveries, newest first.
func (s *WebhookStore) ListAppDeliveries(ctx context.Context, appID, installation string, limit, offset int) ([]*webhooks.AppDelivery, bool, error) {
	var rows []appDeliveryRow
	if err := s.db.SelectContext(ctx, &rows, AppDeliveriesSQL, appID, limit, offset, installation); err != nil {
		return nil, false, err
	}
	more := len(rows) > limit
	if more {
		rows = rows[:limit]
	}
	out := make([]*webhooks.AppDelivery, len(rows))
	for i := range rows {
		out[i] = rows[i].appDelivery()
	}
	return out, more, nil
}

// appDeliveryScope finds a delivery of the app by id: its scope and endpoint.
func (s *WebhookStore) appDelivery(ctx context.Context, q sqlx.QueryerContext, appID, id string) (*appDeliveryRow, error) {
	var r appDeliveryRow
	err := sqlx.GetContext(ctx, q, &r, `SELECT `+appDeliveryCols+` FROM webhook_deliveries d
		JOIN app_installations i ON i.id = d.installation_id
		WHERE d.id = $1 AND i.app_id = $2`, id, appID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, webhooks.ErrDeliveryNotFound
	}
	return &r, err
}

// GetAppDelivery reads one delivery of the app with its attempts.
func (s *WebhookStore) GetAppDelivery(ctx context.Context, appID, id string) (*webhooks.AppDeliveryDetail, error) {
	r, err := s.appDelivery(ctx, s.db, appID, id)
	if err != nil {
		return nil, err
	}
	var rows []attemptLogRow
	if err := s.db.SelectContext(ctx, &rows, `SELECT attempt, started_at, latency_ms, status_code, response_excerpt, error
		FROM webhook_attempts WHERE merchant_id = $1 AND environment = $2 AND delivery_id = $3 ORDER BY attempt`,
		r.MerchantID, r.Environment, id); err != nil {
		return nil, err
	}
	d := &webhooks.AppDeliveryDetail{AppDelivery: *r.appDelivery(), AttemptLog: make([]webhooks.Attempt, len(rows))}
	for i, a := range rows {
		d.AttemptLog[i] = webhooks.Attempt{Number: a.Attempt, StartedAt: a.StartedAt.UTC(), Outcome: webhooks.Outcome{
			StatusCode: int(a.StatusCode.Int64), Latency: time.Duration(a.LatencyMS) * time.Millisecond,
			Excerpt: a.Excerpt, Err: a.Error.String,
		}}
	}
	return d, nil
}

// RedeliverApp makes a delivery of the app pending and due at now (as Redeliver).
func (s *WebhookStore) RedeliverApp(ctx context.Context, appID, id string, now time.Time) (*webhooks.AppDelivery, error) {
	var out *webhooks.AppDelivery
	err := inTx(ctx, s.db, func(tx *sqlx.Tx) error {
		r, err := s.appDelivery(ctx, tx, appID, id)
		if err != nil {
			return err
		}
		scope := core.Scope{MerchantID: r.MerchantID, Env: core.Environment(r.Environment)}
		status, err := lockEndpointStatus(ctx, tx, scope, r.EndpointID)
		if errors.Is(err, webhooks.ErrNotFound) {
			return webhooks.ErrDeliveryNotFound
		}
		if err != nil {
			return err
		}
		if status != webhooks.StatusEnabled {
			return webhooks.ErrEndpointDisabled
		}
		var u appDeliveryRow
		err = tx.GetContext(ctx, &u, `UPDATE webhook_deliveries d SET status = 'pending', next_attempt_at = $4, completed_at = NULL
			WHERE d.merchant_id = $1 AND d.environment = $2 AND d.id = $3 RETURNING `+appDeliveryCols,
			r.MerchantID, r.Environment, id, now)
		if errors.Is(err, sql.ErrNoRows) {
			return webhooks.ErrDeliveryNotFound
		}
		if err != nil {
			return fmt.Errorf("webhook_deliveries: redeliver: %w", err)
		}
		out = u.appDelivery()
		return notifyWorkers(ctx, tx)
	})
	return out, err
}
