package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/kassa-pay/kassa/modules/apps"
	"github.com/kassa-pay/kassa/modules/webhooks"
)

// AppStore implements apps.Store: apps and their installations (migration 00028).
type AppStore struct{ db handle }

// NewAppStore returns the apps store on the pool.
func NewAppStore(db *sqlx.DB) *AppStore { return &AppStore{db: wrap(db)} }

var _ apps.Store = (*AppStore)(nil)

const appColumns = `id, name, client_id, client_secret_hash, redirect_uris, scopes, reviewed, created`

type appRow struct {
	ID               string         `db:"id"`
	Name             string         `db:"name"`
	ClientID         string         `db:"client_id"`
	ClientSecretHash []byte         `db:"client_secret_hash"`
	RedirectURIs     pq.StringArray `db:"redirect_uris"`
	Scopes           pq.StringArray `db:"scopes"`
	Reviewed         bool           `db:"reviewed"`
	Created          time.Time      `db:"created"`
}

// CreateApp implements apps.Store.
func (s *AppStore) CreateApp(ctx context.Context, a *apps.App) error {
	v := a.Snapshot()
	_, err := s.db.ExecContext(ctx, `INSERT INTO apps (`+appColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		v.ID, v.Name, v.ClientID, v.ClientSecretHash, pq.StringArray(v.RedirectURIs), pq.StringArray(v.Scopes), v.Reviewed, v.Created)
	if err != nil {
		return fmt.Errorf("apps: create app: %w", err)
	}
	return nil
}

// GetApp implements apps.Store.
func (s *AppStore) GetApp(ctx context.Context, id string) (*apps.App, error) {
	var r appRow
	err := sqlx.GetContext(ctx, s.db, &r, `SELECT `+appColumns+` FROM apps WHERE id = $1`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, apps.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("apps: get app: %w", err)
	}
	return apps.RehydrateApp(apps.AppSnapshot{
		ID: r.ID, Name: r.Name, ClientID: r.ClientID, ClientSecretHash: r.ClientSecretHash,
		RedirectURIs: r.RedirectURIs, Scopes: r.Scopes, Reviewed: r.Reviewed, Created: r.Created.UTC(),
	}), nil
}

const installationColumns = `id, app_id, merchant_id, scopes, live_token_hash, test_token_hash, created, revoked_at`

// installationSelect is what a read selects: the written columns and last_used_at, which only
// TouchInstallation writes.
const installationSelect = installationColumns + `, last_used_at`

type installationRow struct {
	ID            string         `db:"id"`
	AppID         string         `db:"app_id"`
	MerchantID    string         `db:"merchant_id"`
	Scopes        pq.StringArray `db:"scopes"`
	LiveTokenHash []byte         `db:"live_token_hash"`
	TestTokenHash []byte         `db:"test_token_hash"`
	Created       time.Time      `db:"created"`
	RevokedAt     *time.Time     `db:"revoked_at"`
	LastUsedAt    *time.Time     `db:"last_used_at"`
}

func (r *installationRow) installation() *apps.Installation {
	var revoked *time.Time
	if r.RevokedAt != nil {
		t := r.RevokedAt.UTC()
		revoked = &t
	}
	var lastUsed *time.Time
	if r.LastUsedAt != nil {
		t := r.LastUsedAt.UTC()
		lastUsed = &t
	}
	return apps.RehydrateInstallation(apps.InstallationSnapshot{
		ID: r.ID, AppID: r.AppID, MerchantID: r.MerchantID, Scopes: r.Scopes,
		LiveTokenHash: r.LiveTokenHash, TestTokenHash: r.TestTokenHash, Created: r.Created.UTC(), RevokedAt: revoked,
		LastUsedAt: lastUsed,
	})
}

// CreateInstallation implements apps.Store.
func (s *AppStore) CreateInstallation(ctx context.Context, i *apps.Installation) error {
	v := i.Snapshot()
	_, err := s.db.ExecContext(ctx, `INSERT INTO app_installations (`+installationColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		v.ID, v.AppID, v.MerchantID, pq.StringArray(v.Scopes), v.LiveTokenHash, v.TestTokenHash, v.Created, v.RevokedAt)
	var pe *pq.Error
	switch {
	case errors.As(err, &pe) && pe.Code == "23505" && pe.Constraint == "app_installations_active":
		return apps.ErrInstalled
	case errors.As(err, &pe) && pe.Code == "23503" && pe.Constraint == "app_installations_merchant_id_fkey":
		return apps.ErrUnknownMerchant
	case errors.As(err, &pe) && pe.Code == "23503":
		return apps.ErrNotFound // the app
	case err != nil:
		return fmt.Errorf("apps: create installation: %w", err)
	}
	return nil
}

