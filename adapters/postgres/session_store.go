package postgres

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/checkout"
	"github.com/kassa-pay/kassa/modules/payments"
)

// SessionStore keeps checkout sessions in checkout_sessions. Every query filters by
// merchant_id and environment; every change is written with its events in one transaction.
type SessionStore struct {
	db  handle
	hot *prepared
}

// NewSessionStore returns the checkout session store on db.
func NewSessionStore(db *sqlx.DB) *SessionStore {
	return &SessionStore{db: wrap(db), hot: newPrepared(db)}
}

var _ checkout.Store = (*SessionStore)(nil)

// sessionColumns are the columns of a checkout_sessions row: the session's own, then the
// buyer's side (buyerColumns).
var sessionColumns = append([]string{
	"id", "merchant_id", "environment", "checkout_mode", "status", "amount", "currency",
	"client_secret", "checkout_url", "embed_url", "customer_name", "customer_email",
	"reference", "description", "success_url", "cancel_url", "line_items", "metadata",
	"cancellation_reason", "created", "expires_at", "subscription_id",
}, buyerColumns...)

// sessionCols renders the column list, qualified with alias when it is not empty.
func sessionCols(alias string) string {
	if alias == "" {
		return strings.Join(sessionColumns, ", ")
	}
	q := make([]string, len(sessionColumns))
	for i, c := range sessionColumns {
		q[i] = alias + "." + c
	}
	return strings.Join(q, ", ")
}

type sessionRow struct {
	ID                 string    `db:"id"`
	MerchantID         string    `db:"merchant_id"`
	Environment        string    `db:"environment"`
	CheckoutMode       string    `db:"checkout_mode"`
	Status             string    `db:"status"`
	Amount             int64     `db:"amount"`
	Currency           string    `db:"currency"`
	ClientSecret       string    `db:"client_secret"`
	CheckoutURL        string    `db:"checkout_url"`
	EmbedURL           string    `db:"embed_url"`
	CustomerName       string    `db:"customer_name"`
	CustomerEmail      string    `db:"customer_email"`
	Reference          *string   `db:"reference"`
	Description        *string   `db:"description"`
	SuccessURL         *string   `db:"success_url"`
	CancelURL          *string   `db:"cancel_url"`
	LineItems          []byte    `db:"line_items"`
	Metadata           []byte    `db:"metadata"`
	CancellationReason *string   `db:"cancellation_reason"`
	SubscriptionID     *string   `db:"subscription_id"`
	Created            time.Time `db:"created"`
	ExpiresAt          time.Time `db:"expires_at"`
	buyerRow
}

// session rebuilds the row's session; p is its payment (nil for a session without one).
func (r *sessionRow) session(p *payments.Payment) (*checkout.Session, error) {
	snap := checkout.SessionSnapshot{
		ID:                 r.ID,
		Scope:              core.Scope{MerchantID: r.MerchantID, Env: core.Environment(r.Environment)},
		Mode:               checkout.Mode(r.CheckoutMode),
		Status:             checkout.Status(r.Status),
		Amount:             r.Amount,
		Currency:           core.Currency(r.Currency),
		ClientSecret:       r.ClientSecret,
		CheckoutURL:        r.CheckoutURL,
		EmbedURL:           r.EmbedURL,
		CustomerName:       r.CustomerName,
		CustomerEmail:      r.CustomerEmail,
		Reference:          r.Reference,
		Description:        r.Description,
		SuccessURL:         r.SuccessURL,
		CancelURL:          r.CancelURL,
		CancellationReason: r.CancellationReason,
		Subscription:       r.SubscriptionID,
		Created:            r.Created.UTC(),
		ExpiresAt:          r.ExpiresAt.UTC(),
		Payment:            p,
		Buyer:              r.buyerRow.state(),
	}
	if err := json.Unmarshal(r.LineItems, &snap.LineItems); err != nil {
		return nil, fmt.Errorf("checkout_sessions %s: line_items: %w", r.ID, err)
	}
	if err := json.Unmarshal(r.Metadata, &snap.Metadata); err != nil {
		return nil, fmt.Errorf("checkout_sessions %s: metadata: %w", r.ID, err)
	}
	return checkout.RehydrateSession(snap), nil
}

// Insert saves a new session.
func (st *SessionStore) Insert(ctx context.Context, s *checkout.Session) error {
	return insertSession(ctx, st.db, s)
}

