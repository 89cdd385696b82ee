package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/ledger"
)

// The balance ledger (migration 00031): balance_transactions, ledger_postings (append-only),
// ledger_balances (the running sum per account), ledger_releases (the pending transactions).

// balanceTxnColumns reads a transaction with its status (pending while it waits in the release
// queue) and the payout that settles it.
const balanceTxnColumns = `id, merchant_id, environment, currency, type, amount, fee, net, source_id,
	coalesce(payment_id, '') AS payment_id, available_on, created,
	EXISTS (SELECT 1 FROM ledger_releases r WHERE r.merchant_id = balance_transactions.merchant_id
		AND r.environment = balance_transactions.environment AND r.transaction_id = balance_transactions.id) AS pending,
	coalesce((SELECT s.payout_id FROM balance_transaction_payouts s WHERE s.merchant_id = balance_transactions.merchant_id
		AND s.environment = balance_transactions.environment AND s.transaction_id = balance_transactions.id), '') AS payout_id`

type balanceTxnRow struct {
	ID          string    `db:"id"`
	MerchantID  string    `db:"merchant_id"`
	Environment string    `db:"environment"`
	Currency    string    `db:"currency"`
	Type        string    `db:"type"`
	Amount      int64     `db:"amount"`
	Fee         int64     `db:"fee"`
	Net         int64     `db:"net"`
	SourceID    string    `db:"source_id"`
	PaymentID   string    `db:"payment_id"`
	AvailableOn time.Time `db:"available_on"`
	Created     time.Time `db:"created"`
	Pending     bool      `db:"pending"`
	PayoutID    string    `db:"payout_id"`
}

func (r balanceTxnRow) txn() *ledger.Transaction {
	st := ledger.StatusAvailable
	if r.Pending {
		st = ledger.StatusPending
	}
	return ledger.RehydrateTransaction(ledger.TransactionSnapshot{
		ID: r.ID, Scope: core.Scope{MerchantID: r.MerchantID, Env: core.Environment(r.Environment)},
		Currency: core.Currency(r.Currency), Type: ledger.Type(r.Type), Amount: r.Amount, Fee: r.Fee, Net: r.Net,
		SourceID: r.SourceID, PaymentID: r.PaymentID, AvailableOn: r.AvailableOn.UTC(), Created: r.Created.UTC(),
		Status: st, PayoutID: r.PayoutID,
	})
}

// Ledger is the ledger's repository on this transaction.
func (t *Tx) Ledger() ledger.Repository { return ledgerRepo(*t) }

var _ ledger.Tx = (*Tx)(nil)

type ledgerRepo Tx

func keyArrays(keys []ledger.BalanceKey) (m, e, c, a pq.StringArray) {
	for _, k := range keys {
		m = append(m, k.Scope.MerchantID)
		e = append(e, string(k.Scope.Env))
		c = append(c, string(k.Currency))
		a = append(a, string(k.Account))
	}
	return
}

type balanceRow struct {
	MerchantID  string `db:"merchant_id"`
	Environment string `db:"environment"`
	Currency    string `db:"currency"`
	Account     string `db:"account"`
	Balance     int64  `db:"balance"`
}

func (b balanceRow) key() ledger.BalanceKey {
	return ledger.BalanceKey{Scope: core.Scope{MerchantID: b.MerchantID, Env: core.Environment(b.Environment)},
		Currency: core.Currency(b.Currency), Account: ledger.Account(b.Account)}
}

