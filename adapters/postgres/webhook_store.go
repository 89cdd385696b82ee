package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/webhooks"
)

// SecretSealer seals webhook signing secrets at rest (adapters/signing.Box implements it).
// aad is the endpoint id, so a sealed secret cannot be moved to another endpoint's row.
// Current reports whether a stored form is sealed under the key Seal uses now (false for a
// clear one, or one under an older key): ResealSecrets re-seals the others.
type SecretSealer interface {
	Seal(secret, aad string) ([]byte, error)
	Open(sealed []byte, aad string) (string, error)
	Current(sealed []byte, aad string) bool
}

// WebhookStore keeps webhook endpoints, deliveries and attempts (webhooks.Store).
type WebhookStore struct {
	db       handle
	sealer   SecretSealer
	attempts *attemptBatcher
}

// NewWebhookStore returns a WebhookStore over db sealing secrets with sealer.
func NewWebhookStore(db *sqlx.DB, sealer SecretSealer) *WebhookStore {
	return &WebhookStore{db: wrap(db), sealer: sealer, attempts: &attemptBatcher{db: db}}
}

var _ webhooks.Store = (*WebhookStore)(nil)

const endpointCols = `merchant_id, environment, id, url, enabled_events, description, status, disabled_reason,
	secret_sealed, previous_secret_sealed, previous_secret_expires_at, failing_since, created`

// endpointSelect reads an endpointRow: the stored columns and, for an app endpoint's copy
// (app_id set), the app and the installation it delivers for.
const endpointSelect = endpointCols + `, coalesce(app_id, '') AS app_id, coalesce(installation_id::text, '') AS installation_id`

// merchantEndpoint keeps a merchant's own endpoints, not the copies of app endpoints.
const merchantEndpoint = ` AND app_id IS NULL`

type endpointRow struct {
	AppID           string         `db:"app_id"`
	Installation    string         `db:"installation_id"`
	MerchantID      string         `db:"merchant_id"`
	Environment     string         `db:"environment"`
	ID              string         `db:"id"`
	URL             string         `db:"url"`
	EnabledEvents   pq.StringArray `db:"enabled_events"`
	Description     string         `db:"description"`
	Status          string         `db:"status"`
	DisabledReason  sql.NullString `db:"disabled_reason"`
	SecretSealed    []byte         `db:"secret_sealed"`
	PreviousSealed  []byte         `db:"previous_secret_sealed"`
	PreviousExpires sql.NullTime   `db:"previous_secret_expires_at"`
	FailingSince    sql.NullTime   `db:"failing_since"`
	Created         time.Time      `db:"created"`
}

func (s *WebhookStore) endpoint(r *endpointRow) (*webhooks.Endpoint, error) {
	sn := webhooks.EndpointSnapshot{
		ID: r.ID, Scope: core.Scope{MerchantID: r.MerchantID, Env: core.Environment(r.Environment)},
		URL: r.URL, EnabledEvents: []string(r.EnabledEvents), Description: r.Description,
		Status: webhooks.Status(r.Status), DisabledReason: webhooks.DisabledReason(r.DisabledReason.String),
		Created: r.Created.UTC(), AppID: r.AppID, Installation: r.Installation,
	}
	// A secret no configured key opens (the key is missing or wrong) does not make the
	// endpoint unreadable: it is shown and managed as usual and marked, and nothing is signed
	// for it (webhooks.Endpoint.SecretUnavailable).
	secret, err := s.sealer.Open(r.SecretSealed, r.ID)
	if err != nil {
		sn.SecretUnavailable = true
	} else {
		sn.Secret = secret
	}
	if r.PreviousSealed != nil && r.PreviousExpires.Valid && !sn.SecretUnavailable {
		prev, err := s.sealer.Open(r.PreviousSealed, r.ID)
		if err != nil {
			sn.SecretUnavailable, sn.Secret = true, ""
		} else {
			exp := r.PreviousExpires.Time.UTC()
			sn.Previous = &webhooks.Secret{Value: prev, ExpiresAt: &exp}
		}
	}
	if r.FailingSince.Valid {
		t := r.FailingSince.Time.UTC()
		sn.FailingSince = &t
	}
	return webhooks.RehydrateEndpoint(sn), nil
}

