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
	"github.com/kassa-pay/kassa/modules/identity"
)

// IdentityStore implements identity.Store.
type IdentityStore struct {
	db  handle
	hot *prepared
}

var _ identity.Store = (*IdentityStore)(nil)

// NewIdentityStore returns the merchants, API keys and users store.
func NewIdentityStore(db *sqlx.DB) *IdentityStore {
	return &IdentityStore{db: wrap(db), hot: newPrepared(db)}
}

type merchantRow struct {
	ID        string    `db:"id"`
	Name      string    `db:"name"`
	Country   string    `db:"country"`
	Email     string    `db:"email"`
	Onboarded bool      `db:"onboarded"`
	Created   time.Time `db:"created"`
}

func (r merchantRow) merchant() *identity.Merchant {
	return identity.RehydrateMerchant(identity.MerchantSnapshot{ID: r.ID, Name: r.Name, Country: r.Country,
		Email: r.Email, Onboarded: r.Onboarded, Created: r.Created.UTC()})
}

type apiKeyRow struct {
	ID          string       `db:"id"`
	MerchantID  string       `db:"merchant_id"`
	Environment string       `db:"environment"`
	Name        string       `db:"name"`
	SecretHash  []byte       `db:"secret_hash"`
	Display     string       `db:"display"`
	Created     time.Time    `db:"created"`
	LastUsed    sql.NullTime `db:"last_used"`
	RevokedAt   sql.NullTime `db:"revoked_at"`
}

func nullTime(t sql.NullTime) *time.Time {
	if !t.Valid {
		return nil
	}
	u := t.Time.UTC()
	return &u
}

func (r apiKeyRow) key() *identity.APIKey {
	return identity.RehydrateAPIKey(identity.APIKeySnapshot{ID: r.ID, MerchantID: r.MerchantID, Name: r.Name,
		Display: r.Display, Env: core.Environment(r.Environment), SecretHash: r.SecretHash,
		Created: r.Created.UTC(), LastUsed: nullTime(r.LastUsed), RevokedAt: nullTime(r.RevokedAt)})
}

const merchantCols = `id, name, country, email, onboarded, created`
const apiKeyCols = `id, merchant_id, environment, name, secret_hash, display, created, last_used, revoked_at` //nolint:gosec // G101: a column list, not a credential