// LockBalances creates the missing rows of keys at zero, then locks them all in key order
// (ORDER BY … FOR UPDATE locks rows as the sort returns them).
func (r ledgerRepo) LockBalances(ctx context.Context, keys []ledger.BalanceKey) (map[ledger.BalanceKey]int64, error) {
	if len(keys) == 0 {
		return map[ledger.BalanceKey]int64{}, nil
	}
	m, e, c, a := keyArrays(keys)
	lock := func() ([]balanceRow, error) {
		var rows []balanceRow
		err := sqlx.SelectContext(ctx, r.q, &rows, `SELECT b.merchant_id, b.environment, b.currency, b.account, b.balance
			FROM ledger_balances b JOIN unnest($1::text[], $2::text[], $3::text[], $4::text[]) k(m, e, c, a)
				ON b.merchant_id = k.m AND b.environment = k.e AND b.currency = k.c AND b.account = k.a
			ORDER BY b.merchant_id, b.environment, b.currency, b.account FOR UPDATE OF b`, m, e, c, a)
		return rows, r.q.a.note(err)
	}
	rows, err := lock()
	if err != nil {
		return nil, fmt.Errorf("ledger_balances: lock: %w", err)
	}
	if len(rows) < len(keys) {
		if _, err := r.q.ExecContext(ctx, `INSERT INTO ledger_balances (merchant_id, environment, currency, account)
			SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) ORDER BY 1, 2, 3, 4
			ON CONFLICT DO NOTHING`, m, e, c, a); err != nil {
			return nil, fmt.Errorf("ledger_balances: create: %w", err)
		}
		if rows, err = lock(); err != nil {
			return nil, fmt.Errorf("ledger_balances: lock: %w", err)
		}
	}
	out := make(map[ledger.BalanceKey]int64, len(rows))
	for _, b := range rows {
		out[b.key()] = b.Balance
	}
	return out, nil
}

