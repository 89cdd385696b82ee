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

type installationRow struct {
	ID            string         `db:"id"`
	AppID         string         `db:"app_id"`
	MerchantID    string         `db:"merchant_id"`
	Scopes        pq.StringArray `db:"scopes"`
	LiveTokenHash []byte         `db:"live_token_hash"`
	TestTokenHash []byte         `db:"test_token_hash"`
	Created       time.Time      `db:"created"`
	RevokedAt     *time.Time     `db:"revoked_at"`
}

func (r *installationRow) installation() *apps.Installation {
	var revoked *time.Time
	if r.RevokedAt != nil {
		t := r.RevokedAt.UTC()
		revoked = &t
	}
	return apps.RehydrateInstallation(apps.InstallationSnapshot{
		ID: r.ID, AppID: r.AppID, MerchantID: r.MerchantID, Scopes: r.Scopes,
		LiveTokenHash: r.LiveTokenHash, TestTokenHash: r.TestTokenHash, Created: r.Created.UTC(), RevokedAt: revoked,
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
	err := sqlx.GetContext(ctx, s.db, &r, `SELECT `+installationColumns+` FROM app_installations WHERE `+where, arg)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, apps.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("apps: get installation: %w", err)
	}
	return r.installation(), nil
}

// RevokeInstallation implements apps.Store.
func (s *AppStore) RevokeInstallation(ctx context.Context, id string, at time.Time) error {
	res, err := s.db.ExecContext(ctx, `UPDATE app_installations SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL`, id, at)
	if err != nil {
		return fmt.Errorf("apps: revoke installation: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return apps.ErrNotFound
	}
	return nil
}
