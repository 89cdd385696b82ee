package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/billing"
	"github.com/kassa-pay/kassa/ports"
)

const subscriptionColumns = `id, merchant_id, environment, status, customer_id, price_id, quantity, currency, unit_amount,
	interval, interval_count, anchor, period_start, period_end, trial_start, trial_end, latest_invoice, client_secret,
	default_payment_method, cancel_at_period_end, canceled_at, ended_at, metadata, created, updated, payment_intent,
	trial_notified, open_invoice, renewed_at, next_charge, failures, unpaid_at, pause_collection, pending_update, pending_lines`

type subscriptionRow struct {
	ID                string     `db:"id"`
	MerchantID        string     `db:"merchant_id"`
	Environment       string     `db:"environment"`
	Status            string     `db:"status"`
	Customer          string     `db:"customer_id"`
	PriceID           string     `db:"price_id"`
	Quantity          int64      `db:"quantity"`
	Currency          string     `db:"currency"`
	UnitAmount        int64      `db:"unit_amount"`
	Interval          string     `db:"interval"`
	IntervalCount     int        `db:"interval_count"`
	Anchor            time.Time  `db:"anchor"`
	PeriodStart       time.Time  `db:"period_start"`
	PeriodEnd         time.Time  `db:"period_end"`
	TrialStart        *time.Time `db:"trial_start"`
	TrialEnd          *time.Time `db:"trial_end"`
	LatestInvoice     *string    `db:"latest_invoice"`
	ClientSecret      *string    `db:"client_secret"`
	DefaultMethod     []byte     `db:"default_payment_method"`
	CancelAtPeriodEnd bool       `db:"cancel_at_period_end"`
	CanceledAt        *time.Time `db:"canceled_at"`
	EndedAt           *time.Time `db:"ended_at"`
	Metadata          []byte     `db:"metadata"`
	Created           time.Time  `db:"created"`
	Updated           time.Time  `db:"updated"`
	PaymentIntent     *string    `db:"payment_intent"`
	TrialNotified     bool       `db:"trial_notified"`
	OpenInvoice       string     `db:"open_invoice"`
	RenewedAt         *time.Time `db:"renewed_at"`
	NextCharge        *time.Time `db:"next_charge"`
	Failures          int        `db:"failures"`
	UnpaidAt          *time.Time `db:"unpaid_at"`
	PauseCollection   []byte     `db:"pause_collection"`
	PendingUpdate     []byte     `db:"pending_update"`
	PendingLines      []byte     `db:"pending_lines"`
}

// defaultMethodJSON is a subscription's default method as stored.
type defaultMethodJSON struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Brand    string `json:"brand"`
	Last4    string `json:"last4"`
	ExpMonth int    `json:"exp_month"`
	ExpYear  int    `json:"exp_year"`
}

// pendingUpdateJSON is a subscription's scheduled plan change as stored.
type pendingUpdateJSON struct {
	PriceID       string `json:"price_id"`
	UnitAmount    int64  `json:"unit_amount"`
	Quantity      int64  `json:"quantity"`
	Interval      string `json:"interval"`
	IntervalCount int    `json:"interval_count"`
}

// pendingLineJSON is a proration line kept for the next renewal invoice, as stored.
type pendingLineJSON struct {
	Description string `json:"description"`
	PriceID     string `json:"price_id"`
	Quantity    int64  `json:"quantity"`
	UnitAmount  int64  `json:"unit_amount"`
}

// pauseJSON is a subscription's pause as stored.
type pauseJSON struct {
	ResumesAt *time.Time `json:"resumes_at"`
}