// Append writes the journal j: each part one statement.
func (r ledgerRepo) Append(ctx context.Context, j ledger.Journal) error {
	s := j.Scope
	if len(j.Transactions) > 0 {
		var ids, curs, types, srcs, pays pq.StringArray
		var amounts, fees pq.Int64Array
		var avail, created []time.Time
		var pendIDs, pendCurs pq.StringArray
		var pendNets pq.Int64Array
		var pendAt []time.Time
		for _, t := range j.Transactions {
			ts := t.Snapshot()
			ids, curs, types, srcs = append(ids, ts.ID), append(curs, string(ts.Currency)), append(types, string(ts.Type)), append(srcs, ts.SourceID)
			pays = append(pays, ts.PaymentID)
			amounts, fees = append(amounts, ts.Amount), append(fees, ts.Fee)
			avail, created = append(avail, ts.AvailableOn), append(created, ts.Created)
			if ts.Status == ledger.StatusPending {
				pendIDs, pendCurs, pendNets, pendAt = append(pendIDs, ts.ID), append(pendCurs, string(ts.Currency)), append(pendNets, ts.Net), append(pendAt, ts.AvailableOn)
			}
		}
		_, err := r.q.ExecContext(ctx, `INSERT INTO balance_transactions (id, merchant_id, environment, currency, type,
				amount, fee, net, source_id, payment_id, available_on, created)
			SELECT t.id, $1, $2, t.cur, t.typ, t.amount, t.fee, t.amount - t.fee, t.src, nullif(t.pay, ''), t.avail, t.created
			FROM unnest($3::text[], $4::text[], $5::text[], $6::bigint[], $7::bigint[], $8::text[], $9::text[],
				$10::timestamptz[], $11::timestamptz[]) WITH ORDINALITY t(id, cur, typ, amount, fee, src, pay, avail, created, n)
			ORDER BY t.n`, s.MerchantID, string(s.Env), ids, curs, types, amounts, fees, srcs, pays, pq.Array(avail), pq.Array(created))
		if err != nil {
			return uniqueAs(fmt.Errorf("balance_transactions: insert: %w", err), "balance_transactions_source", ledger.ErrTransactionExists)
		}
		if len(pendIDs) > 0 {
			if _, err := r.q.ExecContext(ctx, `INSERT INTO ledger_releases (merchant_id, environment, transaction_id, currency, net, available_on)
				SELECT $1, $2, * FROM unnest($3::text[], $4::text[], $5::bigint[], $6::timestamptz[])`,
				s.MerchantID, string(s.Env), pendIDs, pendCurs, pendNets, pq.Array(pendAt)); err != nil {
				return fmt.Errorf("ledger_releases: insert: %w", err)
			}
		}
	}
	if len(j.Released) > 0 {
		var ids pq.StringArray
		for _, d := range j.Released {
			ids = append(ids, d.TransactionID)
		}
		if err := r.q.exec(ctx, write{what: "ledger_releases: delete", sql: `DELETE FROM ledger_releases
			WHERE merchant_id = $1 AND environment = $2 AND transaction_id = ANY($3::text[])`,
			args: []any{s.MerchantID, string(s.Env), ids}}); err != nil {
			return err
		}
	}
	var tids, kinds, curs, srcs, dsts pq.StringArray
	var amounts pq.Int64Array
	for _, e := range j.Entries {
		for _, p := range e.Postings {
			tids, kinds, curs = append(tids, e.TransactionID), append(kinds, string(e.Kind)), append(curs, string(p.Currency))
			srcs, dsts, amounts = append(srcs, string(p.Source)), append(dsts, string(p.Destination)), append(amounts, p.Amount)
		}
	}
	if len(tids) > 0 {
		if _, err := r.q.ExecContext(ctx, `INSERT INTO ledger_postings (merchant_id, environment, currency, transaction_id, kind,
				source, destination, amount, created)
			SELECT $1, $2, p.cur, p.tid, p.kind, p.src, p.dst, p.amount, $9
			FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::bigint[]) WITH ORDINALITY
				p(tid, kind, cur, src, dst, amount, n) ORDER BY p.n`,
			s.MerchantID, string(s.Env), tids, kinds, curs, srcs, dsts, amounts, j.At); err != nil {
			return fmt.Errorf("ledger_postings: insert: %w", err)
		}
	}
	if j.AvailableChanged {
		if _, err := r.q.ExecContext(ctx, `INSERT INTO ledger_payout_marks (merchant_id, environment, changed_at)
			VALUES ($1, $2, $3) ON CONFLICT (merchant_id, environment)
			DO UPDATE SET changed_at = least(ledger_payout_marks.changed_at, EXCLUDED.changed_at)`,
			s.MerchantID, string(s.Env), j.ChangedAt); err != nil {
			return fmt.Errorf("ledger_payout_marks: mark: %w", err)
		}
	}
	if len(j.Balances) > 0 {
		keys := make([]ledger.BalanceKey, 0, len(j.Balances))
		var vals pq.Int64Array
		for k, v := range j.Balances {
			keys = append(keys, k)
			vals = append(vals, v)
		}
		m, e, c, a := keyArrays(keys)
		res, err := r.q.ExecContext(ctx, `UPDATE ledger_balances b SET balance = k.v
			FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[]) k(m, e, c, a, v)
			WHERE b.merchant_id = k.m AND b.environment = k.e AND b.currency = k.c AND b.account = k.a`, m, e, c, a, vals)
		if err != nil {
			return fmt.Errorf("ledger_balances: update: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil || n != int64(len(keys)) {
			return fmt.Errorf("ledger_balances: update: %w (%d of %d rows)", errRowMissed, n, len(keys))
		}
	}
	return nil
}

type releaseRow struct {
	MerchantID    string    `db:"merchant_id"`
	Environment   string    `db:"environment"`
	TransactionID string    `db:"transaction_id"`
	Currency      string    `db:"currency"`
	Net           int64     `db:"net"`
	AvailableOn   time.Time `db:"available_on"`
}

// ClaimDue locks up to limit due releases, skipping those another sweep holds.
func (r ledgerRepo) ClaimDue(ctx context.Context, scope *core.Scope, until time.Time, limit int) ([]ledger.Due, error) {
	inScope, args := sweepScope("r", scope, []any{until})
	args = append(args, limit)
	var rows []releaseRow
	err := sqlx.SelectContext(ctx, r.q, &rows, fmt.Sprintf(`SELECT r.merchant_id, r.environment, r.transaction_id, r.currency,
		r.net, r.available_on FROM ledger_releases r WHERE r.available_on <= $1 AND %s
		ORDER BY r.available_on, r.merchant_id, r.environment, r.transaction_id LIMIT $%d FOR UPDATE OF r SKIP LOCKED`, inScope, len(args)), args...)
	if err != nil {
		return nil, fmt.Errorf("ledger_releases: claim due: %w", r.q.a.note(err))
	}
	out := make([]ledger.Due, len(rows))
	for i, x := range rows {
		out[i] = ledger.Due{Scope: core.Scope{MerchantID: x.MerchantID, Env: core.Environment(x.Environment)},
			TransactionID: x.TransactionID, Currency: core.Currency(x.Currency), Net: x.Net, AvailableOn: x.AvailableOn.UTC()}
	}
	return out, nil
}

// LedgerStore reads the ledger outside units of work.
type LedgerStore struct{ db handle }

var _ ledger.Store = (*LedgerStore)(nil)

// NewLedgerStore returns the ledger store on db.
func NewLedgerStore(db *sqlx.DB) *LedgerStore { return &LedgerStore{db: wrap(db)} }

// Balances reads the available and pending rows of scope: one per currency and account.
func (st *LedgerStore) Balances(ctx context.Context, scope core.Scope) ([]ledger.Balance, error) {
	var rows []balanceRow
	if err := st.db.SelectContext(ctx, &rows, `SELECT merchant_id, environment, currency, account, balance FROM ledger_balances
		WHERE merchant_id = $1 AND environment = $2 AND account IN ('available', 'pending') ORDER BY currency`,
		scope.MerchantID, string(scope.Env)); err != nil {
		return nil, fmt.Errorf("ledger_balances: read: %w", err)
	}
	var out []ledger.Balance
	for _, b := range rows {
		if len(out) == 0 || out[len(out)-1].Currency != core.Currency(b.Currency) {
			out = append(out, ledger.Balance{Currency: core.Currency(b.Currency)})
		}
		if b.Account == string(ledger.Available) {
			out[len(out)-1].Available = b.Balance
		} else {
			out[len(out)-1].Pending = b.Balance
		}
	}
	return out, nil
}

// List reads a page of scope's balance transactions, newest first.
func (st *LedgerStore) List(ctx context.Context, scope core.Scope, q core.ListQuery, f ledger.Filter) (core.Page[*ledger.Transaction], error) {
	var filter []cond
	filter = append(filter, when(f.Type != "", cond{"type = ?", string(f.Type)})...)
	filter = append(filter, when(f.SourceID != "", cond{"source_id = ?", f.SourceID})...)
	filter = append(filter, when(f.PaymentID != "", cond{"payment_id = ?", f.PaymentID})...)
	filter = append(filter, when(f.PayoutID != "", cond{`EXISTS (SELECT 1 FROM balance_transaction_payouts s
		WHERE s.merchant_id = balance_transactions.merchant_id AND s.environment = balance_transactions.environment
		AND s.transaction_id = balance_transactions.id AND s.payout_id = ?)`, f.PayoutID})...)
	rows, more, err := pageBySeq[balanceTxnRow](ctx, st.db, pageQuery{
		table: "balance_transactions", columns: balanceTxnColumns, scope: scope, q: q, filter: filter,
		unknownCursor: ledger.ErrUnknownCursor,
	})
	if err != nil {
		return core.Page[*ledger.Transaction]{}, err
	}
	page := core.Page[*ledger.Transaction]{HasMore: more, Items: make([]*ledger.Transaction, 0, len(rows))}
	for _, r := range rows {
		page.Items = append(page.Items, r.txn())
	}
	return page, nil
}

// Get reads one transaction of scope.
func (st *LedgerStore) Get(ctx context.Context, scope core.Scope, id string) (*ledger.Transaction, error) {
	var row balanceTxnRow
	err := st.db.GetContext(ctx, &row, `SELECT `+balanceTxnColumns+` FROM balance_transactions
		WHERE merchant_id = $1 AND environment = $2 AND id = $3`, scope.MerchantID, string(scope.Env), id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ledger.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("balance_transactions: get: %w", err)
	}
	return row.txn(), nil
}

// NextDue reads the earliest release ≤ until of scope (ledger_releases_scope_due).
func (st *LedgerStore) NextDue(ctx context.Context, scope core.Scope, until time.Time) (time.Time, bool, error) {
	var at sql.NullTime
	if err := st.db.GetContext(ctx, &at, `SELECT min(available_on) FROM ledger_releases
		WHERE merchant_id = $1 AND environment = $2 AND available_on <= $3`, scope.MerchantID, string(scope.Env), until); err != nil {
		return time.Time{}, false, fmt.Errorf("ledger_releases: next due: %w", err)
	}
	return at.Time.UTC(), at.Valid, nil
}

// ClaimPayoutDue locks up to limit payout marks of envs changed before `before`, skipping those
// another run holds.
func (r ledgerRepo) ClaimPayoutDue(ctx context.Context, scope *core.Scope, envs []core.Environment, before time.Time, limit int) ([]ledger.PayoutDue, error) {
	var es pq.StringArray
	for _, e := range envs {
		es = append(es, string(e))
	}
	inScope, args := sweepScope("m", scope, []any{before, es})
	args = append(args, limit)
	var rows []struct {
		MerchantID  string    `db:"merchant_id"`
		Environment string    `db:"environment"`
		ChangedAt   time.Time `db:"changed_at"`
	}
	err := sqlx.SelectContext(ctx, r.q, &rows, fmt.Sprintf(`SELECT m.merchant_id, m.environment, m.changed_at
		FROM ledger_payout_marks m WHERE m.changed_at < $1 AND m.environment = ANY($2::text[]) AND %s
		ORDER BY m.changed_at, m.merchant_id, m.environment LIMIT $%d FOR UPDATE OF m SKIP LOCKED`, inScope, len(args)), args...)
	if err != nil {
		return nil, fmt.Errorf("ledger_payout_marks: claim: %w", r.q.a.note(err))
	}
	out := make([]ledger.PayoutDue, len(rows))
	for i, x := range rows {
		out[i] = ledger.PayoutDue{Scope: core.Scope{MerchantID: x.MerchantID, Env: core.Environment(x.Environment)}, ChangedAt: x.ChangedAt.UTC()}
	}
	return out, nil
}

// ClearPayoutDue deletes scope's payout mark.
func (r ledgerRepo) ClearPayoutDue(ctx context.Context, scope core.Scope) error {
	return r.q.exec(ctx, write{what: "ledger_payout_marks: clear", sql: `DELETE FROM ledger_payout_marks
		WHERE merchant_id = $1 AND environment = $2`, args: []any{scope.MerchantID, string(scope.Env)}})
}

// Currencies lists scope's balance currencies.
func (r ledgerRepo) Currencies(ctx context.Context, scope core.Scope) ([]core.Currency, error) {
	var out []core.Currency
	err := sqlx.SelectContext(ctx, r.q, &out, `SELECT DISTINCT currency FROM ledger_balances
		WHERE merchant_id = $1 AND environment = $2 AND account = 'available' ORDER BY currency`, scope.MerchantID, string(scope.Env))
	if err != nil {
		return nil, fmt.Errorf("ledger_balances: currencies: %w", r.q.a.note(err))
	}
	return out, nil
}

// Settle links payoutID to every available, unsettled, non-payout transaction of scope in
// currency, and sums their nets.
//
// Each of the merchant's transactions is looked up by primary key in the pending releases and
// in the settled ones. The OFFSET 0 keeps each NOT EXISTS a lookup per transaction (PostgreSQL
// does not turn a subquery with an OFFSET into a join): as an anti-join, on tables without
// statistics (autovacuum off, or a merchant's rows newer than the last ANALYZE) it was planned
// as a nested loop that compared every transaction with every settled one, about 20 s for a
// merchant with 12,000 of each (docs/performance.md, the year of renewals).
func (r ledgerRepo) Settle(ctx context.Context, scope core.Scope, currency core.Currency, payoutID string) (int64, error) {
	var sum int64
	err := sqlx.GetContext(ctx, r.q, &sum, `WITH settled AS (
			INSERT INTO balance_transaction_payouts (merchant_id, environment, transaction_id, payout_id)
			SELECT t.merchant_id, t.environment, t.id, $4 FROM balance_transactions t
			WHERE t.merchant_id = $1 AND t.environment = $2 AND t.currency = $3 AND t.type <> 'payout' AND t.seq > 0
				AND NOT EXISTS (SELECT 1 FROM ledger_releases q WHERE q.merchant_id = t.merchant_id
					AND q.environment = t.environment AND q.transaction_id = t.id OFFSET 0)
				AND NOT EXISTS (SELECT 1 FROM balance_transaction_payouts s WHERE s.merchant_id = t.merchant_id
					AND s.environment = t.environment AND s.transaction_id = t.id OFFSET 0)
			RETURNING transaction_id)
		SELECT coalesce(sum(t.net), 0) FROM balance_transactions t JOIN settled s ON t.id = s.transaction_id
		WHERE t.merchant_id = $1 AND t.environment = $2`, scope.MerchantID, string(scope.Env), string(currency), payoutID)
	if err != nil {
		return 0, fmt.Errorf("balance_transaction_payouts: settle: %w", r.q.a.note(err))
	}
	return sum, nil
}

// PayoutChangedAt reads scope's payout mark.
func (st *LedgerStore) PayoutChangedAt(ctx context.Context, scope core.Scope) (time.Time, bool, error) {
	var at sql.NullTime
	err := st.db.GetContext(ctx, &at, `SELECT changed_at FROM ledger_payout_marks WHERE merchant_id = $1 AND environment = $2`,
		scope.MerchantID, string(scope.Env))
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("ledger_payout_marks: read: %w", err)
	}
	return at.Time.UTC(), at.Valid, nil
}
