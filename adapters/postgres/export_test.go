package postgres

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"time"

	"github.com/jmoiron/sqlx"
)

// AmbientExec returns a function running a statement on the unit of work of ctx, for tests of
// the unit of work itself.
func AmbientExec(ctx context.Context) func(query string, args ...any) (sql.Result, error) {
	a := ambientOf(ctx)
	return func(query string, args ...any) (sql.Result, error) {
		if a == nil {
			return nil, errors.New("no unit of work in ctx")
		}
		return bound(a).ExecContext(ctx, query, args...)
	}
}

// AmbientGet runs a one-row query on the unit of work of ctx.
func AmbientGet(ctx context.Context, dest any, query string, args ...any) error {
	a := ambientOf(ctx)
	if a == nil {
		return errors.New("no unit of work in ctx")
	}
	return bound(a).GetContext(ctx, dest, query, args...)
}

// MigrateUpFS is MigrateUp over the migrations in fsys instead of the embedded ones.
func MigrateUpFS(ctx context.Context, db *sqlx.DB, fsys fs.FS) ([]string, error) {
	p, err := providerOf(db.DB, fsys)
	if err != nil {
		return nil, err
	}
	return migrateUp(ctx, p)
}

// CatalogPricesOfSQL is the query the catalog store loads a product's prices with.
const CatalogPricesOfSQL = catalogPricesOfSQL

// OpenWithTimeouts is Open with the pool's session timeouts given (short ones, for tests).
func OpenWithTimeouts(ctx context.Context, url string, statement, idle time.Duration) (*sqlx.DB, error) {
	return open(ctx, url, statement, idle)
}

// SetsTimeouts reports whether u's transactions set their timeouts with a statement of their
// own (false: the pool's connections start with them).
func SetsTimeouts(u *UnitOfWork) bool { return u.setsTimeouts() }

// AppSubscribersSQL is the fan-out's read of the app endpoints of a set of merchants.
const AppSubscribersSQL = appSubscribersSQL