func (r *subscriptionRow) subscription() (*billing.Subscription, error) {
	s := billing.SubscriptionSnapshot{ID: r.ID, Scope: core.Scope{MerchantID: r.MerchantID, Env: core.Environment(r.Environment)},
		Status: billing.Status(r.Status), Customer: r.Customer, PriceID: r.PriceID, Quantity: r.Quantity,
		Currency: core.Currency(r.Currency), UnitAmount: r.UnitAmount, Interval: r.Interval, IntervalCount: r.IntervalCount,
		Anchor: r.Anchor.UTC(), PeriodStart: r.PeriodStart.UTC(), PeriodEnd: r.PeriodEnd.UTC(), TrialStart: utcp(r.TrialStart),
		TrialEnd: utcp(r.TrialEnd), LatestInvoice: r.LatestInvoice, ClientSecret: r.ClientSecret,
		CancelAtPeriodEnd: r.CancelAtPeriodEnd, CanceledAt: utcp(r.CanceledAt), EndedAt: utcp(r.EndedAt),
		Created: r.Created.UTC(), Updated: r.Updated.UTC(), TrialNotified: r.TrialNotified,
		Collection: billing.Collection{Invoice: r.OpenInvoice, RenewedAt: utcp(r.RenewedAt), NextCharge: utcp(r.NextCharge),
			Failures: r.Failures, UnpaidAt: utcp(r.UnpaidAt)}}
	if r.PaymentIntent != nil {
		s.PaymentIntent = *r.PaymentIntent
	}
	if len(r.DefaultMethod) > 0 {
		var d defaultMethodJSON
		if err := json.Unmarshal(r.DefaultMethod, &d); err != nil {
			return nil, fmt.Errorf("subscriptions: %s: default method: %w", r.ID, err)
		}
		s.DefaultMethod = &billing.DefaultMethod{ID: d.ID, Summary: billing.Summary{Type: ports.PaymentMethodKind(d.Type),
			Brand: d.Brand, Last4: d.Last4, ExpMonth: d.ExpMonth, ExpYear: d.ExpYear}}
	}
	if err := json.Unmarshal(r.Metadata, &s.Metadata); err != nil {
		return nil, fmt.Errorf("subscriptions: %s: metadata: %w", r.ID, err)
	}
	if len(r.PauseCollection) > 0 {
		var p pauseJSON
		if err := json.Unmarshal(r.PauseCollection, &p); err != nil {
			return nil, fmt.Errorf("subscriptions: %s: pause_collection: %w", r.ID, err)
		}
		s.Pause = &billing.PauseCollection{ResumesAt: utcp(p.ResumesAt)}
	}
	if len(r.PendingUpdate) > 0 {
		var u pendingUpdateJSON
		if err := json.Unmarshal(r.PendingUpdate, &u); err != nil {
			return nil, fmt.Errorf("subscriptions: %s: pending_update: %w", r.ID, err)
		}
		s.PendingUpdate = &billing.PendingUpdate{PriceID: u.PriceID, UnitAmount: u.UnitAmount, Quantity: u.Quantity,
			Interval: u.Interval, IntervalCount: u.IntervalCount}
	}
	if len(r.PendingLines) > 0 {
		var lines []pendingLineJSON
		if err := json.Unmarshal(r.PendingLines, &lines); err != nil {
			return nil, fmt.Errorf("subscriptions: %s: pending_lines: %w", r.ID, err)
		}
		for _, l := range lines {
			s.PendingLines = append(s.PendingLines, billing.InvoiceLine{Description: l.Description, PriceID: l.PriceID,
				Quantity: l.Quantity, UnitAmount: l.UnitAmount})
		}
	}
	return billing.RehydrateSubscription(s), nil
}

// subscriptionStateList is a subscription's stored state: the columns Save and SaveMany write,
// in subscriptionArgs' order (Insert writes the key before them).
const subscriptionStateList = `status, customer_id, price_id, quantity, currency, unit_amount, interval, interval_count,
	anchor, period_start, period_end, trial_start, trial_end, latest_invoice, client_secret, default_payment_method,
	cancel_at_period_end, canceled_at, ended_at, metadata, created, updated, due_at, payment_intent, trial_notified,
	open_invoice, renewed_at, next_charge, failures, unpaid_at, pause_collection, pending_update, pending_lines`

