package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/modules/identity"
)

// DashboardStore implements identity.DashboardStore: dashboard users by e-mail, sessions
// (kept by the SHA-256 of their token) and failed sign-ins.
type DashboardStore struct{ db handle }

var _ identity.DashboardStore = (*DashboardStore)(nil)

// NewDashboardStore returns the dashboard sign-in store on db.
func NewDashboardStore(db *sqlx.DB) *DashboardStore { return &DashboardStore{db: wrap(db)} }

// UsersByEmail implements identity.DashboardStore.
func (s *DashboardStore) UsersByEmail(ctx context.Context, email string, limit int) ([]*identity.User, error) {
	rows, err := s.db.QueryxContext(ctx, `SELECT id, merchant_id, email, password_hash, created FROM users
		WHERE lower(email) = lower($1) ORDER BY created, id LIMIT $2`, email, limit)
	if err != nil {
		return nil, fmt.Errorf("users: by email: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var out []*identity.User
	for rows.Next() {
		var u identity.UserSnapshot
		if err := rows.Scan(&u.ID, &u.MerchantID, &u.Email, &u.PasswordHash, &u.Created); err != nil {
			return nil, err
		}
		u.Created = u.Created.UTC()
		out = append(out, identity.RehydrateUser(u))
	}
	return out, rows.Err()
}

// CreateSession implements identity.DashboardStore.
func (s *DashboardStore) CreateSession(ctx context.Context, r *identity.SessionRecord) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO dashboard_sessions
		(token_hash, merchant_id, user_id, csrf_token, created, last_seen, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		r.TokenHash, r.MerchantID, r.UserID, r.CSRFToken, r.Created, r.LastSeen, r.ExpiresAt)
	if err != nil {
		return fmt.Errorf("dashboard_sessions: insert: %w", err)
	}
	return nil
}

// SessionByHash implements identity.DashboardStore: one query reads the session, its user and
// its merchant.
func (s *DashboardStore) SessionByHash(ctx context.Context, hash []byte) (*identity.DashboardSession, error) {
	var r struct {
		TokenHash  []byte    `db:"token_hash"`
		MerchantID string    `db:"merchant_id"`
		UserID     string    `db:"user_id"`
		CSRFToken  string    `db:"csrf_token"`
		Created    time.Time `db:"created"`
		LastSeen   time.Time `db:"last_seen"`
		ExpiresAt  time.Time `db:"expires_at"`
		Email      string    `db:"email"`
		Name       string    `db:"name"`
		Onboarded  bool      `db:"onboarded"`
	}
	err := s.db.GetContext(ctx, &r, `SELECT s.token_hash, s.merchant_id, s.user_id, s.csrf_token, s.created,
			s.last_seen, s.expires_at, u.email, m.name, m.onboarded
		FROM dashboard_sessions s JOIN users u ON u.id = s.user_id JOIN merchants m ON m.id = s.merchant_id
		WHERE s.token_hash = $1`, hash)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, identity.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("dashboard_sessions: get: %w", err)
	}
	return &identity.DashboardSession{
		SessionRecord: identity.SessionRecord{
			TokenHash: r.TokenHash, UserID: r.UserID, MerchantID: r.MerchantID, CSRFToken: r.CSRFToken,
			Created: r.Created.UTC(), LastSeen: r.LastSeen.UTC(), ExpiresAt: r.ExpiresAt.UTC(),
		},
		UserEmail: r.Email, MerchantName: r.Name, MerchantOnboarded: r.Onboarded,
	}, nil
}

// TouchSession implements identity.DashboardStore.
func (s *DashboardStore) TouchSession(ctx context.Context, merchantID string, hash []byte, at time.Time) error {
	_, err := s.db.ExecContext(ctx, `UPDATE dashboard_sessions SET last_seen = $3
		WHERE token_hash = $1 AND merchant_id = $2 AND last_seen < $3`, hash, merchantID, at)
	return err
}

// DeleteSession implements identity.DashboardStore.
func (s *DashboardStore) DeleteSession(ctx context.Context, hash []byte) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM dashboard_sessions WHERE token_hash = $1`, hash)
	return err
}

// RecordLoginFailure implements identity.DashboardStore.
func (s *DashboardStore) RecordLoginFailure(ctx context.Context, email, clientIP string, at time.Time) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO login_failures (email, address, at) VALUES ($1, $2, $3)`,
		email, clientIP, at)
	if err != nil {
		return fmt.Errorf("login_failures: insert: %w", err)
	}
	return nil
}

// LoginFailures implements identity.DashboardStore: one query over the rows of the e-mail or
// of the address in the window.
func (s *DashboardStore) LoginFailures(ctx context.Context, email, clientIP string, since time.Time) (identity.LoginFailureCounts, error) {
	var r struct {
		Pair        int          `db:"pair"`
		PairOldest  sql.NullTime `db:"pair_oldest"`
		IP          int          `db:"ip"`
		IPOldest    sql.NullTime `db:"ip_oldest"`
		Email       int          `db:"email"`
		EmailLatest sql.NullTime `db:"email_latest"`
	}
	err := s.db.GetContext(ctx, &r, `SELECT
			count(*) FILTER (WHERE email = $1 AND address = $2) AS pair,
			min(at) FILTER (WHERE email = $1 AND address = $2) AS pair_oldest,
			count(*) FILTER (WHERE address = $2) AS ip,
			min(at) FILTER (WHERE address = $2) AS ip_oldest,
			count(*) FILTER (WHERE email = $1) AS email,
			max(at) FILTER (WHERE email = $1) AS email_latest
		FROM login_failures WHERE (email = $1 OR address = $2) AND at > $3`, email, clientIP, since)
	if err != nil {
		return identity.LoginFailureCounts{}, fmt.Errorf("login_failures: count: %w", err)
	}
	return identity.LoginFailureCounts{
		Pair: r.Pair, PairOldest: r.PairOldest.Time.UTC(),
		IP: r.IP, IPOldest: r.IPOldest.Time.UTC(),
		Email: r.Email, EmailLatest: r.EmailLatest.Time.UTC(),
	}, nil
}

// ClearLoginFailures implements identity.DashboardStore.
func (s *DashboardStore) ClearLoginFailures(ctx context.Context, email, clientIP string) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM login_failures WHERE email = $1 AND address = $2`, email, clientIP)
	return err
}

// PurgeDashboard implements identity.DashboardStore.
func (s *DashboardStore) PurgeDashboard(ctx context.Context, now, idleBefore, failuresBefore time.Time) (int64, error) {
	var total int64
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`DELETE FROM dashboard_sessions WHERE expires_at <= $1 OR last_seen <= $2`, []any{now, idleBefore}},
		{`DELETE FROM login_failures WHERE at <= $1`, []any{failuresBefore}},
	} {
		res, err := s.db.ExecContext(ctx, q.sql, q.args...)
		if err != nil {
			return total, err
		}
		n, _ := res.RowsAffected()
		total += n
	}
	return total, nil
}