// sealed returns the stored forms of the endpoint's secrets.
func (s *WebhookStore) sealed(sn webhooks.EndpointSnapshot) (cur, prev []byte, prevExp *time.Time, err error) {
	if cur, err = s.sealer.Seal(sn.Secret, sn.ID); err != nil {
		return nil, nil, nil, err
	}
	if sn.Previous != nil && sn.Previous.ExpiresAt != nil {
		if prev, err = s.sealer.Seal(sn.Previous.Value, sn.ID); err != nil {
			return nil, nil, nil, err
		}
		prevExp = sn.Previous.ExpiresAt
	}
	return cur, prev, prevExp, nil
}

func nullString(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

// InsertEndpoint saves a new endpoint. The scope's endpoints are counted under a transaction-
// scoped advisory lock of the scope, so concurrent creations cannot pass MaxEndpoints.
func (s *WebhookStore) InsertEndpoint(ctx context.Context, e *webhooks.Endpoint) error {
	sn := e.Snapshot()
	cur, prev, prevExp, err := s.sealed(sn)
	if err != nil {
		return err
	}
	return inTx(ctx, s.db, func(tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('webhook_endpoints:' || $1 || ':' || $2, 0))`,
			sn.Scope.MerchantID, string(sn.Scope.Env)); err != nil {
			return err
		}
		var n int
		if err := tx.GetContext(ctx, &n, `SELECT count(*) FROM webhook_endpoints WHERE merchant_id = $1 AND environment = $2`+merchantEndpoint,
			sn.Scope.MerchantID, string(sn.Scope.Env)); err != nil {
			return err
		}
		if n >= webhooks.MaxEndpoints {
			return webhooks.ErrEndpointLimit
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO webhook_endpoints (`+endpointCols+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
			sn.Scope.MerchantID, string(sn.Scope.Env), sn.ID, sn.URL, pq.StringArray(sn.EnabledEvents), sn.Description,
			string(sn.Status), nullString(string(sn.DisabledReason)), cur, prev, prevExp, sn.FailingSince, sn.Created)
		if err != nil {
			return fmt.Errorf("webhook_endpoints: insert: %w", err)
		}
		return nil
	})
}

