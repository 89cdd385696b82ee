package main

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq" // the driver the server uses

	"github.com/kassa-pay/kassa/core"
)

// Floors: what the database alone costs for the same work, through the same driver (sqlx over
// lib/pq), from the same load generator shape (conns workers, a pool of conns connections).
const (
	floorInsert = "floor: INSERT session + event, COMMIT"
	floorSelect = "floor: SELECT session by primary key"
)

// floorDB is the floors' connection pool, open only while a floor runs (so that the server's
// pool and the floor's never hold max_connections between them).
type floorDB struct {
	url   string
	conns int
	db    *sqlx.DB
}

func (f *floorDB) open(ctx context.Context) (err error) {
	f.db, err = openFloorDB(ctx, f.url, f.conns)
	return err
}

func (f *floorDB) close() {
	if f.db != nil {
		f.db.Close()
		f.db = nil
	}
}

func openFloorDB(ctx context.Context, url string, conns int) (*sqlx.DB, error) {
	db, err := sqlx.Open("postgres", url)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	// On a PostgreSQL shared with other work, max_connections may be reached for a moment
	// (other test suites open and drop databases): wait for a slot rather than abandon the run.
	for wait := 0; ; wait++ {
		err := db.PingContext(ctx)
		if err == nil {
			return db, nil
		}
		var pe *pq.Error
		if !errors.As(err, &pe) || pe.Code != "53300" || wait >= 60 || ctx.Err() != nil {
			db.Close()
			return nil, fmt.Errorf("floor database: %w", err)
		}
		time.Sleep(time.Second)
	}
}

const insertSessionSQL = `INSERT INTO checkout_sessions (
	id, merchant_id, environment, checkout_mode, status, amount, currency,
	client_secret, client_secret_hash, checkout_url, embed_url, customer_name, customer_email,
	reference, description, success_url, cancel_url, line_items, metadata,
	cancellation_reason, created, expires_at)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22)`

// insertEventSQL writes the event and queues it for the fan-out, as the server's outbox does.
const insertEventSQL = `WITH e AS (INSERT INTO events (id, merchant_id, environment, type, created, object, object_kind)
	VALUES ($1, $2, $3, $4, $5, $6, 'checkout.session') RETURNING 1)
	INSERT INTO event_fanout (merchant_id, environment, event_id) VALUES ($2, $3, $1)`

const eventData = `{"id":"%s","object":"checkout.session","mode":"test","checkout_mode":"payment",` +
	`"status":"open","amount":4990,"currency":"eur","customer_name":"Ada Lovelace",` +
	`"customer_email":"ada@example.com","reference":"order-10042","description":"Two books",` +
	`"line_items":[{"name":"The Analytical Engine","quantity":2,"amount":2495,"image_url":null,"price_id":null,"product_id":null}],` +
	`"metadata":{"order_id":"10042"},"created":%d,"expires_at":%d}`

// insertFloor: one transaction inserting a checkout_sessions row shaped like the server's (same
// columns and values as the create-session scenario) plus an outbox row in events.
func insertFloor(f *floorDB, merchantID, checkoutBase string) scenario {
	return scenario{name: floorInsert, before: f.open, after: f.close, newOp: func(int) op {
		db := f.db
		return func(ctx context.Context) error {
			id := core.NewID(core.PrefixSession)
			secret := id + "_secret_" + core.NewSecretPart()
			hash := sha256.Sum256([]byte(secret))
			now := time.Now().UTC()
			exp := now.Add(24 * time.Hour)
			tx, err := db.BeginTxx(ctx, nil)
			if err != nil {
				return err
			}
			defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
			if _, err := tx.ExecContext(ctx, insertSessionSQL,
				id, merchantID, "test", "payment", "open", int64(4990), "eur", secret, hash[:],
				checkoutBase+"/c/"+id+"?cs="+secret, checkoutBase+"/embed/"+id+"?cs="+secret,
				"Ada Lovelace", "ada@example.com", "order-10042", "Two books",
				"https://shop.example/thanks", "https://shop.example/cart",
				[]byte(`[{"name":"The Analytical Engine","quantity":2,"amount":2495,"image_url":null,"price_id":null,"product_id":null}]`),
				[]byte(`{"order_id":"10042"}`), nil, now, exp); err != nil {
				return fmt.Errorf("insert session: %w", err)
			}
			if _, err := tx.ExecContext(ctx, insertEventSQL,
				core.NewID(core.PrefixEvent), merchantID, "test", "checkout.session.created", now,
				[]byte(fmt.Sprintf(eventData, id, now.Unix(), exp.Unix()))); err != nil {
				return fmt.Errorf("insert event: %w", err)
			}
			return tx.Commit()
		}
	}}
}

type floorRow struct {
	ID                 string    `db:"id"`
	MerchantID         string    `db:"merchant_id"`
	Environment        string    `db:"environment"`
	CheckoutMode       string    `db:"checkout_mode"`
	Status             string    `db:"status"`
	Amount             int64     `db:"amount"`
	Currency           string    `db:"currency"`
	ClientSecret       string    `db:"client_secret"`
	CheckoutURL        string    `db:"checkout_url"`
	EmbedURL           string    `db:"embed_url"`
	CustomerName       string    `db:"customer_name"`
	CustomerEmail      string    `db:"customer_email"`
	Reference          *string   `db:"reference"`
	Description        *string   `db:"description"`
	SuccessURL         *string   `db:"success_url"`
	CancelURL          *string   `db:"cancel_url"`
	LineItems          []byte    `db:"line_items"`
	Metadata           []byte    `db:"metadata"`
	CancellationReason *string   `db:"cancellation_reason"`
	Created            time.Time `db:"created"`
	ExpiresAt          time.Time `db:"expires_at"`
}

const selectSessionSQL = `SELECT id, merchant_id, environment, checkout_mode, status, amount, currency,
	client_secret, checkout_url, embed_url, customer_name, customer_email, reference, description,
	success_url, cancel_url, line_items, metadata, cancellation_reason, created, expires_at
	FROM checkout_sessions WHERE merchant_id = $1 AND environment = 'test' AND id = $2`

// selectFloor: a bare primary-key SELECT of one session row (the key is merchant,
// environment, id), over the same id pool the retrieve scenario reads.
func selectFloor(f *floorDB, merchantID string, ids []string) scenario {
	return scenario{name: floorSelect, before: f.open, after: f.close, newOp: func(w int) op {
		db := f.db
		i := w * 7919
		return func(ctx context.Context) error {
			i++
			var r floorRow
			if err := db.GetContext(ctx, &r, selectSessionSQL, merchantID, ids[i%len(ids)]); err != nil {
				return fmt.Errorf("select session: %w", err)
			}
			return nil
		}
	}}
}

// analyzer runs ANALYZE on the database (the -analyze flag) between a scenario's warm-up and
// its measured run: a database whose autovacuum is off, or that grew within the last
// autovacuum_naptime, has no statistics yet. It runs after the warm-up because most scenarios
// use a merchant created for them: analysed before its first rows, the statistics say the
// merchant has none, the planner then estimates one row for "this merchant's rows" and a
// lookup by id may pick the merchant's list index and filter every row of it (see
// docs/performance.md, Planner statistics) — a state autovacuum does not keep for long.
func analyzer(url string) func(context.Context) error {
	return func(ctx context.Context) error {
		db, err := openFloorDB(ctx, url, 1)
		if err != nil {
			return err
		}
		_, err = db.ExecContext(ctx, "ANALYZE")
		db.Close()
		if err != nil {
			return fmt.Errorf("analyze: %w", err)
		}
		return nil
	}
}
