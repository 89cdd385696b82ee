package postgres

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/kassa-pay/kassa/core"
)

// cond is one SQL condition with exactly one `?` placeholder, and its argument.
type cond struct {
	sql string
	arg any
}

// pageQuery describes one cursor-paged list (D8) over a table with a bigserial seq column:
// newest first, always bounded to one scope.
type pageQuery struct {
	table, columns string
	scope          core.Scope
	q              core.ListQuery
	within         []cond // narrow the list and its cursors (e.g. the prices of one product)
	filter         []cond // narrow the listing only (status, type, active): any row may be a cursor
	// unknownCursor is the module's store sentinel for a cursor that is not a row of the list;
	// nil answers the documented 400 itself (q.UnknownCursor), for stores whose module does
	// not map a sentinel yet.
	unknownCursor error
}

// ListPredicate is the condition of every list query, and the predicate of the list indexes
// (migration 00023): true of every row (seq is a bigserial), but stated only by list queries.
// Without planner statistics (a table never analysed) a lookup by id estimates one row on any
// index that leads with (merchant_id, environment), and PostgreSQL then prefers the narrower
// list index and filters the merchant's rows one by one; an index whose predicate the lookup
// does not state is not a candidate at all, so the lookup takes the primary key in every
// statistics state.
const ListPredicate = "seq > 0"

// pageBySeq runs the page query and returns its rows newest first and whether more follow.
// A cursor id that is not a row of the list (another scope, another product, unknown) is
// p.unknownCursor, or 400 starting_after_invalid / ending_before_invalid when that is nil.
func pageBySeq[R any](ctx context.Context, db handle, p pageQuery) ([]R, bool, error) {
	args := []any{p.scope.MerchantID, string(p.scope.Env)}
	where := []string{"merchant_id = $1", "environment = $2"}
	add := func(c cond) {
		args = append(args, c.arg)
		where = append(where, strings.Replace(c.sql, "?", "$"+strconv.Itoa(len(args)), 1))
	}
	for _, c := range p.within {
		add(c)
	}
	cursor, op, order := p.q.StartingAfter, "<", "DESC"
	if p.q.EndingBefore != "" {
		cursor, op, order = p.q.EndingBefore, ">", "ASC"
	}
	if cursor != "" {
		var seq int64
		err := db.GetContext(ctx, &seq, `SELECT seq FROM `+p.table+` WHERE `+strings.Join(where, " AND ")+
			` AND id = $`+strconv.Itoa(len(args)+1), append(slices.Clone(args), cursor)...)
		if errors.Is(err, sql.ErrNoRows) {
			if p.unknownCursor != nil {
				return nil, false, p.unknownCursor
			}
			return nil, false, p.q.UnknownCursor()
		}
		if err != nil {
			return nil, false, err
		}
		add(cond{"seq " + op + " ?", seq})
	}
	for _, c := range p.filter {
		add(c)
	}
	args = append(args, p.q.Limit+1)
	// seq > 0 holds for every row; it names the list indexes, which are partial on it so that
	// a lookup by id can never walk one (ListPredicate).
	query := `SELECT ` + p.columns + ` FROM ` + p.table + ` WHERE ` + strings.Join(where, " AND ") +
		` AND ` + ListPredicate + ` ORDER BY seq ` + order + ` LIMIT $` + strconv.Itoa(len(args))
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

// when returns c in a slice when ok, for optional filters.
func when(ok bool, c cond) []cond {
	if !ok {
		return nil
	}
	return []cond{c}
}
