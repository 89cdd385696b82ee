package postgres

import (
	"context"
	"io/fs"

	"github.com/jmoiron/sqlx"
)

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