// insertSession inserts a new session on q (the pool, or a unit of work's transaction).
func insertSession(ctx context.Context, q sqlx.ExecerContext, s *checkout.Session) error {
	snap := s.Snapshot()
	items := snap.LineItems
	if items == nil {
		items = []checkout.LineItem{}
	}
	lineItems, err := jsonText(items)
	if err != nil {
		return err
	}
	md := snap.Metadata
	if md == nil {
		md = map[string]string{}
	}
	metadata, err := jsonText(md)
	if err != nil {
		return err
	}
	hash := sha256.Sum256([]byte(snap.ClientSecret))
	_, err = q.ExecContext(ctx, `INSERT INTO checkout_sessions (
		id, merchant_id, environment, checkout_mode, status, amount, currency,
		client_secret, client_secret_hash, checkout_url, embed_url, customer_name, customer_email,
		reference, description, success_url, cancel_url, line_items, metadata,
		cancellation_reason, created, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22)`,
		snap.ID, snap.Scope.MerchantID, string(snap.Scope.Env), string(snap.Mode), string(snap.Status),
		snap.Amount, string(snap.Currency), snap.ClientSecret, hash[:], snap.CheckoutURL, snap.EmbedURL,
		snap.CustomerName, snap.CustomerEmail, snap.Reference, snap.Description, snap.SuccessURL,
		snap.CancelURL, lineItems, metadata, snap.CancellationReason, snap.Created, snap.ExpiresAt)
	if err != nil {
		return fmt.Errorf("checkout_sessions: insert: %w", err)
	}
	return nil
}

// Get reads one session of scope.
func (st *SessionStore) Get(ctx context.Context, scope core.Scope, id string) (*checkout.Session, error) {
	var r sessionRow
	err := st.hot.get(ctx, &r, sessionByIDSQL, scope.MerchantID, string(scope.Env), id)
	return sessionOf(ctx, st.db, &r, err, id)
}

var sessionByIDSQL = `SELECT ` + sessionCols("") + ` FROM checkout_sessions
	WHERE merchant_id = $1 AND environment = $2 AND id = $3`

func getSession(ctx context.Context, q sqlx.QueryerContext, scope core.Scope, id string, lock bool) (*checkout.Session, error) {
	query := sessionByIDSQL
	if lock {
		query += ` FOR UPDATE`
	}
	var r sessionRow
	err := sqlx.GetContext(ctx, q, &r, query, scope.MerchantID, string(scope.Env), id)
	return sessionOf(ctx, q, &r, err, id)
}

// sessionOf turns the result of a one-session query into the session. A complete session's
// payment is read with it: one more indexed query (payments_session), only for complete
// sessions.
func sessionOf(ctx context.Context, q sqlx.QueryerContext, r *sessionRow, err error, id string) (*checkout.Session, error) {
	if errors.Is(err, sql.ErrNoRows) {
		return nil, checkout.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("checkout_sessions: get: %w", err)
	}
	var p *payments.Payment
	if checkout.Status(r.Status) == checkout.StatusComplete {
		scope := core.Scope{MerchantID: r.MerchantID, Env: core.Environment(r.Environment)}
		if p, err = paymentBySession(ctx, q, scope, r.ID); err != nil {
			return nil, err
		}
	}
	return r.session(p)
}

// List returns one page of scope's sessions, newest first, paged like every list (page.go):
// a cursor that names no session of the scope is checkout.ErrUnknownCursor.
func (st *SessionStore) List(ctx context.Context, scope core.Scope, q core.ListQuery, status checkout.Status, now time.Time) (core.Page[*checkout.Session], error) {
	var page core.Page[*checkout.Session]
	rows, hasMore, err := pageBySeq[sessionRow](ctx, st.db, pageQuery{
		table: "checkout_sessions", columns: sessionCols(""), scope: scope, q: q,
		filter:        sessionStatusAt(status, now),
		unknownCursor: checkout.ErrUnknownCursor,
	})
	if errors.Is(err, checkout.ErrUnknownCursor) {
		return page, err
	}
	if err != nil {
		return page, fmt.Errorf("checkout_sessions: list: %w", err)
	}
	page.HasMore = hasMore
	page.Items = make([]*checkout.Session, 0, len(rows))
	var complete []string
	for i := range rows {
		if checkout.Status(rows[i].Status) == checkout.StatusComplete {
			complete = append(complete, rows[i].ID)
		}
	}
	paid, err := paymentsBySessions(ctx, st.db, scope, complete)
	if err != nil {
		return page, err
	}
	for i := range rows {
		s, err := rows[i].session(paid[rows[i].ID])
		if err != nil {
			return page, err
		}
		page.Items = append(page.Items, s)
	}
	return page, nil
}

// sessionStatusAt filters on the status sessions have at now, the projection of
// checkout.Session.IsDue: a session stored open whose expires_at ≤ now is expired.
func sessionStatusAt(status checkout.Status, now time.Time) []cond {
	switch status {
	case "":
		return nil
	case checkout.StatusOpen:
		return []cond{{"status = 'open' AND expires_at > ?", now}}
	case checkout.StatusExpired:
		return []cond{{"(status = 'expired' OR (status = 'open' AND expires_at <= ?))", now}}
	case checkout.StatusComplete, checkout.StatusCanceled: // final: stored as they are, the equality below
	}
	return []cond{{"status = ?", string(status)}}
}

