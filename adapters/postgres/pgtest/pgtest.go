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
	"sync"
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
	return createDatabase(ctx, adminURL, "")
}

// createDatabase creates a database with a random name, a copy of the database template when
// it is not "" (a name createDatabase made), else empty.
func createDatabase(ctx context.Context, adminURL, template string) (string, func(), error) {
	name := "kassa_t_" + strings.ToLower(core.RandomBase62(12))
	create := "CREATE DATABASE " + name
	if template != "" {
		create = "CREATE DATABASE " + name + " TEMPLATE " + template
	}
	if err := adminExec(ctx, adminURL, create); err != nil {
		return "", nil, fmt.Errorf("pgtest: create database: %w", err)
	}
	u, err := url.Parse(adminURL)
	if err != nil {
		return "", nil, err
	}
	u.Path = "/" + name
	drop := func() {
		dctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = adminExec(dctx, adminURL, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	}
	return u.String(), drop, nil
}

// adminExec runs stmt on the server of adminURL on a connection of its own, closed at once: a
// test's database holds no connection of the server's while the test runs (their number is
// the server's max_connections, shared by every test process).
func adminExec(ctx context.Context, adminURL, stmt string) error {
	admin, err := sql.Open("postgres", adminURL)
	if err != nil {
		return err
	}
	defer func() { _ = admin.Close() }()
	_, err = admin.ExecContext(ctx, stmt)
	return err
}

// The test process's migrated template: a database migrated once, of which every migrated
// database the process creates is a copy (CreateMigratedDatabase). Main drops it.
var migrated struct {
	mu      sync.Mutex
	main    bool   // Main is running the tests
	name    string // "" until the first migrated database is asked for
	dropAll func() // drops the template
}

// Main runs a test process's tests (run is m.Run, or a TestMain's own function around it) and
// drops the process's template database when they end; migrated databases (New, NewWithURL,
// CreateMigratedDatabase) are refused in a process that does not run its tests through it:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m.Run)) }
func Main(run func() int) int {
	migrated.mu.Lock()
	migrated.main = true
	migrated.mu.Unlock()
	defer func() {
		migrated.mu.Lock()
		defer migrated.mu.Unlock()
		if migrated.dropAll != nil {
			migrated.dropAll()
			migrated.name, migrated.dropAll = "", nil
		}
	}()
	return run()
}

// CreateMigratedDatabase is CreateDatabase with every migration applied. The migrations run
// once per test process, on a template database; each database after that is a copy of it
// (CREATE DATABASE … TEMPLATE, a file copy on the server): migrating a fresh database costs
// seconds, copying one a fraction of that. The template is dropped by Main (or DropTemplate),
// which the process's TestMain must call.
func CreateMigratedDatabase(ctx context.Context, adminURL string) (string, func(), error) {
	name, err := migratedTemplate(ctx, adminURL)
	if err != nil {
		return "", nil, err
	}
	return createDatabase(ctx, adminURL, name)
}

// migratedTemplate returns the name of the process's migrated template, creating it first.
// No session stays connected to it (a template must have none when it is copied), and it takes
// no connections after it is migrated.
func migratedTemplate(ctx context.Context, adminURL string) (string, error) {
	migrated.mu.Lock()
	defer migrated.mu.Unlock()
	if !migrated.main {
		return "", fmt.Errorf("pgtest: a migrated database needs the package's TestMain to run its tests through pgtest.Main (which drops the template database)")
	}
	if migrated.name != "" {
		return migrated.name, nil
	}
	u, drop, err := CreateDatabase(ctx, adminURL)
	if err != nil {
		return "", err
	}
	db, err := postgres.Open(ctx, u)
	if err != nil {
		drop()
		return "", err
	}
	_, err = postgres.MigrateUp(ctx, db)
	_ = db.Close()
	if err != nil {
		drop()
		return "", fmt.Errorf("pgtest: migrate the template: %w", err)
	}
	parsed, err := url.Parse(u)
	if err != nil {
		drop()
		return "", err
	}
	name := strings.TrimPrefix(parsed.Path, "/")
	if err := adminExec(ctx, adminURL, "ALTER DATABASE "+name+" WITH ALLOW_CONNECTIONS false"); err != nil {
		drop()
		return "", fmt.Errorf("pgtest: close the template to connections: %w", err)
	}
	migrated.name, migrated.dropAll = name, drop
	return name, nil
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
	dbURL, drop, err := CreateMigratedDatabase(ctx, AdminURL())
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
