package postgres

import (
	"context"
	"sync"

	"github.com/jmoiron/sqlx"
)

// prepared keeps the statements of the hottest reads prepared, so Postgres parses and plans
// them once per connection instead of once per request (database/sql prepares a statement on
// each pooled connection the first time it runs there).
type prepared struct {
	db *sqlx.DB
	mu sync.Mutex
	m  map[string]*sqlx.Stmt
}

func newPrepared(db *sqlx.DB) *prepared { return &prepared{db: db, m: map[string]*sqlx.Stmt{}} }

// get returns GetContext run through the prepared form of query, on the pool (a store's read;
// never on a unit of work's transaction).
func (p *prepared) get(ctx context.Context, dest any, query string, args ...any) error {
	p.mu.Lock()
	st, ok := p.m[query]
	p.mu.Unlock()
	if !ok {
		var err error
		if st, err = p.db.PreparexContext(ctx, query); err != nil {
			return err
		}
		p.mu.Lock()
		if prev, raced := p.m[query]; raced {
			_ = st.Close() //nolint:sqlclosecheck // the loser of the race is closed at once; the statement in the map stays prepared for the pool's life
			st = prev
		} else {
			p.m[query] = st
		}
		p.mu.Unlock()
	}
	return st.GetContext(ctx, dest, args...)
}
