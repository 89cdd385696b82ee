// Package postgres implements Kassa's stores on PostgreSQL with sqlx over lib/pq, and owns the
// goose migrations embedded in the binary.
package postgres

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq" // registers the "postgres" driver
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

//go:embed migrations/*.sql
var migrations embed.FS

// DefaultMaxConns bounds a pool: a 2-core Postgres gains nothing from more concurrent
// statements, and several processes (or test packages) must fit in its max_connections.
const DefaultMaxConns = 20

// Open connects to url and checks the connection. Unless the URL says otherwise it turns on
// lib/pq's binary_parameters, which sends a parameterised statement in one round trip instead
// of two (parse+describe, then bind+execute); the stores pass JSON as text for that reason.
func Open(ctx context.Context, url string) (*sqlx.DB, error) {
	db, err := sqlx.Open("postgres", withBinaryParameters(url))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(DefaultMaxConns)
	db.SetMaxIdleConns(DefaultMaxConns)
	db.SetConnMaxIdleTime(5 * time.Minute)
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		_ = db.Close() // the ping error is the one to report
		return nil, fmt.Errorf("postgres: cannot reach the database: %w", err)
	}
	return db, nil
}

func provider(db *sql.DB) (*goose.Provider, error) {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return nil, err
	}
	return providerOf(db, sub)
}

// providerOf is the goose provider of the migrations in fsys. Migrations apply strictly in
// order: a database that has a later migration but lacks an earlier one (a newcomer numbered
// below what is applied) is refused by Up with goose's "missing (out-of-order) migrations"
// error instead of being migrated in an order nobody tested.
func providerOf(db *sql.DB, fsys fs.FS) (*goose.Provider, error) {
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return nil, err
	}
	return goose.NewProvider(goose.DialectPostgres, db, fsys, goose.WithSessionLocker(locker))
}

// MigrateUp applies every pending migration while holding goose's Postgres advisory lock, so
// several processes starting together migrate once. It refuses a database that lacks a
// migration numbered below one it has (see providerOf).
func MigrateUp(ctx context.Context, db *sqlx.DB) ([]string, error) {
	p, err := provider(db.DB)
	if err != nil {
		return nil, err
	}
	return migrateUp(ctx, p)
}

func migrateUp(ctx context.Context, p *goose.Provider) ([]string, error) {
	res, err := p.Up(ctx)
	var applied []string
	for _, r := range res {
		applied = append(applied, r.Source.Path)
	}
	return applied, err
}

// MigrationStatus reports each known migration and whether it is applied.
type MigrationStatus struct {
	Version int64
	Name    string
	Applied bool
}

// Status lists the embedded migrations and their state in the database.
func Status(ctx context.Context, db *sqlx.DB) ([]MigrationStatus, error) {
	p, err := provider(db.DB)
	if err != nil {
		return nil, err
	}
	st, err := p.Status(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]MigrationStatus, 0, len(st))
	for _, s := range st {
		out = append(out, MigrationStatus{Version: s.Source.Version, Name: s.Source.Path, Applied: s.State == goose.StateApplied})
	}
	return out, nil
}

// ErrSchemaBehind means the database lacks migrations this binary carries.
var ErrSchemaBehind = errors.New("database schema is behind this binary; run `kassa migrate up` or start with --migrate")

// CheckCurrent returns ErrSchemaBehind when a migration is pending.
func CheckCurrent(ctx context.Context, db *sqlx.DB) error {
	p, err := provider(db.DB)
	if err != nil {
		return err
	}
	pending, err := p.HasPending(ctx)
	if err != nil {
		return err
	}
	if pending {
		return ErrSchemaBehind
	}
	return nil
}

func withBinaryParameters(u string) string {
	if strings.Contains(u, "binary_parameters") {
		return u
	}
	if strings.Contains(u, "://") {
		if strings.Contains(u, "?") {
			return u + "&binary_parameters=yes"
		}
		return u + "?binary_parameters=yes"
	}
	return u + " binary_parameters=yes" // key=value form
}
