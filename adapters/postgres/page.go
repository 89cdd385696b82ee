package postgres

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strconv"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/core"
)

// pageQuery describes one cursor-paged list (D8) over a table with a bigserial seq column:
// newest first, bounded to one scope, with an optional extra filter whose placeholders start
// at $3 (args are appended after the scope's two).
type pageQuery struct {
	table, columns string
	scope          core.Scope
	q              core.ListQuery
	filter         string // e.g. "($3 = '' OR type = $3)"; applies to the listing, not to the cursor
	args           []any
}

// pageBySeq runs the page query and returns its rows newest first and whether more follow.
// A cursor id that is not in the scope is 400 starting_after_invalid / ending_before_invalid.
func pageBySeq[R any](ctx context.Context, db *sqlx.DB, p pageQuery) ([]R, bool, error) {
	args := append([]any{p.scope.MerchantID, string(p.scope.Env)}, p.args...)
	where := "merchant_id = $1 AND environment = $2"
	if p.filter != "" {
		where += " AND " + p.filter
	}
	cursor, param, op, order := p.q.StartingAfter, "starting_after", "<", "DESC"
	if p.q.EndingBefore != "" {
		cursor, param, op, order = p.q.EndingBefore, "ending_before", ">", "ASC"
	}
	if cursor != "" {
		var seq int64
		err := db.GetContext(ctx, &seq, `SELECT seq FROM `+p.table+` WHERE merchant_id = $1 AND environment = $2 AND id = $3`,
			p.scope.MerchantID, string(p.scope.Env), cursor)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, false, core.InvalidField(param, "No such object in this list: '%s'.", cursor)
		}
		if err != nil {
			return nil, false, err
		}
		args = append(args, seq)
		where += " AND seq " + op + " $" + strconv.Itoa(len(args))
	}
	args = append(args, p.q.Limit+1)
	query := `SELECT ` + p.columns + ` FROM ` + p.table + ` WHERE ` + where +
		` ORDER BY seq ` + order + ` LIMIT $` + strconv.Itoa(len(args))
	var rows []R
	if err := db.SelectContext(ctx, &rows, query, args...); err != nil {
		return nil, false, err
	}
	hasMore := len(rows) > p.q.Limit
	if hasMore {
		rows = rows[:p.q.Limit]
	}
	if order == "ASC" {
		slices.Reverse(rows)
	}
	return rows, hasMore, nil
}