// claimDueSessions locks up to limit due open sessions (FOR UPDATE SKIP LOCKED) on q, the
// unit of work's transaction, and returns them (checkout.SessionRepository.ClaimDue).
func claimDueSessions(ctx context.Context, q sqlx.QueryerContext, scope *core.Scope, until time.Time, limit int) ([]*checkout.Session, error) {
	inScope, args := sweepScope("s", scope, []any{until})
	// A session with a charge in flight is not due (checkout.Session.IsDue).
	where := `s.status = 'open' AND s.expires_at <= $1 AND s.charging_attempt IS NULL AND ` + inScope
	args = append(args, limit)
	query := fmt.Sprintf(`SELECT %s FROM checkout_sessions s WHERE %s
		ORDER BY s.expires_at, s.id LIMIT $%d FOR UPDATE OF s SKIP LOCKED`, sessionCols("s"), where, len(args))
	var rows []sessionRow
	if scope != nil {
		// A scope's claim takes its rows in order from checkout_sessions_scope_due, whatever
		// the statistics say: merchant_id has none (migration 00018), so with them the
		// planner believes a merchant holds 0.5% of the table and would read all its due
		// sessions and sort them for every batch. Sorting is off for this one statement.
		if err := sortOff(ctx, q, func() error { return sqlx.SelectContext(ctx, q, &rows, query, args...) }); err != nil {
			return nil, fmt.Errorf("checkout_sessions: claim due: %w", err)
		}
	} else if err := sqlx.SelectContext(ctx, q, &rows, query, args...); err != nil {
		return nil, fmt.Errorf("checkout_sessions: claim due: %w", err)
	}
	out := make([]*checkout.Session, 0, len(rows))
	for i := range rows {
		s, err := rows[i].session(nil) // open sessions have no payment
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// sessionUpdate writes what the session reports changed since it was read (Session.Changes):
// the status with the cancellation reason, the buyer's bookkeeping, or both in one UPDATE
// (a confirmation changes both: one new row version). It decides nothing: which transitions
// change what is the module's knowledge. Nothing changed writes nothing (false). The
// repository's Save fails when the session's row is not there.
func sessionUpdate(s *checkout.Session) (write, bool) {
	changed := s.Changes()
	if changed == 0 {
		return write{}, false
	}
	snap := s.Snapshot()
	args := []any{snap.Scope.MerchantID, string(snap.Scope.Env), snap.ID}
	var set []string
	if changed.Has(checkout.ChangedStatus) {
		set = append(set, "status = $4, cancellation_reason = $5")
		args = append(args, string(snap.Status), snap.CancellationReason)
	}
	if changed.Has(checkout.ChangedSubscription) {
		set = append(set, fmt.Sprintf("subscription_id = $%d", len(args)+1))
		args = append(args, snap.Subscription)
	}
	if changed.Has(checkout.ChangedBuyer) {
		set = append(set, buyerStateSet(len(args)+1))
		args = append(args, buyerStateArgs(snap)...)
	}
	return write{
		what: "checkout_sessions: update " + snap.ID,
		sql: `UPDATE checkout_sessions SET ` + strings.Join(set, ", ") + `
		WHERE merchant_id = $1 AND environment = $2 AND id = $3`,
		args: args,
		one:  true,
	}, true
}

// NextDue returns the earliest expires_at ≤ until of the scope's sessions that claimDueSessions
// would claim (checkout.Store.NextDue), through checkout_sessions_scope_due.
func (st *SessionStore) NextDue(ctx context.Context, scope core.Scope, until time.Time) (time.Time, bool, error) {
	var at sql.NullTime
	if err := st.db.GetContext(ctx, &at, SessionNextDueSQL, scope.MerchantID, string(scope.Env), until); err != nil {
		return time.Time{}, false, fmt.Errorf("checkout_sessions: next due: %w", err)
	}
	return at.Time.UTC(), at.Valid, nil
}

// SessionNextDueSQL is NextDue's statement (exported for the planner test).
const SessionNextDueSQL = `SELECT min(expires_at) FROM checkout_sessions
	WHERE merchant_id = $1 AND environment = $2 AND status = 'open' AND expires_at <= $3 AND charging_attempt IS NULL`

// sortOff runs fn with the planner's sorts off (enable_sort, transaction-local, set back after
// fn): for a statement whose order must come from an index in every statistics state.
func sortOff(ctx context.Context, q sqlx.QueryerContext, fn func() error) error {
	var v string
	if err := sqlx.GetContext(ctx, q, &v, `SELECT set_config('enable_sort', 'off', true)`); err != nil {
		return err
	}
	if err := fn(); err != nil {
		return err
	}
	return sqlx.GetContext(ctx, q, &v, `SELECT set_config('enable_sort', 'on', true)`)
}
