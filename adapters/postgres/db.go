// Package postgres implements Kassa's stores on PostgreSQL with sqlx over lib/pq, and owns the
// goose migrations embedded in the binary.
package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
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
//
// Every connection of the pool starts with the unit of work's server-side timeouts
// (UnitOfWorkStatementTimeout, UnitOfWorkIdleTimeout) as run-time parameters of its startup
// packet, so a unit of work needs no statement to set them (see sessionTimeouts). Unless the
// URL (or PGOPTIONS) sets either itself: then the connections keep what it says, and each unit
// of work sets its own at its start, as a transaction-local setting.
func Open(ctx context.Context, url string) (*sqlx.DB, error) {
	return open(ctx, url, UnitOfWorkStatementTimeout, UnitOfWorkIdleTimeout)
}

// open is Open with the pool's timeouts given (tests use short ones).
func open(ctx context.Context, url string, statement, idle time.Duration) (*sqlx.DB, error) {
	cfg, err := pq.NewConfig(withBinaryParameters(url))
	if err != nil {
		return nil, err
	}
	var t sessionTimeouts
	if !setsTimeouts(cfg) {
		// lib/pq sends every entry of Runtime in the startup packet: no round trip.
		t = sessionTimeouts{known: true, statement: statement, idle: idle}
		cfg.Runtime = maps.Clone(cfg.Runtime)
		if cfg.Runtime == nil {
			cfg.Runtime = map[string]string{}
		}
		cfg.Runtime["statement_timeout"] = msSetting(statement)
		cfg.Runtime["idle_in_transaction_session_timeout"] = msSetting(idle)
	}
	c, err := pq.NewConnectorConfig(cfg)
	if err != nil {
		return nil, err
	}
	db := sqlx.NewDb(sql.OpenDB(poolConnector{Connector: c, timeouts: t}), "postgres")
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

// sessionTimeouts are the statement and idle-in-transaction timeouts every connection of a
// pool starts with, when known (a pool that Open made with its defaults).
//
// A session setting given in the startup packet is the connection's default for its whole
// life (RESET and DISCARD ALL return to it), so nothing may change these with a session-level
// SET on a pooled connection; a transaction-local set_config (UnitOfWork.WithTimeouts) is
// fine. The one exception is the migrations' connection, which turns them off while goose
// holds it and resets them before giving it back (noTimeoutsLocker).
//
// They bound every statement on the pool, not only those of a unit of work: a read of the
// stores, the sweeps' and the workers' statements and transactions too. What runs long on
// purpose runs elsewhere: the migrations (noTimeoutsLocker), the webhook LISTEN connection
// (ListenWebhooks connects with the URL itself, not through the pool), and ANALYZE or
// anything else an operator runs with psql.
type sessionTimeouts struct {
	known           bool
	statement, idle time.Duration
}

// poolConnector is lib/pq's connector, remembering the timeouts its connections start with;
// its driver (sql.DB.Driver) carries them, which is how NewUnitOfWork learns them.
type poolConnector struct {
	*pq.Connector
	timeouts sessionTimeouts
}

func (c poolConnector) Driver() driver.Driver { return poolDriver{timeouts: c.timeouts} }

// poolDriver is lib/pq's driver with the timeouts of the pool it came from.
type poolDriver struct {
	pq.Driver
	timeouts sessionTimeouts
}

// timeoutsOf returns the timeouts every connection of db starts with; not known for a pool
// that Open did not make (or whose URL set them itself).
func timeoutsOf(db *sqlx.DB) sessionTimeouts {
	if d, ok := db.Driver().(poolDriver); ok {
		return d.timeouts
	}
	return sessionTimeouts{}
}

// setsTimeouts reports whether the connection settings name either timeout themselves (as a
// run-time parameter, or in options, which PGOPTIONS may fill).
func setsTimeouts(cfg pq.Config) bool {
	for _, k := range []string{"statement_timeout", "idle_in_transaction_session_timeout"} {
		if _, ok := cfg.Runtime[k]; ok || strings.Contains(cfg.Options, k) {
			return true
		}
	}
	return false
}

// noTimeoutsLocker is goose's Postgres session locker on a connection without the pool's
// timeouts: goose runs every migration on the connection it locked, and a migration may
// legitimately take longer than a request (an index built on a large table). When goose is
// done it restores the connection's defaults before the connection goes back to the pool;
// should that fail, the connection is discarded instead.
type noTimeoutsLocker struct{ lock.SessionLocker }

func (l noTimeoutsLocker) SessionLock(ctx context.Context, conn *sql.Conn) error {
	if _, err := conn.ExecContext(ctx, `SET statement_timeout = 0; SET idle_in_transaction_session_timeout = 0`); err != nil {
		return err
	}
	return l.SessionLocker.SessionLock(ctx, conn)
}

func (l noTimeoutsLocker) SessionUnlock(ctx context.Context, conn *sql.Conn) error {
	err := l.SessionLocker.SessionUnlock(ctx, conn)
	if _, rerr := conn.ExecContext(ctx, `RESET statement_timeout; RESET idle_in_transaction_session_timeout`); rerr != nil {
		// Never hand the pool a connection without its timeouts: close it.
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		return errors.Join(err, rerr)
	}
	return err
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
	return goose.NewProvider(goose.DialectPostgres, db, fsys, goose.WithSessionLocker(noTimeoutsLocker{locker}))
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
