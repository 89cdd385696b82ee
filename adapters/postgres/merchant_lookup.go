package postgres

import (
	"context"
	"database/sql"
	"errors"

	"github.com/jmoiron/sqlx"
)

// MerchantIDByEmail returns the id of the oldest merchant registered with email, or "" when
// there is none. It serves the demo bootstrap of `kassa serve --demo`.
func MerchantIDByEmail(ctx context.Context, db *sqlx.DB, email string) (string, error) {
	var id string
	err := db.GetContext(ctx, &id, `SELECT id FROM merchants WHERE email = $1 ORDER BY created LIMIT 1`, email)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return id, err
}
