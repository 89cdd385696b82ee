package postgres

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/ports"
)

// IdempotencyStore implements ports.IdempotencyStore (D4) on the idempotency_keys table and
// advisory locks: session-level ones held on a connection outside any transaction for the
// phased shape (Hold). The one-transaction shape's transaction-scoped lock, read and record
// are Tx.IdempotencyKeys.
type IdempotencyStore struct {
	db  handle
	hot *prepared // Get, the read of every replay
	// locks is where Hold takes its connections: a pool of its own, so that the connections
	// held by requests of the phased shape never take the main pool from the phases they run.
	locks *sqlx.DB
}

var _ ports.IdempotencyStore = (*IdempotencyStore)(nil)

// NewIdempotencyStore returns the idempotency record store on db; Hold takes its connections
// from locks (a pool of its own, bounded: a Hold waits when every one is held).
func NewIdempotencyStore(db, locks *sqlx.DB) *IdempotencyStore {
	return &IdempotencyStore{db: wrap(db), hot: newPrepared(db), locks: locks}
}

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

type idempotencyRow struct {
	RequestHash   []byte    `db:"request_hash"`
	Status        *int      `db:"status"`
	ContentType   *string   `db:"content_type"`
	Body          []byte    `db:"body"`
	Created       time.Time `db:"created"`
	RecoveryPoint *string   `db:"recovery_point"`
}

// Get implements ports.IdempotencyStore: the committed record, on the pool, without any lock.
func (s *IdempotencyStore) Get(ctx context.Context, k ports.IdempotencyKey, notBefore time.Time) (*ports.IdempotencyRecord, error) {
	var r idempotencyRow
	err := s.hot.get(ctx, &r, idempotencyGetSQL, k.Scope.MerchantID, string(k.Scope.Env), k.Method, k.Path, k.Key, notBefore)
	return idempotencyOf(&r, err)
}

// idempotencyGetSQL reads the record of a key dated at or after $6.
const idempotencyGetSQL = `SELECT request_hash, status, content_type, body, created, recovery_point
	FROM idempotency_keys WHERE merchant_id = $1 AND environment = $2 AND method = $3 AND path = $4 AND key = $5
	AND created >= $6`

func getIdempotency(ctx context.Context, q sqlx.QueryerContext, k ports.IdempotencyKey, notBefore time.Time) (*ports.IdempotencyRecord, error) {
	var r idempotencyRow
	err := sqlx.GetContext(ctx, q, &r, idempotencyGetSQL, k.Scope.MerchantID, string(k.Scope.Env), k.Method, k.Path, k.Key, notBefore)
	return idempotencyOf(&r, err)
}

// idempotencyOf turns the result of idempotencyGetSQL into the record (nil: none).
func idempotencyOf(r *idempotencyRow, err error) (*ports.IdempotencyRecord, error) {
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("idempotency: read: %w", err)
	}
	rec := &ports.IdempotencyRecord{RequestHash: r.RequestHash, Body: r.Body, CreatedAt: r.Created.UTC()}
	if r.Status != nil {
		rec.Status = *r.Status
	}
	if r.ContentType != nil {
		rec.ContentType = *r.ContentType
	}
	if r.RecoveryPoint != nil {
		rec.RecoveryPoint = *r.RecoveryPoint
	}
	return rec, nil
}

// Hold implements ports.IdempotencyStore with pg_try_advisory_lock on a connection of its
// own, outside any transaction, kept until release. The lock is the same as Lock's (lockID),
// at session level: it lasts as long as the database session, so a process that dies frees
// it when its connection closes, and the next request takes the key over at once. The
// connection is idle between the request's phases (no transaction is open on it, so no
// timeout of the unit of work ends it).
func (s *IdempotencyStore) Hold(ctx context.Context, k ports.IdempotencyKey) (release func(), ok bool, err error) {
	conn, err := s.locks.Connx(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("idempotency: hold: %w", err)
	}
	id := lockID(k)
	if err := conn.GetContext(ctx, &ok, `SELECT pg_try_advisory_lock($1)`, id); err != nil || !ok {
		_ = conn.Close()
		if err != nil {
			return nil, false, fmt.Errorf("idempotency: hold: %w", err)
		}
		return nil, false, nil
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			uctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			var unlocked bool
			if err := conn.GetContext(uctx, &unlocked, `SELECT pg_advisory_unlock($1)`, id); err != nil || !unlocked {
				// Never hand the pool a connection that may still hold the lock: drop it,
				// and the server frees the lock with the session.
				_ = conn.Raw(func(any) error { return driver.ErrBadConn })
			}
			_ = conn.Close()
		})
	}
	return release, true, nil
}

// Start implements ports.IdempotencyStore: one statement, committed at once.
func (s *IdempotencyStore) Start(ctx context.Context, k ports.IdempotencyKey, hash []byte, createdAt time.Time) error {
	_, err := s.db.db.ExecContext(ctx, `INSERT INTO idempotency_keys AS t
		(merchant_id, environment, method, path, key, request_hash, created, recovery_point)
		VALUES ($1, $2, $3, $4, $5, $6, $7, '')
		ON CONFLICT (merchant_id, environment, method, path, key) DO UPDATE
		SET request_hash = EXCLUDED.request_hash, status = NULL, content_type = NULL, body = NULL,
			created = EXCLUDED.created, recovery_point = ''`,
		k.Scope.MerchantID, string(k.Scope.Env), k.Method, k.Path, k.Key, hash, createdAt)
	if err != nil {
		return fmt.Errorf("idempotency: start: %w", err)
	}
	return nil
}