func insertKey(ctx context.Context, ex sqlx.ExecerContext, key *identity.APIKey) error {
	k := key.Snapshot()
	_, err := ex.ExecContext(ctx, `INSERT INTO api_keys (id, merchant_id, environment, name, secret_hash, display, created)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		k.ID, k.MerchantID, string(k.Env), k.Name, k.SecretHash, k.Display, k.Created)
	return err
}

// CreateMerchant implements identity.Store.
func (s *IdentityStore) CreateMerchant(ctx context.Context, merchant *identity.Merchant, keys []*identity.APIKey, owner *identity.User) error {
	m := merchant.Snapshot()
	return inTx(ctx, s.db, func(tx *sqlx.Tx) error {
		if owner != nil {
			// One owner e-mail at a time: the lock makes the check below hold until commit
			// for a concurrent create with the same e-mail.
			if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtext('users.email:' || lower($1)))`, owner.Email()); err != nil {
				return fmt.Errorf("identity: lock owner e-mail: %w", err)
			}
			var taken bool
			if err := tx.GetContext(ctx, &taken, `SELECT EXISTS (SELECT 1 FROM users WHERE lower(email) = lower($1))`, owner.Email()); err != nil {
				return fmt.Errorf("identity: look up owner e-mail: %w", err)
			}
			if taken {
				return identity.ErrEmailInUse
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO merchants (`+merchantCols+`) VALUES ($1, $2, $3, $4, $5, $6)`,
			m.ID, m.Name, m.Country, m.Email, m.Onboarded, m.Created); err != nil {
			return fmt.Errorf("identity: insert merchant: %w", err)
		}
		for _, k := range keys {
			if err := insertKey(ctx, tx, k); err != nil {
				return fmt.Errorf("identity: insert api key: %w", err)
			}
		}
		if owner != nil {
			u := owner.Snapshot()
			if _, err := tx.ExecContext(ctx, `INSERT INTO users (id, merchant_id, email, password_hash, created)
				VALUES ($1, $2, $3, $4, $5)`, u.ID, u.MerchantID, u.Email, u.PasswordHash, u.Created); err != nil {
				return fmt.Errorf("identity: insert user: %w", err)
			}
		}
		return nil
	})
}

// GetMerchant implements identity.Store.
func (s *IdentityStore) GetMerchant(ctx context.Context, id string) (*identity.Merchant, error) {
	var r merchantRow
	err := s.db.GetContext(ctx, &r, `SELECT `+merchantCols+` FROM merchants WHERE id = $1`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, identity.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return r.merchant(), nil
}

// SetOnboarded implements identity.Store.
func (s *IdentityStore) SetOnboarded(ctx context.Context, id string) (*identity.Merchant, error) {
	var r merchantRow
	err := s.db.GetContext(ctx, &r, `UPDATE merchants SET onboarded = true WHERE id = $1 RETURNING `+merchantCols, id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, identity.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return r.merchant(), nil
}

// CreateKey implements identity.Store.
func (s *IdentityStore) CreateKey(ctx context.Context, k *identity.APIKey) error {
	err := insertKey(ctx, s.db, k)
	var pqErr *pq.Error
	if errors.As(err, &pqErr) && pqErr.Code == "23503" { // foreign_key_violation: no such merchant
		return identity.ErrNotFound
	}
	return err
}

// ListKeys implements identity.Store.
func (s *IdentityStore) ListKeys(ctx context.Context, merchantID string) ([]*identity.APIKey, error) {
	return s.listKeys(ctx, `merchant_id = $1`, merchantID)
}

// ListScopeKeys implements identity.Store.
func (s *IdentityStore) ListScopeKeys(ctx context.Context, scope core.Scope) ([]*identity.APIKey, error) {
	return s.listKeys(ctx, `merchant_id = $1 AND environment = $2`, scope.MerchantID, string(scope.Env))
}

func (s *IdentityStore) listKeys(ctx context.Context, where string, args ...any) ([]*identity.APIKey, error) {
	var rows []apiKeyRow
	if err := s.db.SelectContext(ctx, &rows, `SELECT `+apiKeyCols+` FROM api_keys WHERE `+where+`
		ORDER BY created DESC, seq DESC`, args...); err != nil {
		return nil, err
	}
	out := make([]*identity.APIKey, len(rows))
	for i, r := range rows {
		out[i] = r.key()
	}
	return out, nil
}

// RevokeKey implements identity.Store.
func (s *IdentityStore) RevokeKey(ctx context.Context, keyID string, at time.Time) (*identity.APIKey, error) {
	return s.revokeKey(ctx, `id = $2`, at, keyID)
}

// RevokeScopeKey implements identity.Store.
func (s *IdentityStore) RevokeScopeKey(ctx context.Context, scope core.Scope, keyID string, at time.Time) (*identity.APIKey, error) {
	return s.revokeKey(ctx, `id = $2 AND merchant_id = $3 AND environment = $4`, at, keyID, scope.MerchantID, string(scope.Env))
}

func (s *IdentityStore) revokeKey(ctx context.Context, where string, at time.Time, args ...any) (*identity.APIKey, error) {
	var r apiKeyRow
	err := s.db.GetContext(ctx, &r, `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $1) WHERE `+where+`
		RETURNING `+apiKeyCols, append([]any{at}, args...)...)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, identity.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return r.key(), nil
}

// KeyByHash implements identity.Store. The lookup uses the unique index on secret_hash; the
// key's sandbox clock comes with it, so a request needs one query to know who it acts for and
// what time it is there.
func (s *IdentityStore) KeyByHash(ctx context.Context, hash []byte) (*identity.AuthRecord, error) {
	var r struct {
		apiKeyRow
		Onboarded bool       `db:"onboarded"`
		Frozen    *time.Time `db:"frozen_time"`
	}
	err := s.hot.get(ctx, &r, `SELECT k.id, k.merchant_id, k.environment, k.name, k.secret_hash, k.display,
			k.created, k.last_used, k.revoked_at, m.onboarded, c.frozen_time
		FROM api_keys k JOIN merchants m ON m.id = k.merchant_id
		LEFT JOIN test_clocks c ON c.merchant_id = k.merchant_id AND c.environment = k.environment
		WHERE k.secret_hash = $1`, hash)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, identity.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if r.Frozen != nil {
		t := r.Frozen.UTC()
		r.Frozen = &t
	}
	return &identity.AuthRecord{Key: r.key(), Onboarded: r.Onboarded, TestClock: r.Frozen}, nil
}

// TouchKey implements identity.Store: at most one write per key and minute, whatever the
// request rate (the SQL is identity.APIKey.Touch's rule), and only to the key of scope (every write after authentication names the
// merchant and environment it acts for).
func (s *IdentityStore) TouchKey(ctx context.Context, scope core.Scope, keyID string, at time.Time) error {
	_, err := s.db.ExecContext(ctx, `UPDATE api_keys SET last_used = $4
		WHERE id = $1 AND merchant_id = $2 AND environment = $3
		AND (last_used IS NULL OR last_used < $4::timestamptz - interval '1 minute')`,
		keyID, scope.MerchantID, string(scope.Env), at)
	return err
}

// UserByEmail returns the merchant's dashboard user with that e-mail (case-insensitive), or
// identity.ErrNotFound.
func (s *IdentityStore) UserByEmail(ctx context.Context, merchantID, email string) (*identity.User, error) {
	var u identity.UserSnapshot
	err := s.db.QueryRowxContext(ctx, `SELECT id, merchant_id, email, password_hash, created FROM users
		WHERE merchant_id = $1 AND lower(email) = lower($2)`, merchantID, email).
		Scan(&u.ID, &u.MerchantID, &u.Email, &u.PasswordHash, &u.Created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, identity.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	u.Created = u.Created.UTC()
	return identity.RehydrateUser(u), nil
}