// subscriptionArgs are the stored columns of sub after id, merchant_id, environment ($4 on):
// subscriptionStateList.
func subscriptionArgs(sub *billing.Subscription) ([]any, error) {
	s := sub.Snapshot()
	md, err := json.Marshal(s.Metadata)
	if err != nil {
		return nil, err
	}
	var dm *string // JSON text
	if d := s.DefaultMethod; d != nil {
		b, err := json.Marshal(defaultMethodJSON{ID: d.ID, Type: string(d.Type), Brand: d.Brand, Last4: d.Last4,
			ExpMonth: d.ExpMonth, ExpYear: d.ExpYear})
		if err != nil {
			return nil, err
		}
		v := string(b)
		dm = &v
	}
	var due *time.Time
	if at, ok := sub.DueAt(); ok {
		due = &at
	}
	var pi *string
	if s.PaymentIntent != "" {
		pi = &s.PaymentIntent
	}
	var pause *string // JSON text
	if s.Pause != nil {
		b, err := json.Marshal(pauseJSON{ResumesAt: s.Pause.ResumesAt})
		if err != nil {
			return nil, err
		}
		v := string(b)
		pause = &v
	}
	var pending *string // JSON text
	if u := s.PendingUpdate; u != nil {
		b, err := json.Marshal(pendingUpdateJSON{PriceID: u.PriceID, UnitAmount: u.UnitAmount, Quantity: u.Quantity,
			Interval: u.Interval, IntervalCount: u.IntervalCount})
		if err != nil {
			return nil, err
		}
		v := string(b)
		pending = &v
	}
	lines := make([]pendingLineJSON, 0, len(s.PendingLines))
	for _, l := range s.PendingLines {
		lines = append(lines, pendingLineJSON{Description: l.Description, PriceID: l.PriceID, Quantity: l.Quantity, UnitAmount: l.UnitAmount})
	}
	linesJSON, err := json.Marshal(lines)
	if err != nil {
		return nil, err
	}
	return []any{string(s.Status), s.Customer, s.PriceID, s.Quantity, string(s.Currency), s.UnitAmount, s.Interval,
		s.IntervalCount, s.Anchor, s.PeriodStart, s.PeriodEnd, s.TrialStart, s.TrialEnd, s.LatestInvoice, s.ClientSecret, dm,
		s.CancelAtPeriodEnd, s.CanceledAt, s.EndedAt, string(md), s.Created, s.Updated, due, pi, s.TrialNotified,
		s.Collection.Invoice, s.Collection.RenewedAt, s.Collection.NextCharge, s.Collection.Failures, s.Collection.UnpaidAt, pause,
		pending, string(linesJSON)}, nil
}

func getSubscription(ctx context.Context, q sqlx.QueryerContext, scope core.Scope, id string, lock bool) (*billing.Subscription, error) {
	query := `SELECT ` + subscriptionColumns + ` FROM subscriptions WHERE merchant_id = $1 AND environment = $2 AND id = $3`
	if lock {
		query += ` FOR UPDATE`
	}
	var r subscriptionRow
	err := sqlx.GetContext(ctx, q, &r, query, scope.MerchantID, string(scope.Env), id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, billing.ErrSubscriptionMissing
	}
	if err != nil {
		return nil, fmt.Errorf("subscriptions: get: %w", err)
	}
	return r.subscription()
}

// Subscription reads one subscription of scope.
func (st *BillingStore) Subscription(ctx context.Context, scope core.Scope, id string) (*billing.Subscription, error) {
	return getSubscription(ctx, st.db, scope, id, false)
}

// Subscriptions pages scope's subscriptions newest first (page.go), filtered.
func (st *BillingStore) Subscriptions(ctx context.Context, scope core.Scope, q core.ListQuery, f billing.SubscriptionFilter) (core.Page[*billing.Subscription], error) {
	pq := pageQuery{table: "subscriptions", columns: subscriptionColumns, scope: scope, q: q, unknownCursor: billing.ErrUnknownCursor}
	if f.Status != nil {
		pq.filter = append(pq.filter, cond{"status = ?", string(*f.Status)})
	}
	if f.Customer != nil {
		pq.filter = append(pq.filter, cond{"customer_id = ?", *f.Customer})
	}
	if f.Price != nil {
		pq.filter = append(pq.filter, cond{"price_id = ?", *f.Price})
	}
	rows, hasMore, err := pageBySeq[subscriptionRow](ctx, st.db, pq)
	if err != nil {
		return core.Page[*billing.Subscription]{}, err
	}
	out := core.Page[*billing.Subscription]{HasMore: hasMore, Items: make([]*billing.Subscription, 0, len(rows))}
	for i := range rows {
		s, err := rows[i].subscription()
		if err != nil {
			return core.Page[*billing.Subscription]{}, err
		}
		out.Items = append(out.Items, s)
	}
	return out, nil
}

// SubscriptionByPaymentIntent reads the subscription of first payment piID, of any scope.
func (st *BillingStore) SubscriptionByPaymentIntent(ctx context.Context, piID string) (*billing.Subscription, error) {
	var r subscriptionRow
	err := st.db.GetContext(ctx, &r, `SELECT `+subscriptionColumns+` FROM subscriptions WHERE payment_intent = $1`, piID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, billing.ErrSubscriptionMissing
	}
	if err != nil {
		return nil, fmt.Errorf("subscriptions: by payment intent: %w", err)
	}
	return r.subscription()
}

// SubscriptionNextDueSQL is NextDue's statement (exported for the planner test).
const SubscriptionNextDueSQL = `SELECT min(due_at) FROM subscriptions
	WHERE merchant_id = $1 AND environment = $2 AND due_at IS NOT NULL AND due_at <= $3`