// reachSQL moves a started key's recovery point.
const reachSQL = `UPDATE idempotency_keys SET recovery_point = $6
	WHERE merchant_id = $1 AND environment = $2 AND method = $3 AND path = $4 AND key = $5 AND status IS NULL`

// Reach implements ports.IdempotencyStore: one statement, committed at once.
func (s *IdempotencyStore) Reach(ctx context.Context, k ports.IdempotencyKey, point string) error {
	return reachPoint(ctx, s.db.db, k, point)
}

func reachPoint(ctx context.Context, q sqlx.ExecerContext, k ports.IdempotencyKey, point string) error {
	res, err := q.ExecContext(ctx, reachSQL, k.Scope.MerchantID, string(k.Scope.Env), k.Method, k.Path, k.Key, point)
	if err != nil {
		return fmt.Errorf("idempotency: reach %q: %w", point, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("idempotency: reach %q: %w", point, err)
	}
	if n != 1 {
		return fmt.Errorf("idempotency: reach %q: the key is not started (%d rows)", point, n)
	}
	return nil
}

// Finish implements ports.IdempotencyStore: one statement, committed at once.
func (s *IdempotencyStore) Finish(ctx context.Context, k ports.IdempotencyKey, rec ports.IdempotencyRecord) error {
	if rec.Status == 0 {
		return errors.New("idempotency: finish: a completed record needs a status")
	}
	body := rec.Body
	if body == nil {
		body = []byte{}
	}
	res, err := s.db.db.ExecContext(ctx, `UPDATE idempotency_keys
		SET status = $6, content_type = $7, body = $8, recovery_point = NULL
		WHERE merchant_id = $1 AND environment = $2 AND method = $3 AND path = $4 AND key = $5 AND status IS NULL`,
		k.Scope.MerchantID, string(k.Scope.Env), k.Method, k.Path, k.Key, rec.Status, rec.ContentType, body)
	if err != nil {
		return fmt.Errorf("idempotency: finish: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("idempotency: finish: %w", err)
	}
	if n != 1 {
		return fmt.Errorf("idempotency: finish: the key is not started (%d rows)", n)
	}
	return nil
}

// Purge implements ports.IdempotencyStore: keys expire on the wall clock, whatever the
// clock of their scope (a sandbox test clock never expires a key).
func (s *IdempotencyStore) Purge(ctx context.Context, now time.Time, retention time.Duration) (int64, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE created < $1`, now.Add(-retention))
	if err != nil {
		return 0, fmt.Errorf("idempotency: purge: %w", err)
	}
	return res.RowsAffected()
}

// idempotencyKeys is ports.IdempotencyRecords on a unit of work's transaction (the gate's
// one-transaction shape).
type idempotencyKeys Tx

// IdempotencyKeys is the idempotency record of the gate's one-transaction shape on this
// transaction.
func (t *Tx) IdempotencyKeys() ports.IdempotencyRecords { return idempotencyKeys(*t) }

// Lock takes the key's lock with pg_try_advisory_xact_lock: it is released by the commit or
// rollback of the unit of work, and by the server when the connection dies, so a crashed
// request never leaves a claim behind. It must be its own statement, before Get: Get's
// snapshot is then taken after the lock was granted, so it sees the record committed by the
// previous holder (a lock is released only after its transaction is visible).
func (r idempotencyKeys) Lock(ctx context.Context, k ports.IdempotencyKey) (bool, error) {
	var ok bool
	if err := sqlx.GetContext(ctx, r.q, &ok, `SELECT pg_try_advisory_xact_lock($1)`, lockID(k)); err != nil {
		return false, r.q.a.note(fmt.Errorf("idempotency: lock: %w", err))
	}
	return ok, nil
}

// Get reads the record on the transaction.
func (r idempotencyKeys) Get(ctx context.Context, k ports.IdempotencyKey, notBefore time.Time) (*ports.IdempotencyRecord, error) {
	rec, err := getIdempotency(ctx, r.q, k, notBefore)
	return rec, r.q.a.note(err)
}

// Put stores the completed record. The key's lock is held, so the only row it can meet is an
// expired one, which it replaces.
func (r idempotencyKeys) Put(ctx context.Context, k ports.IdempotencyKey, rec ports.IdempotencyRecord) error {
	if rec.Status == 0 {
		return errors.New("idempotency: store: a completed record needs a status")
	}
	body := rec.Body
	if body == nil {
		body = []byte{}
	}
	_, err := r.q.ExecContext(ctx, `INSERT INTO idempotency_keys AS t
		(merchant_id, environment, method, path, key, request_hash, status, content_type, body, created)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
		ON CONFLICT (merchant_id, environment, method, path, key) DO UPDATE
		SET request_hash = EXCLUDED.request_hash, status = EXCLUDED.status, content_type = EXCLUDED.content_type,
			body = EXCLUDED.body, created = EXCLUDED.created, recovery_point = NULL`,
		k.Scope.MerchantID, string(k.Scope.Env), k.Method, k.Path, k.Key, rec.RequestHash, rec.Status,
		rec.ContentType, body, rec.CreatedAt)
	if err != nil {
		return fmt.Errorf("idempotency: store: %w", err)
	}
	return nil
}