// GetInstallation implements apps.Store.
func (s *AppStore) GetInstallation(ctx context.Context, id string) (*apps.Installation, error) {
	return s.installationWhere(ctx, `id = $1`, id)
}

// InstallationByTokenHash implements apps.Store: one index probe per token kind.
func (s *AppStore) InstallationByTokenHash(ctx context.Context, hash []byte) (*apps.Installation, error) {
	return s.installationWhere(ctx, `live_token_hash = $1 OR test_token_hash = $1`, hash)
}

func (s *AppStore) installationWhere(ctx context.Context, where string, arg any) (*apps.Installation, error) {
	var r installationRow
	err := sqlx.GetContext(ctx, s.db, &r, `SELECT `+installationSelect+` FROM app_installations WHERE `+where, arg)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, apps.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("apps: get installation: %w", err)
	}
	return r.installation(), nil
}

// ActiveInstallations implements apps.Store: the merchant's index, newest first.
func (s *AppStore) ActiveInstallations(ctx context.Context, merchantID string) ([]*apps.Installation, error) {
	var rows []installationRow
	err := sqlx.SelectContext(ctx, s.db, &rows, `SELECT `+installationSelect+` FROM app_installations
		WHERE merchant_id = $1 AND revoked_at IS NULL ORDER BY created DESC, id DESC`, merchantID)
	if err != nil {
		return nil, fmt.Errorf("apps: list installations: %w", err)
	}
	out := make([]*apps.Installation, len(rows))
	for i := range rows {
		out[i] = rows[i].installation()
	}
	return out, nil
}

// TouchInstallation implements apps.Store: at most one write per installation and minute,
// whatever the request rate.
func (s *AppStore) TouchInstallation(ctx context.Context, id string, at time.Time) error {
	_, err := s.db.ExecContext(ctx, `UPDATE app_installations SET last_used_at = $2
		WHERE id = $1 AND revoked_at IS NULL AND (last_used_at IS NULL OR last_used_at < $2::timestamptz - interval '1 minute')`, id, at)
	if err != nil {
		return fmt.Errorf("apps: touch installation: %w", err)
	}
	return nil
}

// RevokeInstallation implements apps.Store.
//
// The app's webhook deliveries for the installation stop with it, in the same transaction
// (stopAppDeliveries).
func (s *AppStore) RevokeInstallation(ctx context.Context, id string, at time.Time) error {
	return inTx(ctx, s.db.db, func(tx *sqlx.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE app_installations SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL`, id, at)
		if err != nil {
			return fmt.Errorf("apps: revoke installation: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return apps.ErrNotFound
		}
		return stopAppDeliveries(ctx, tx, id, at)
	})
}

// stopAppDeliveries disables, at once, the app endpoints' copies that deliver for a revoked
// installation and ends their pending deliveries (webhooks.DisabledUninstalled). It runs after
// the statement that revoked the installation, which waited for any fan-out holding the
// installation (FOR SHARE) to commit: in READ COMMITTED this statement sees the deliveries that
// fan-out made.
func stopAppDeliveries(ctx context.Context, tx *sqlx.Tx, installation string, at time.Time) error {
	if _, err := tx.ExecContext(ctx, `UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = $2
		WHERE installation_id = $1::uuid AND status = 'enabled'`, installation, string(webhooks.DisabledUninstalled)); err != nil {
		return fmt.Errorf("apps: stop app deliveries: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET status = 'disabled', next_attempt_at = NULL, completed_at = $2
		WHERE installation_id = $1::uuid AND status = 'pending'`, installation, at); err != nil {
		return fmt.Errorf("apps: stop app deliveries: %w", err)
	}
	return nil
}

// AppByClientID implements apps.Store.
func (s *AppStore) AppByClientID(ctx context.Context, clientID string) (*apps.App, error) {
	var r appRow
	err := sqlx.GetContext(ctx, s.db, &r, `SELECT `+appColumns+` FROM apps WHERE client_id = $1`, clientID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, apps.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("apps: app by client id: %w", err)
	}
	return apps.RehydrateApp(apps.AppSnapshot{
		ID: r.ID, Name: r.Name, ClientID: r.ClientID, ClientSecretHash: r.ClientSecretHash,
		RedirectURIs: r.RedirectURIs, Scopes: r.Scopes, Reviewed: r.Reviewed, Created: r.Created.UTC(),
	}), nil
}

// CreateCode implements apps.Store.
func (s *AppStore) CreateCode(ctx context.Context, c apps.CodeSnapshot) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO app_authorization_codes
		(code_hash, app_id, merchant_id, redirect_uri, scopes, code_challenge, created, expires)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		c.Hash, c.AppID, c.MerchantID, c.RedirectURI, pq.StringArray(c.Scopes), c.Challenge, c.Created, c.Expires)
	if err != nil {
		return fmt.Errorf("apps: create code: %w", err)
	}
	return nil
}

