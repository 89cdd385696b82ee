package postgres

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/ports"
)

// IdempotencyStore implements ports.IdempotencyStore (D4) on the idempotency_keys table and
// transaction-scoped advisory locks.
type IdempotencyStore struct {
	db handle
}

var _ ports.IdempotencyStore = (*IdempotencyStore)(nil)

// NewIdempotencyStore returns the idempotency record store.
func NewIdempotencyStore(db *sqlx.DB) *IdempotencyStore {
	return &IdempotencyStore{db: wrap(db)}
}

// ErrNoUnitOfWork is returned by the idempotency store's Lock, Get and Put called outside a
// unit of work: a lock or a record outside the change's own transaction is what D4 forbids.
var ErrNoUnitOfWork = errors.New("idempotency: must run inside a unit of work")

// lockID is the advisory lock of a key: the first 64 bits of a SHA-256 of every part of it,
// each length-prefixed so no two keys share an encoding. Two different keys could share a lock
// with a probability of 2⁻⁶⁴; the price would be one 409 idempotency_key_in_use.
func lockID(k ports.IdempotencyKey) int64 {
	h := sha256.New()
	for _, part := range []string{"kassa/idempotency", k.Scope.MerchantID, string(k.Scope.Env), k.Method, k.Path, k.Key} {
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(part))) //nolint:gosec // G115: a length is never negative, and each part is far below 4 GiB (the key ≤ 255 bytes, the path within the HTTP header limit)
		h.Write(n[:])
		h.Write([]byte(part))
	}
	return int64(binary.BigEndian.Uint64(h.Sum(nil)[:8])) //nolint:gosec // G115: the hash's bits reinterpreted; every int64 is a lock id
}

// Lock implements ports.IdempotencyStore with pg_try_advisory_xact_lock: the lock is released
// by the commit or rollback of the unit of work, and by the server when the connection dies,
// so a crashed request never leaves a claim behind. It must be its own statement, before Get:
// Get's snapshot is then taken after the lock was granted, so it sees the record committed by
// the previous holder (a lock is released only after its transaction is visible).
func (s *IdempotencyStore) Lock(ctx context.Context, k ports.IdempotencyKey) (bool, error) {
	if ambientOf(ctx) == nil {
		return false, ErrNoUnitOfWork
	}
	var ok bool
	if err := s.db.GetContext(ctx, &ok, `SELECT pg_try_advisory_xact_lock($1)`, lockID(k)); err != nil {
		return false, fmt.Errorf("idempotency: lock: %w", err)
	}
	return ok, nil
}

type idempotencyRow struct {
	RequestHash []byte    `db:"request_hash"`
	Status      int       `db:"status"`
	ContentType string    `db:"content_type"`
	Body        []byte    `db:"body"`
	Created     time.Time `db:"created"`
}

// Get implements ports.IdempotencyStore.
func (s *IdempotencyStore) Get(ctx context.Context, k ports.IdempotencyKey, notBefore time.Time) (*ports.IdempotencyRecord, error) {
	if ambientOf(ctx) == nil {
		return nil, ErrNoUnitOfWork
	}
	var r idempotencyRow
	err := s.db.GetContext(ctx, &r, `SELECT request_hash, status, content_type, body, created
		FROM idempotency_keys WHERE merchant_id = $1 AND environment = $2 AND method = $3 AND path = $4 AND key = $5
		AND created >= $6`,
		k.Scope.MerchantID, string(k.Scope.Env), k.Method, k.Path, k.Key, notBefore)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("idempotency: read: %w", err)
	}
	return &ports.IdempotencyRecord{RequestHash: r.RequestHash, Status: r.Status, ContentType: r.ContentType,
		Body: r.Body, CreatedAt: r.Created.UTC()}, nil
}

// Put implements ports.IdempotencyStore. The key's lock is held, so the only row it can meet
// is an expired one, which it replaces.
func (s *IdempotencyStore) Put(ctx context.Context, k ports.IdempotencyKey, rec ports.IdempotencyRecord) error {
	if ambientOf(ctx) == nil {
		return ErrNoUnitOfWork
	}
	body := rec.Body
	if body == nil {
		body = []byte{}
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO idempotency_keys AS t
		(merchant_id, environment, method, path, key, request_hash, status, content_type, body, created)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
		ON CONFLICT (merchant_id, environment, method, path, key) DO UPDATE
		SET request_hash = EXCLUDED.request_hash, status = EXCLUDED.status, content_type = EXCLUDED.content_type,
			body = EXCLUDED.body, created = EXCLUDED.created`,
		k.Scope.MerchantID, string(k.Scope.Env), k.Method, k.Path, k.Key, rec.RequestHash, rec.Status,
		rec.ContentType, body, rec.CreatedAt)
	if err != nil {
		return fmt.Errorf("idempotency: store: %w", err)
	}
	return nil
}

// Purge implements ports.IdempotencyStore. A record is dated on its scope's clock, so it is
// judged by that clock: a scope on real time by now, a test environment whose clock is frozen
// by its frozen time (which may be ahead of now or behind it).
func (s *IdempotencyStore) Purge(ctx context.Context, now time.Time, retention time.Duration) (int64, error) {
	byNow, err := s.db.ExecContext(ctx, `DELETE FROM idempotency_keys k WHERE k.created < $1
		AND NOT EXISTS (SELECT 1 FROM test_clocks c WHERE c.merchant_id = k.merchant_id
			AND c.environment = k.environment AND c.frozen_time IS NOT NULL)`, now.Add(-retention))
	if err != nil {
		return 0, fmt.Errorf("idempotency: purge: %w", err)
	}
	frozen, err := s.db.ExecContext(ctx, `DELETE FROM idempotency_keys k USING test_clocks c
		WHERE c.merchant_id = k.merchant_id AND c.environment = k.environment AND c.frozen_time IS NOT NULL
		AND k.created < c.frozen_time - make_interval(secs => $1)`, retention.Seconds())
	if err != nil {
		return 0, fmt.Errorf("idempotency: purge frozen clocks: %w", err)
	}
	a, _ := byNow.RowsAffected()
	b, _ := frozen.RowsAffected()
	return a + b, nil
}
