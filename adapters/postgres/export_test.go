package postgres

import (
	"context"
	"database/sql"
	"errors"
)

// AmbientExec returns a function running a statement on the unit of work of ctx, for tests of
// the unit of work itself.
func AmbientExec(ctx context.Context) func(query string, args ...any) (sql.Result, error) {
	a := ambientOf(ctx)
	return func(query string, args ...any) (sql.Result, error) {
		if a == nil {
			return nil, errors.New("no unit of work in ctx")
		}
		return handle{}.ExecContext(ctx, query, args...)
	}
}

// AmbientGet runs a one-row query on the unit of work of ctx.
func AmbientGet(ctx context.Context, dest any, query string, args ...any) error {
	if ambientOf(ctx) == nil {
		return errors.New("no unit of work in ctx")
	}
	return handle{}.GetContext(ctx, dest, query, args...)
}