// NextDue is the earliest due_at of scope at or before until.
func (st *BillingStore) NextDue(ctx context.Context, scope core.Scope, until time.Time) (time.Time, bool, error) {
	var at sql.NullTime
	if err := st.db.GetContext(ctx, &at, SubscriptionNextDueSQL, scope.MerchantID, string(scope.Env), until); err != nil {
		return time.Time{}, false, fmt.Errorf("subscriptions: next due: %w", err)
	}
	return at.Time.UTC(), at.Valid, nil
}

// subscriptionRepo is billing.SubscriptionRepository on a transaction.
type subscriptionRepo Tx

// Subscriptions is billing's subscription repository on this transaction.
func (t *Tx) Subscriptions() billing.SubscriptionRepository { return subscriptionRepo(*t) }

// Insert writes a new subscription.
func (r subscriptionRepo) Insert(ctx context.Context, sub *billing.Subscription) error {
	args, err := subscriptionArgs(sub)
	if err != nil {
		return err
	}
	return r.q.exec(ctx, write{what: "subscriptions: insert " + sub.ID(), one: true,
		sql: `INSERT INTO subscriptions (id, merchant_id, environment, ` + subscriptionStateList + `)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15,
			$16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31, $32, $33, $34, $35, $36)`,
		args: append([]any{sub.ID(), sub.Scope().MerchantID, string(sub.Scope().Env)}, args...)})
}

// MarkRecurring inserts the scope's MRR snapshot mark unless it has one.
func (r subscriptionRepo) MarkRecurring(ctx context.Context, scope core.Scope, next time.Time) error {
	return r.q.exec(ctx, write{what: "mrr_snapshot_marks: insert",
		sql: `INSERT INTO mrr_snapshot_marks (merchant_id, environment, next_at) VALUES ($1, $2, $3)
			ON CONFLICT (merchant_id, environment) DO NOTHING`,
		args: []any{scope.MerchantID, string(scope.Env), next}})
}

// Lock reads the subscription FOR UPDATE.
func (r subscriptionRepo) Lock(ctx context.Context, scope core.Scope, id string) (*billing.Subscription, error) {
	s, err := getSubscription(ctx, r.q, scope, id, true)
	return s, r.q.a.note(err)
}

// Save writes the subscription's state and due time in one UPDATE of its row.
func (r subscriptionRepo) Save(ctx context.Context, sub *billing.Subscription) error {
	args, err := subscriptionArgs(sub)
	if err != nil {
		return err
	}
	return r.q.exec(ctx, write{what: "subscriptions: update " + sub.ID(), one: true,
		sql: `UPDATE subscriptions SET (` + subscriptionStateList + `) = ($4, $5, $6, $7, $8, $9, $10, $11, $12, $13,
			$14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31, $32, $33, $34,
			$35, $36) WHERE id = $1 AND merchant_id = $2 AND environment = $3`,
		args: append([]any{sub.ID(), sub.Scope().MerchantID, string(sub.Scope().Env)}, args...)})
}

// ClaimDue locks up to limit subscriptions due by until, earliest first, SKIP LOCKED.
func (r subscriptionRepo) ClaimDue(ctx context.Context, scope *core.Scope, until time.Time, limit int) ([]*billing.Subscription, error) {
	inScope, args := sweepScope("s", scope, []any{until})
	args = append(args, limit)
	query := fmt.Sprintf(`SELECT %s FROM subscriptions s WHERE s.due_at IS NOT NULL AND s.due_at <= $1 AND %s
		ORDER BY s.due_at, s.id LIMIT $%d FOR UPDATE OF s SKIP LOCKED`, prefixed("s", subscriptionColumns), inScope, len(args))
	var rows []subscriptionRow
	run := func() error { return sqlx.SelectContext(ctx, r.q, &rows, query, args...) }
	var err error
	if scope != nil {
		err = sortOff(ctx, r.q, run) // the scope's order comes from subscriptions_scope_due
	} else {
		err = run()
	}
	if err != nil {
		return nil, fmt.Errorf("subscriptions: claim due: %w", r.q.a.note(err))
	}
	out := make([]*billing.Subscription, 0, len(rows))
	for i := range rows {
		s, err := rows[i].subscription()
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// prefixed qualifies each column of the comma-separated list cols with alias.
func prefixed(alias, cols string) string {
	parts := strings.Split(cols, ",")
	for i, c := range parts {
		parts[i] = alias + "." + strings.TrimSpace(c)
	}
	return strings.Join(parts, ", ")
}
