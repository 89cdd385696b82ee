// Package pgtest gives tests a database of their own: a fresh, migrated PostgreSQL database
// created on the server named by KASSA_DATABASE_URL (default: the local server) and dropped when
// the test ends. Tests never touch data they did not create.
package pgtest

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/core"
)

// DefaultURL is used when KASSA_DATABASE_URL is unset: the local server with trust auth.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// AdminURL is the server tests create their databases on.
func AdminURL() string {
	if u := os.Getenv("KASSA_DATABASE_URL"); u != "" {
		return u
	}
	return DefaultURL
}

// CreateDatabase creates an empty database with a random name on the server of adminURL and
// returns its URL and a function that drops it.
func CreateDatabase(ctx context.Context, adminURL string) (string, func(), error) {
	admin, err := sql.Open("postgres", adminURL)
	if err != nil {
		return "", nil, err
	}
	name := "kassa_t_" + strings.ToLower(core.RandomBase62(12))
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		_ = admin.Close()
		return "", nil, fmt.Errorf("pgtest: create database: %w", err)
	}
	u, err := url.Parse(adminURL)
	if err != nil {
		_ = admin.Close()
		return "", nil, err
	}
	u.Path = "/" + name
	drop := func() {
		dctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = admin.ExecContext(dctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		_ = admin.Close()
	}
	return u.String(), drop, nil
}

// New returns a connection to a fresh, fully migrated database that is dropped when t ends.
func New(t testing.TB) *sqlx.DB {
	t.Helper()
	db, _ := NewWithURL(t)
	return db
}

// NewWithURL is New that also returns the database's URL, for code under test that opens the
// database itself (the CLI's subcommands, the bench's floors).
func NewWithURL(t testing.TB) (*sqlx.DB, string) {
	t.Helper()
	ctx := context.Background()
	dbURL, drop, err := CreateDatabase(ctx, AdminURL())
	if err != nil {
		t.Fatalf("pgtest: %v (set KASSA_DATABASE_URL or run through `make test`)", err)
	}
	db, err := postgres.Open(ctx, dbURL)
	if err != nil {
		drop()
		t.Fatalf("pgtest: %v", err)
	}
	// Test packages run in parallel, each with databases of its own: keep pools small.
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(8)
	t.Cleanup(func() { _ = db.Close(); drop() })
	if _, err := postgres.MigrateUp(ctx, db); err != nil {
		t.Fatalf("pgtest: migrate: %v", err)
	}
	return db, dbURL
}

// Merchant inserts an onboarded merchant and returns its test scope; tests isolate themselves
// by working under merchants of their own.
func Merchant(t testing.TB, db *sqlx.DB) core.Scope {
	t.Helper()
	id := core.NewID(core.PrefixMerchant)
	if _, err := db.Exec(`INSERT INTO merchants (id, name, country, email, onboarded) VALUES ($1, 'Test merchant', 'DE', 'owner@example.com', true)`, id); err != nil {
		t.Fatalf("pgtest: merchant: %v", err)
	}
	return core.Scope{MerchantID: id, Env: core.EnvTest}
}