type codeRow struct {
	Hash           []byte         `db:"code_hash"`
	AppID          string         `db:"app_id"`
	MerchantID     string         `db:"merchant_id"`
	RedirectURI    string         `db:"redirect_uri"`
	Scopes         pq.StringArray `db:"scopes"`
	Challenge      string         `db:"code_challenge"`
	Created        time.Time      `db:"created"`
	Expires        time.Time      `db:"expires"`
	UsedAt         *time.Time     `db:"used_at"`
	InstallationID *string        `db:"installation_id"`
}

// RedeemCode implements apps.Store in one transaction; it commits the code's use (and the
// revocation of a reused code's installation) even when it answers an error.
func (s *AppStore) RedeemCode(ctx context.Context, hash []byte, now time.Time, fn func(apps.CodeSnapshot, *apps.Installation) (*apps.Installation, error)) (*apps.Installation, error) {
	var out *apps.Installation
	var answer error
	err := inTx(ctx, s.db.db, func(tx *sqlx.Tx) error {
		var c codeRow
		err := sqlx.GetContext(ctx, tx, &c, `SELECT code_hash, app_id, merchant_id, redirect_uri, scopes, code_challenge,
			created, expires, used_at, installation_id::text AS installation_id
			FROM app_authorization_codes WHERE code_hash = $1 FOR UPDATE`, hash)
		if errors.Is(err, sql.ErrNoRows) {
			answer = apps.ErrNotFound
			return nil
		}
		if err != nil {
			return err
		}
		if c.UsedAt != nil {
			if c.InstallationID != nil {
				if _, err := tx.ExecContext(ctx, `UPDATE app_installations SET revoked_at = $2
					WHERE id = $1 AND revoked_at IS NULL`, *c.InstallationID, now); err != nil {
					return err
				}
				if err := stopAppDeliveries(ctx, tx, *c.InstallationID, now); err != nil {
					return err
				}
			}
			answer = apps.ErrCodeUsed
			return nil
		}
		if _, err := tx.ExecContext(ctx, `UPDATE app_authorization_codes SET used_at = $2 WHERE code_hash = $1`, hash, now); err != nil {
			return err
		}
		var cur installationRow
		var current *apps.Installation
		err = sqlx.GetContext(ctx, tx, &cur, `SELECT `+installationSelect+` FROM app_installations
			WHERE app_id = $1 AND merchant_id = $2 AND revoked_at IS NULL FOR UPDATE`, c.AppID, c.MerchantID)
		switch {
		case err == nil:
			current = cur.installation()
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		inst, ferr := fn(apps.CodeSnapshot{Hash: c.Hash, AppID: c.AppID, MerchantID: c.MerchantID, RedirectURI: c.RedirectURI,
			Scopes: c.Scopes, Challenge: c.Challenge, Created: c.Created.UTC(), Expires: c.Expires.UTC()}, current)
		if ferr != nil {
			answer = ferr
			return nil // the code stays used
		}
		v := inst.Snapshot()
		if current != nil {
			if _, err := tx.ExecContext(ctx, `UPDATE app_installations SET scopes = $2, live_token_hash = $3, test_token_hash = $4
				WHERE id = $1`, v.ID, pq.StringArray(v.Scopes), v.LiveTokenHash, v.TestTokenHash); err != nil {
				return err
			}
		} else if _, err := tx.ExecContext(ctx, `INSERT INTO app_installations (`+installationColumns+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
			v.ID, v.AppID, v.MerchantID, pq.StringArray(v.Scopes), v.LiveTokenHash, v.TestTokenHash, v.Created, v.RevokedAt); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE app_authorization_codes SET installation_id = $2 WHERE code_hash = $1`, hash, v.ID); err != nil {
			return err
		}
		out = inst
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("apps: redeem code: %w", err)
	}
	if answer != nil {
		return nil, answer
	}
	return out, nil
}