// getEndpoint reads one endpoint of the scope; an app endpoint's copy only when anyKind (the
// worker's claim), never for the merchant's use cases.
func (s *WebhookStore) getEndpoint(ctx context.Context, q sqlx.QueryerContext, scope core.Scope, id string, lock, anyKind bool) (*webhooks.Endpoint, error) {
	query := `SELECT ` + endpointSelect + ` FROM webhook_endpoints WHERE merchant_id = $1 AND environment = $2 AND id = $3`
	if !anyKind {
		query += merchantEndpoint
	}
	if lock {
		query += ` FOR UPDATE`
	}
	var r endpointRow
	err := sqlx.GetContext(ctx, q, &r, query, scope.MerchantID, string(scope.Env), id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, webhooks.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return s.endpoint(&r)
}

// GetEndpoint reads one endpoint of the scope.
func (s *WebhookStore) GetEndpoint(ctx context.Context, scope core.Scope, id string) (*webhooks.Endpoint, error) {
	return s.getEndpoint(ctx, s.db, scope, id, false, false)
}

// ListEndpoints returns the scope's endpoints, newest first.
func (s *WebhookStore) ListEndpoints(ctx context.Context, scope core.Scope) ([]*webhooks.Endpoint, error) {
	var rows []endpointRow
	if err := s.db.SelectContext(ctx, &rows, `SELECT `+endpointSelect+` FROM webhook_endpoints
		WHERE merchant_id = $1 AND environment = $2 AND `+ListPredicate+merchantEndpoint+` ORDER BY seq DESC`, scope.MerchantID, string(scope.Env)); err != nil {
		return nil, err
	}
	out := make([]*webhooks.Endpoint, 0, len(rows))
	for i := range rows {
		e, err := s.endpoint(&rows[i])
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// UpdateEndpoint locks the endpoint, calls fn and writes the new state; a disabled endpoint's
// pending deliveries become disabled in the same transaction.
func (s *WebhookStore) UpdateEndpoint(ctx context.Context, scope core.Scope, id string, now time.Time, fn func(*webhooks.Endpoint) error) (*webhooks.Endpoint, error) {
	var out *webhooks.Endpoint
	err := inTx(ctx, s.db, func(tx *sqlx.Tx) error {
		e, err := s.getEndpoint(ctx, tx, scope, id, true, false)
		if err != nil {
			return err
		}
		if err := fn(e); err != nil {
			return err
		}
		if err := s.writeEndpoint(ctx, tx, e, now); err != nil {
			return err
		}
		out = e
		return nil
	})
	return out, err
}

// writeEndpoint stores the mutable state of a locked endpoint. The stored secrets of an
// endpoint whose secret could not be opened are left as they are (a later start with the right
// key opens them again); rotating replaces them.
func (s *WebhookStore) writeEndpoint(ctx context.Context, tx *sqlx.Tx, e *webhooks.Endpoint, now time.Time) error {
	sn := e.Snapshot()
	if sn.SecretUnavailable {
		if _, err := tx.ExecContext(ctx, `UPDATE webhook_endpoints SET url = $4, enabled_events = $5, description = $6,
			status = $7, disabled_reason = $8, failing_since = $9
			WHERE merchant_id = $1 AND environment = $2 AND id = $3`,
			sn.Scope.MerchantID, string(sn.Scope.Env), sn.ID, sn.URL, pq.StringArray(sn.EnabledEvents), sn.Description,
			string(sn.Status), nullString(string(sn.DisabledReason)), sn.FailingSince); err != nil {
			return fmt.Errorf("webhook_endpoints: update: %w", err)
		}
	} else {
		cur, prev, prevExp, err := s.sealed(sn)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE webhook_endpoints SET url = $4, enabled_events = $5, description = $6,
			status = $7, disabled_reason = $8, secret_sealed = $9, previous_secret_sealed = $10,
			previous_secret_expires_at = $11, failing_since = $12
			WHERE merchant_id = $1 AND environment = $2 AND id = $3`,
			sn.Scope.MerchantID, string(sn.Scope.Env), sn.ID, sn.URL, pq.StringArray(sn.EnabledEvents), sn.Description,
			string(sn.Status), nullString(string(sn.DisabledReason)), cur, prev, prevExp, sn.FailingSince); err != nil {
			return fmt.Errorf("webhook_endpoints: update: %w", err)
		}
	}
	if !e.Enabled() {
		return disablePending(ctx, tx, sn, now)
	}
	return nil
}

// DeleteEndpoint removes the endpoint; its deliveries and attempts go with it (ON DELETE
// CASCADE).
func (s *WebhookStore) DeleteEndpoint(ctx context.Context, scope core.Scope, id string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM webhook_endpoints WHERE merchant_id = $1 AND environment = $2 AND id = $3`+merchantEndpoint,
		scope.MerchantID, string(scope.Env), id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return webhooks.ErrNotFound
	}
	return nil
}

type fanoutRow struct {
	MerchantID  string `db:"merchant_id"`
	Environment string `db:"environment"`
	EventID     string `db:"event_id"`
	Type        string `db:"type"`
}

// FanOut turns queued outbox events into deliveries, one per matching enabled endpoint.
func (s *WebhookStore) FanOut(ctx context.Context, limit int, now time.Time, match func(*webhooks.Endpoint, string) bool) (int, error) {
	taken := 0
	err := inTx(ctx, s.db, func(tx *sqlx.Tx) error {
		var rows []fanoutRow
		if err := tx.SelectContext(ctx, &rows, `SELECT f.merchant_id, f.environment, f.event_id, coalesce(ev.type, '') AS type
			FROM event_fanout f
			LEFT JOIN events ev ON ev.merchant_id = f.merchant_id AND ev.environment = f.environment AND ev.id = f.event_id
			ORDER BY f.seq LIMIT $1 FOR UPDATE OF f SKIP LOCKED`, limit); err != nil {
			return fmt.Errorf("event_fanout: claim: %w", err)
		}
		taken = len(rows)
		if taken == 0 {
			return nil
		}
		// The deliveries of the whole batch go in with one INSERT and the claimed rows leave
		// with one DELETE: two round trips per batch instead of two per event.
		scopes := make([]core.Scope, len(rows))
		for i, r := range rows {
			scopes[i] = core.Scope{MerchantID: r.MerchantID, Env: core.Environment(r.Environment)}
		}
		// The subscribers of every scope of the batch, in one read: most events of a busy
		// outbox belong to scopes without an endpoint, and they cost nothing more.
		endpoints, err := s.enabledEndpoints(ctx, tx, scopes)
		if err != nil {
			return err
		}
		// The app endpoints of the installations of the batch's merchants, each as the copy
		// it has (or will have) in the event's scope.
		apps, err := s.appSubscribers(ctx, tx, rows)
		if err != nil {
			return err
		}
		appEndpoints, err := s.enabledAppCopies(ctx, tx, rows, scopes, apps, match, now)
		if err != nil {
			return err
		}
		var ins []string
		args := []any{now} // $1; each delivery's parameters follow
		merchants, envs, ids := make([]string, len(rows)), make([]string, len(rows)), make([]string, len(rows))
		for i, r := range rows {
			merchants[i], envs[i], ids[i] = r.MerchantID, r.Environment, r.EventID
			subscribers := slices.Concat(endpoints[scopes[i]], appEndpoints[scopes[i]])
			for _, e := range subscribers {
				if r.Type == "" || !match(e, r.Type) {
					continue
				}
				n := len(args)
				ins = append(ins, fmt.Sprintf("($%d, $%d, $%d, $%d, $%d, $%d, 'pending', $1::timestamptz, $1::timestamptz, nullif($%d, '')::uuid)",
					n+1, n+2, n+3, n+4, n+5, n+6, n+7))
				args = append(args, r.MerchantID, r.Environment, core.NewID(webhooks.PrefixDelivery), e.ID(), r.EventID, r.Type, e.Installation())
			}
		}
		if len(ins) > 0 {
			if _, err := tx.ExecContext(ctx, `INSERT INTO webhook_deliveries
				(merchant_id, environment, id, endpoint_id, event_id, event_type, status, next_attempt_at, created, installation_id)
				VALUES `+strings.Join(ins, ", ")+`
				ON CONFLICT (merchant_id, environment, endpoint_id, event_id) DO NOTHING`,
				args...); err != nil {
				return fmt.Errorf("webhook_deliveries: insert: %w", err)
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM event_fanout f
			USING unnest($1::text[], $2::text[], $3::text[]) AS c(merchant_id, environment, event_id)
			WHERE f.merchant_id = c.merchant_id AND f.environment = c.environment AND f.event_id = c.event_id`,
			pq.StringArray(merchants), pq.StringArray(envs), pq.StringArray(ids)); err != nil {
			return fmt.Errorf("event_fanout: delete: %w", err)
		}
		return nil
	})
	return taken, err
}

// appSubscriber is an app endpoint and an installation of its app that it delivers for.
type appSubscriber struct {
	MerchantID    string         `db:"merchant_id"`
	Installation  string         `db:"installation_id"`
	Scopes        pq.StringArray `db:"scopes"`
	ID            string         `db:"id"`
	AppID         string         `db:"app_id"`
	URL           string         `db:"url"`
	EnabledEvents pq.StringArray `db:"enabled_events"`
}

// appSubscribers reads the app endpoints of the active installations on the merchants of rows,
// when any of rows is an app event. The installations and the endpoints are held FOR SHARE: an
// uninstall (or an endpoint's deletion) waits for the fan-out to commit, then stops (or
// deletes) the deliveries it made.
func (s *WebhookStore) appSubscribers(ctx context.Context, tx *sqlx.Tx, rows []fanoutRow) ([]appSubscriber, error) {
	var merchants []string
	for _, r := range rows {
		if core.IsEventOn(r.Type, core.ChannelApp) && !slices.Contains(merchants, r.MerchantID) {
			merchants = append(merchants, r.MerchantID)
		}
	}
	if len(merchants) == 0 {
		return nil, nil
	}
	var out []appSubscriber
	if err := tx.SelectContext(ctx, &out, appSubscribersSQL, pq.StringArray(merchants)); err != nil {
		return nil, fmt.Errorf("app subscribers: %w", err)
	}
	return out, nil
}

// appSubscribersSQL reads the app endpoints of the active installations on a set of merchants.
const appSubscribersSQL = `SELECT i.merchant_id, i.id::text AS installation_id, i.scopes, a.id, a.app_id, a.url, a.enabled_events
	FROM app_installations i
	JOIN app_webhook_endpoints a ON a.app_id = i.app_id
	WHERE i.merchant_id = ANY($1::text[]) AND i.revoked_at IS NULL
	ORDER BY a.seq
	FOR SHARE OF i, a`

// enabledAppCopies returns, by scope, the copies of the app endpoints that receive at least one
// event of rows (by match), enabled: it reads the copies FOR SHARE, leaves out the disabled
// ones (failing, gone) and writes a scope's copy the first time (or anew, enabled, for a new
// installation of the app).
func (s *WebhookStore) enabledAppCopies(ctx context.Context, tx *sqlx.Tx, rows []fanoutRow, scopes []core.Scope,
	subs []appSubscriber, match func(*webhooks.Endpoint, string) bool, now time.Time) (map[core.Scope][]*webhooks.Endpoint, error) {
	if len(subs) == 0 {
		return nil, nil
	}
	type key struct {
		scope core.Scope
		id    string
	}
	wanted := map[key]*webhooks.Endpoint{}
	var order []key
	var merchants, envs, ids, insts []string
	for i, r := range rows {
		for _, a := range subs {
			if a.MerchantID != r.MerchantID {
				continue
			}
			k := key{scopes[i], a.ID}
			if _, ok := wanted[k]; ok {
				continue
			}
			e := webhooks.RehydrateEndpoint(webhooks.EndpointSnapshot{
				ID: a.ID, Scope: scopes[i], URL: a.URL, EnabledEvents: a.EnabledEvents, Status: webhooks.StatusEnabled,
				AppID: a.AppID, Installation: a.Installation, InstallationScopes: a.Scopes,
			})
			if !match(e, r.Type) {
				continue
			}
			wanted[k] = e
			order = append(order, k)
			merchants, envs, ids, insts = append(merchants, k.scope.MerchantID), append(envs, string(k.scope.Env)),
				append(ids, a.ID), append(insts, a.Installation)
		}
	}
	if len(order) == 0 {
		return nil, nil
	}
	// The copies as they are, held FOR SHARE (a concurrent disable waits for this fan-out, then
	// sees the deliveries it made); only a missing copy, or one of an earlier installation, is
	// written, so the fan-out does not lock the copies that the recording of attempts reads.
	var existing []struct {
		MerchantID   string `db:"merchant_id"`
		Environment  string `db:"environment"`
		ID           string `db:"id"`
		Installation string `db:"installation_id"`
		Status       string `db:"status"`
	}
	if err := tx.SelectContext(ctx, &existing, `SELECT merchant_id, environment, id, coalesce(installation_id::text, '') AS installation_id, status
		FROM webhook_endpoints
		WHERE (merchant_id, environment, id) IN (SELECT * FROM unnest($1::text[], $2::text[], $3::text[]))
			AND app_id IS NOT NULL
		FOR SHARE`, pq.StringArray(merchants), pq.StringArray(envs), pq.StringArray(ids)); err != nil {
		return nil, fmt.Errorf("webhook_endpoints: app copies: %w", err)
	}
	enabled := map[key]bool{}
	current := map[key]bool{}
	for _, r := range existing {
		k := key{core.Scope{MerchantID: r.MerchantID, Env: core.Environment(r.Environment)}, r.ID}
		if e, ok := wanted[k]; ok && r.Installation == e.Installation() {
			current[k] = true
			enabled[k] = r.Status == string(webhooks.StatusEnabled)
		}
	}
	var wm, we, wi, wn []string
	for i, k := range order {
		if !current[k] {
			wm, we, wi, wn = append(wm, merchants[i]), append(we, envs[i]), append(wi, ids[i]), append(wn, insts[i])
			enabled[k] = true
		}
	}
	if len(wm) > 0 {
		if _, err := tx.ExecContext(ctx, upsertAppCopiesSQL, pq.StringArray(wm), pq.StringArray(we), pq.StringArray(wi),
			pq.StringArray(wn), now); err != nil {
			return nil, fmt.Errorf("webhook_endpoints: app copies: %w", err)
		}
	}
	out := map[core.Scope][]*webhooks.Endpoint{}
	for _, k := range order {
		if enabled[k] {
			out[k.scope] = append(out[k.scope], wanted[k])
		}
	}
	return out, nil
}

// upsertAppCopiesSQL writes the copy of an app endpoint in a merchant environment: url, events
// and sealed secret from the app endpoint (its id is the sealing's additional data, so the
// sealed form is valid as it is). An existing copy is taken over by a new installation (and
// enabled again); for the same installation it is left as it is (a copy disabled by failures
// stays disabled).
const upsertAppCopiesSQL = `INSERT INTO webhook_endpoints (merchant_id, environment, id, url, enabled_events,
		description, status, secret_sealed, created, app_id, installation_id)
	SELECT c.m, c.e, a.id, a.url, a.enabled_events, a.description, 'enabled', a.secret_sealed, $5, a.app_id, c.inst::uuid
	FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS c(m, e, id, inst)
	JOIN app_webhook_endpoints a ON a.id = c.id
	ORDER BY c.m, c.e, a.id
	ON CONFLICT (merchant_id, environment, id) DO UPDATE SET installation_id = EXCLUDED.installation_id,
		status = 'enabled', disabled_reason = NULL, failing_since = NULL
	WHERE webhook_endpoints.installation_id IS DISTINCT FROM EXCLUDED.installation_id`

// enabledEndpoints reads the enabled endpoints of scopes FOR SHARE, by scope, each scope's in
// creation order: a concurrent disable or delete waits for the fan-out to commit, so it sees
// (and disables or deletes) the deliveries created for the endpoint, and no pending delivery
// is left behind a disabled endpoint.
func (s *WebhookStore) enabledEndpoints(ctx context.Context, tx *sqlx.Tx, scopes []core.Scope) (map[core.Scope][]*webhooks.Endpoint, error) {
	merchants, envs := make([]string, len(scopes)), make([]string, len(scopes))
	for i, sc := range scopes {
		merchants[i], envs[i] = sc.MerchantID, string(sc.Env)
	}
	var rows []endpointRow
	if err := tx.SelectContext(ctx, &rows, `SELECT `+endpointSelect+` FROM webhook_endpoints
		WHERE (merchant_id, environment) IN (SELECT DISTINCT m, e FROM unnest($1::text[], $2::text[]) AS s(m, e))
			AND status = 'enabled'`+merchantEndpoint+`
		ORDER BY seq FOR SHARE`, pq.StringArray(merchants), pq.StringArray(envs)); err != nil {
		return nil, err
	}
	out := map[core.Scope][]*webhooks.Endpoint{}
	for i := range rows {
		e, err := s.endpoint(&rows[i])
		if err != nil {
			return nil, err
		}
		out[e.Scope()] = append(out[e.Scope()], e)
	}
	return out, nil
}

type claimRow struct {
	MerchantID  string    `db:"merchant_id"`
	Environment string    `db:"environment"`
	ID          string    `db:"id"`
	EndpointID  string    `db:"endpoint_id"`
	EventID     string    `db:"event_id"`
	Attempts    int       `db:"attempts"`
	Type        string    `db:"type"`
	Created     time.Time `db:"created"`
	ObjectKind  string    `db:"object_kind"`
	ObjectID    string    `db:"object_id"`
	Object      []byte    `db:"object"`
	// Installation is the installation of an app delivery, '' for a merchant delivery.
	Installation string `db:"installation_id"`
}

// ClaimDue reserves the next attempt of up to limit due deliveries (see webhooks.Store).
func (s *WebhookStore) ClaimDue(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]*webhooks.Job, error) {
	var jobs []*webhooks.Job
	err := inTx(ctx, s.db, func(tx *sqlx.Tx) error {
		var rows []claimRow
		// An attempt number handed out earlier whose outcome never came (its worker died) is
		// written to the attempt log as interrupted, in the same statement that hands out the
		// next one.
		if err := tx.SelectContext(ctx, &rows, `WITH due AS (
				SELECT d.merchant_id, d.environment, d.id, d.endpoint_id, d.event_id, d.attempts, d.last_attempt_at
				FROM webhook_deliveries d
				JOIN webhook_endpoints e ON e.merchant_id = d.merchant_id AND e.environment = d.environment AND e.id = d.endpoint_id
				WHERE d.status = 'pending' AND d.next_attempt_at <= $1 AND e.status = 'enabled'
				ORDER BY d.next_attempt_at
				LIMIT $3
				FOR UPDATE OF d SKIP LOCKED
			), lost AS (
				INSERT INTO webhook_attempts (merchant_id, environment, delivery_id, attempt, endpoint_id, event_id,
					started_at, latency_ms, status_code, response_excerpt, error)
				SELECT due.merchant_id, due.environment, due.id, due.attempts, due.endpoint_id, due.event_id,
					due.last_attempt_at, 0, NULL, '', $4
				FROM due
				WHERE due.attempts > 0 AND due.last_attempt_at IS NOT NULL AND NOT EXISTS (
					SELECT 1 FROM webhook_attempts a WHERE a.merchant_id = due.merchant_id
						AND a.environment = due.environment AND a.delivery_id = due.id AND a.attempt = due.attempts)
				ON CONFLICT DO NOTHING
			), claimed AS (
				UPDATE webhook_deliveries d SET attempts = d.attempts + 1, next_attempt_at = $2, last_attempt_at = $1
				FROM due WHERE d.merchant_id = due.merchant_id AND d.environment = due.environment AND d.id = due.id
				RETURNING d.merchant_id, d.environment, d.id, d.endpoint_id, d.event_id, d.attempts, d.event_type,
					d.test_event_created, d.test_event_data, d.installation_id
			)
			-- An outbox event is read from events; a test event travels in its delivery.
			SELECT c.merchant_id, c.environment, c.id, c.endpoint_id, c.event_id, c.attempts,
				coalesce(ev.type, c.event_type) AS type, coalesce(ev.created, c.test_event_created) AS created,
				coalesce(ev.object_kind, 'webhook_endpoint') AS object_kind,
				coalesce(ev.object_id, CASE WHEN ev.id IS NULL THEN c.endpoint_id ELSE '' END) AS object_id,
				coalesce(ev.object, c.test_event_data) AS object, coalesce(c.installation_id::text, '') AS installation_id
			FROM claimed c
			LEFT JOIN events ev ON ev.merchant_id = c.merchant_id AND ev.environment = c.environment AND ev.id = c.event_id
			WHERE ev.id IS NOT NULL OR c.test_event_data IS NOT NULL`,
			now, now.Add(lease), limit, webhooks.InterruptedError); err != nil {
			return fmt.Errorf("webhook_deliveries: claim: %w", err)
		}
		cache := map[string]*webhooks.Endpoint{}
		for _, r := range rows {
			scope := core.Scope{MerchantID: r.MerchantID, Env: core.Environment(r.Environment)}
			key := r.MerchantID + "/" + r.Environment + "/" + r.EndpointID
			e, ok := cache[key]
			if !ok {
				var err error
				if e, err = s.getEndpoint(ctx, tx, scope, r.EndpointID, false, true); err != nil {
					return err
				}
				cache[key] = e
			}
			jobs = append(jobs, &webhooks.Job{
				DeliveryID: r.ID, Attempt: r.Attempts, Endpoint: e, Installation: r.Installation,
				Event: webhooks.OutboxEvent{ID: r.EventID, Type: core.EventType(r.Type), Scope: scope, Created: r.Created.UTC(),
					ObjectKind: core.ObjectKind(r.ObjectKind), ObjectID: r.ObjectID, Object: r.Object},
			})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return jobs, nil
}

// RecordAttempt stores an attempt and applies its consequences (see webhooks.Store).
//
// Most attempts leave the endpoint as it was (a success after a success, a failure within a
// run of failures), and all the attempts of one endpoint record concurrently. So fn first runs
// on the endpoint as the claim read it, and when it leaves the endpoint's health (status,
// reason, start of the failure run) as it was, the attempt is recorded by a statement that
// holds the endpoint FOR SHARE and writes the attempt only if its health is still what fn saw
// (attemptBatcher: the attempts recorded at the same time share that statement and its
// commit), and concurrent recorders do not queue behind each other's commits. When the endpoint changed meanwhile (or was deleted) the attempt is recorded in a
// transaction that reads the endpoint FOR SHARE and calls fn on that state; when fn changes
// the endpoint (a run of failures starts or ends, the endpoint is disabled) the attempt is
// recorded with the endpoint FOR UPDATE, calling fn on the state read under that lock.
func (s *WebhookStore) RecordAttempt(ctx context.Context, job *webhooks.Job, a webhooks.Attempt, now time.Time, fn func(*webhooks.Endpoint) webhooks.Next) error {
	e := webhooks.RehydrateEndpoint(job.Endpoint.Snapshot())
	before := e.Snapshot()
	next := fn(e)
	if healthChanged(before, e.Snapshot()) {
		return s.recordAttempt(ctx, job, a, now, fn, true)
	}
	recorded, err := s.attempts.record(ctx, &attemptRecord{job: job, a: a, seen: before, next: next, now: now})
	if recorded {
		return nil
	}
	if err != nil && ctx.Err() != nil {
		return err
	}
	// Not recorded: the endpoint changed or was deleted, or the group failed as a whole
	// (nothing of it was written); this attempt alone takes the transactional path.
	err = s.recordAttempt(ctx, job, a, now, fn, false)
	if errors.Is(err, errEndpointChanged) {
		err = s.recordAttempt(ctx, job, a, now, fn, true)
	}
	return err
}

// errEndpointChanged rolls back a shared-lock try of RecordAttempt whose fn changed the endpoint.
var errEndpointChanged = errors.New("webhook endpoint changed: record under an exclusive lock")

func (s *WebhookStore) recordAttempt(ctx context.Context, job *webhooks.Job, a webhooks.Attempt, now time.Time, fn func(*webhooks.Endpoint) webhooks.Next, exclusive bool) error {
	scope := job.Event.Scope
	return inTx(ctx, s.db, func(tx *sqlx.Tx) error {
		lock := "FOR SHARE"
		if exclusive {
			lock = "FOR UPDATE"
		}
		var r endpointRow
		err := tx.GetContext(ctx, &r, `SELECT `+endpointSelect+` FROM webhook_endpoints
			WHERE merchant_id = $1 AND environment = $2 AND id = $3 `+lock, scope.MerchantID, string(scope.Env), job.Endpoint.ID())
		if errors.Is(err, sql.ErrNoRows) {
			return nil // deleted meanwhile, with its deliveries: nothing left to record
		}
		if err != nil {
			return err
		}
		e, err := s.endpoint(&r)
		if err != nil {
			return err
		}
		before := e.Snapshot()
		next := fn(e)
		if !exclusive && healthChanged(before, e.Snapshot()) {
			return errEndpointChanged
		}
		o := a.Outcome
		var status sql.NullInt64
		if o.StatusCode != 0 {
			status = sql.NullInt64{Int64: int64(o.StatusCode), Valid: true}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO webhook_attempts (merchant_id, environment, delivery_id, attempt,
			endpoint_id, event_id, started_at, latency_ms, status_code, response_excerpt, error)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
			ON CONFLICT (merchant_id, environment, delivery_id, attempt) DO UPDATE SET started_at = EXCLUDED.started_at,
				latency_ms = EXCLUDED.latency_ms, status_code = EXCLUDED.status_code,
				response_excerpt = EXCLUDED.response_excerpt, error = EXCLUDED.error
			WHERE webhook_attempts.error = $12`, // a late outcome replaces the interrupted placeholder
			scope.MerchantID, string(scope.Env), job.DeliveryID, a.Number, e.ID(), job.Event.ID, a.StartedAt,
			o.Latency.Milliseconds(), status, o.Excerpt, nullString(o.Err), webhooks.InterruptedError); err != nil {
			return fmt.Errorf("webhook_attempts: insert: %w", err)
		}
		var completed *time.Time
		if next.Status != webhooks.DeliveryPending {
			completed = &now
		}
		if _, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET status = $5, next_attempt_at = $6, completed_at = $7
			WHERE merchant_id = $1 AND environment = $2 AND id = $3 AND attempts = $4 AND status = 'pending'`,
			scope.MerchantID, string(scope.Env), job.DeliveryID, job.Attempt, string(next.Status), next.NextAttemptAt, completed); err != nil {
			return fmt.Errorf("webhook_deliveries: update: %w", err)
		}
		if !exclusive {
			return nil
		}
		return s.writeEndpointHealth(ctx, tx, before, e, now)
	})
}

// healthChanged reports whether an attempt changed what it may change on an endpoint: its
// status, the reason, or the start of its run of failures.
func healthChanged(before, after webhooks.EndpointSnapshot) bool {
	sameTime := func(a, b *time.Time) bool { return (a == nil) == (b == nil) && (a == nil || a.Equal(*b)) }
	return after.Status != before.Status || after.DisabledReason != before.DisabledReason || !sameTime(after.FailingSince, before.FailingSince)
}

// writeEndpointHealth stores what an attempt can change on an endpoint (status, reason, start
// of the failure run), and only when it changed: most attempts leave the endpoint row alone.
func (s *WebhookStore) writeEndpointHealth(ctx context.Context, tx *sqlx.Tx, before webhooks.EndpointSnapshot, e *webhooks.Endpoint, now time.Time) error {
	after := e.Snapshot()
	if !healthChanged(before, after) {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE webhook_endpoints SET status = $4, disabled_reason = $5, failing_since = $6
		WHERE merchant_id = $1 AND environment = $2 AND id = $3`,
		after.Scope.MerchantID, string(after.Scope.Env), after.ID, string(after.Status),
		nullString(string(after.DisabledReason)), after.FailingSince); err != nil {
		return fmt.Errorf("webhook_endpoints: update health: %w", err)
	}
	if !e.Enabled() {
		return disablePending(ctx, tx, after, now)
	}
	return nil
}

// disablePending ends the pending deliveries of a disabled endpoint.
func disablePending(ctx context.Context, tx *sqlx.Tx, sn webhooks.EndpointSnapshot, now time.Time) error {
	if _, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET status = 'disabled', next_attempt_at = NULL, completed_at = $4
		WHERE merchant_id = $1 AND environment = $2 AND endpoint_id = $3 AND status = 'pending'`,
		sn.Scope.MerchantID, string(sn.Scope.Env), sn.ID, now); err != nil {
		return fmt.Errorf("webhook_deliveries: disable: %w", err)
	}
	return nil
}

// NextDue returns the earliest next_attempt_at of a pending delivery.
func (s *WebhookStore) NextDue(ctx context.Context) (time.Time, bool, error) {
	var at sql.NullTime
	if err := s.db.GetContext(ctx, &at, `SELECT min(next_attempt_at) FROM webhook_deliveries WHERE status = 'pending'`); err != nil {
		return time.Time{}, false, err
	}
	return at.Time, at.Valid, nil
}
