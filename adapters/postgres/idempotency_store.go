package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/ports"
)

// IdempotencyStore implements ports.IdempotencyStore (D4) on the idempotency_keys table.
type IdempotencyStore struct {
	db  *sqlx.DB
	hot *prepared
}

var _ ports.IdempotencyStore = (*IdempotencyStore)(nil)

// NewIdempotencyStore returns the idempotency record store.
func NewIdempotencyStore(db *sqlx.DB) *IdempotencyStore {
	return &IdempotencyStore{db: db, hot: newPrepared(db)}
}

// claimSQL inserts a fresh in-flight claim, or takes over the existing row when it has expired
// or is an abandoned in-flight claim. ON CONFLICT locks the conflicting row and re-checks the
// WHERE clause against its newest version, so exactly one of any number of concurrent callers
// gets a row back.
const claimSQL = `INSERT INTO idempotency_keys AS t
	(merchant_id, environment, method, path, key, request_hash, in_flight, status, content_type, body, created)
VALUES ($1, $2, $3, $4, $5, $6, true, NULL, NULL, NULL, $7)
ON CONFLICT (merchant_id, environment, method, path, key) DO UPDATE
	SET request_hash = EXCLUDED.request_hash, in_flight = true, status = NULL, content_type = NULL,
		body = NULL, created = EXCLUDED.created
	WHERE t.created < $8 OR (t.in_flight AND t.created < $9)
RETURNING true`

type idempotencyRow struct {
	RequestHash []byte         `db:"request_hash"`
	InFlight    bool           `db:"in_flight"`
	Status      sql.NullInt64  `db:"status"`
	ContentType sql.NullString `db:"content_type"`
	Body        []byte         `db:"body"`
	Created     time.Time      `db:"created"`
}

// Claim implements ports.IdempotencyStore. It reads first: a live record (finished, or in
// flight within its lease) is answered without a write, so replays of one key never queue on
// that key's row lock. Only an absent, expired or abandoned key is claimed, with one atomic
// statement that gives exactly one owner under any concurrency.
func (s *IdempotencyStore) Claim(ctx context.Context, k ports.IdempotencyKey, hash []byte, now, expiredBefore, staleBefore time.Time) (*ports.IdempotencyRecord, error) {
	// The loop only repeats when the row we lost to was released (deleted) between the claim
	// attempt and the read; a handful of rounds is plenty.
	for range 5 {
		rec, err := s.read(ctx, k)
		if err != nil {
			return nil, err
		}
		if rec != nil && !rec.CreatedAt.Before(expiredBefore) && !(rec.InFlight && rec.CreatedAt.Before(staleBefore)) {
			return rec, nil
		}
		var claimed bool
		err = s.db.QueryRowxContext(ctx, claimSQL, k.Scope.MerchantID, string(k.Scope.Env), k.Method, k.Path, k.Key,
			hash, now, expiredBefore, staleBefore).Scan(&claimed)
		if err == nil {
			return nil, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("idempotency: claim: %w", err)
		}
		// Another request claimed or finished the key in between: read what it left.
	}
	return nil, errors.New("idempotency: claim did not settle; the key is being claimed and released repeatedly")
}

// read returns the record stored under k, or nil.
func (s *IdempotencyStore) read(ctx context.Context, k ports.IdempotencyKey) (*ports.IdempotencyRecord, error) {
	var r idempotencyRow
	err := s.hot.get(ctx, &r, `SELECT request_hash, in_flight, status, content_type, body, created
		FROM idempotency_keys WHERE merchant_id = $1 AND environment = $2 AND method = $3 AND path = $4 AND key = $5`,
		k.Scope.MerchantID, string(k.Scope.Env), k.Method, k.Path, k.Key)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("idempotency: read: %w", err)
	}
	return &ports.IdempotencyRecord{
		RequestHash: r.RequestHash, InFlight: r.InFlight, Status: int(r.Status.Int64),
		ContentType: r.ContentType.String, Body: r.Body, CreatedAt: r.Created.UTC(),
	}, nil
}

// Complete implements ports.IdempotencyStore. Only an in-flight claim is completed, so a
// finished record is never overwritten.
func (s *IdempotencyStore) Complete(ctx context.Context, k ports.IdempotencyKey, status int, contentType string, body []byte) error {
	if body == nil {
		body = []byte{}
	}
	_, err := s.db.ExecContext(ctx, `UPDATE idempotency_keys SET in_flight = false, status = $6, content_type = $7, body = $8
		WHERE merchant_id = $1 AND environment = $2 AND method = $3 AND path = $4 AND key = $5 AND in_flight`,
		k.Scope.MerchantID, string(k.Scope.Env), k.Method, k.Path, k.Key, status, contentType, body)
	if err != nil {
		return fmt.Errorf("idempotency: complete: %w", err)
	}
	return nil
}

// Release implements ports.IdempotencyStore: it deletes the key's in-flight claim.
func (s *IdempotencyStore) Release(ctx context.Context, k ports.IdempotencyKey) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM idempotency_keys
		WHERE merchant_id = $1 AND environment = $2 AND method = $3 AND path = $4 AND key = $5 AND in_flight`,
		k.Scope.MerchantID, string(k.Scope.Env), k.Method, k.Path, k.Key)
	if err != nil {
		return fmt.Errorf("idempotency: release: %w", err)
	}
	return nil
}

// Purge implements ports.IdempotencyStore.
func (s *IdempotencyStore) Purge(ctx context.Context, before time.Time) (int64, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE created < $1`, before)
	if err != nil {
		return 0, fmt.Errorf("idempotency: purge: %w", err)
	}
	return res.RowsAffected()
}
