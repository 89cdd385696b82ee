package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// The renewal run's floor: the rows the run wrote, written again by hand-written bulk SQL in
// one transaction (one statement per table over all n renewals), on the same database right
// after the run. Each row is a copy of one the run wrote, with its unique columns suffixed:
// per renewal an invoice (its line inside it) with a number, a charge attempt, the sandbox's
// charge journal row, a payment, a balance transaction with its two postings and its release,
// the events with their fan-out rows and the receipt e-mail's outbox row; and the rows a
// renewal updates, once each: the subscription, the merchant's invoice counter (by n/100)
// and ledger balances (by the copied postings' sums). The copies keep the ledger balanced.
// The run's rows are those of its merchants created at or after the due instant (the test
// clock's time) — the sandbox journal's, written on the wall clock, since the run started.

// copyStmt copies the rows of table that from selects (aliased x), with the columns of set
// replaced by its expressions (over x); generated columns are left to the database.
type copyStmt struct {
	table string
	set   map[string]string
	from  string
}

var renewalFloorCopies = []copyStmt{
	{table: "payments", set: map[string]string{"id": "x.id || '_f'", "payable_key": "x.payable_key || '_f'",
		"seq": "nextval(pg_get_serial_sequence('payments', 'seq'))"},
		from: `payments x WHERE x.merchant_id = ANY(:ids) AND x.environment = 'test' AND x.created >= :due`},
	{table: "invoices", set: map[string]string{"id": "x.id || '_f'", "number": "x.number || '-F'",
		"public_token": "x.public_token || '_f'", "seq": "nextval(pg_get_serial_sequence('invoices', 'seq'))"},
		from: `invoices x WHERE x.merchant_id = ANY(:ids) AND x.environment = 'test' AND x.created >= :due`},
	{table: "charge_attempts", set: map[string]string{"idempotency_key": "x.idempotency_key || '_f'"},
		from: `charge_attempts x WHERE x.merchant_id = ANY(:ids) AND x.environment = 'test' AND x.charged_at >= :due`},
	{table: "sandbox_charges", set: map[string]string{"idempotency_key": "x.idempotency_key || '_f'"},
		from: `sandbox_charges x WHERE x.merchant_id = ANY(:ids) AND x.environment = 'test' AND x.created >= :started`},
	{table: "balance_transactions", set: map[string]string{"id": "x.id || '_f'", "source_id": "x.source_id || '_f'",
		"seq": "nextval(pg_get_serial_sequence('balance_transactions', 'seq'))"},
		from: `balance_transactions x WHERE x.merchant_id = ANY(:ids) AND x.environment = 'test' AND x.created >= :due`},
	{table: "ledger_postings", set: map[string]string{"transaction_id": "x.transaction_id || '_f'",
		"seq": "nextval(pg_get_serial_sequence('ledger_postings', 'seq'))"},
		from: `ledger_postings x WHERE x.merchant_id = ANY(:ids) AND x.environment = 'test' AND x.created >= :due`},
	{table: "ledger_releases", set: map[string]string{"transaction_id": "x.transaction_id || '_f'"},
		from: `ledger_releases x JOIN balance_transactions t ON (t.merchant_id, t.environment, t.id) = (x.merchant_id, x.environment, x.transaction_id)
			WHERE x.merchant_id = ANY(:ids) AND x.environment = 'test' AND t.created >= :due AND t.id NOT LIKE '%\_f'`},
	{table: "events", set: map[string]string{"id": "x.id || '_f'", "seq": "nextval(pg_get_serial_sequence('events', 'seq'))"},
		from: `events x WHERE x.merchant_id = ANY(:ids) AND x.environment = 'test' AND x.created >= :due`},
	{table: "mail_outbox", set: map[string]string{"id": "x.id || '_f'", "subject_id": "x.subject_id || '_f'"},
		from: `mail_outbox x WHERE x.merchant_id = ANY(:ids) AND x.environment = 'test' AND x.created >= :due`},
}

// The rows a renewal updates and the events' fan-out rows, after the copies (:per is the
// renewals per merchant).
var renewalFloorWrites = []string{
	`INSERT INTO event_fanout (merchant_id, environment, event_id)
		SELECT merchant_id, environment, id FROM events
		WHERE merchant_id = ANY(:ids) AND environment = 'test' AND created >= :due AND id LIKE '%\_f'`,
	`UPDATE invoice_number_counters SET last = last + :per
		WHERE merchant_id = ANY(:ids) AND environment = 'test' AND year = extract(year FROM CAST(:due AS timestamptz) AT TIME ZONE 'UTC')`,
	`UPDATE ledger_balances b SET balance = b.balance + d.delta
		FROM (SELECT merchant_id, environment, currency, account, sum(delta) AS delta FROM (
			SELECT merchant_id, environment, currency, destination AS account, amount AS delta FROM ledger_postings
				WHERE merchant_id = ANY(:ids) AND environment = 'test' AND created >= :due AND transaction_id LIKE '%\_f'
			UNION ALL
			SELECT merchant_id, environment, currency, source, -amount FROM ledger_postings
				WHERE merchant_id = ANY(:ids) AND environment = 'test' AND created >= :due AND transaction_id LIKE '%\_f') p
			GROUP BY 1, 2, 3, 4) d
		WHERE (b.merchant_id, b.environment, b.currency, b.account) = (d.merchant_id, d.environment, d.currency, d.account)`,
	`UPDATE subscriptions SET period_start = period_start, period_end = period_end, latest_invoice = latest_invoice, updated = updated
		WHERE merchant_id = ANY(:ids) AND environment = 'test' AND period_end > :due`,
}

// renewalFloor writes the floor's rows of a run over the merchants ids (due is the renewals'
// instant, started the run's wall-clock start, per the renewals per merchant) and returns how
// long the transaction took, commit included, how many rows it inserted, and each statement's
// time (the table it writes, in order, then "commit").
func renewalFloor(ctx context.Context, db *sqlx.DB, ids []string, due, started time.Time, per int) (time.Duration, int64, []floorStep, error) {
	stmts := make([]string, 0, len(renewalFloorCopies))
	for _, c := range renewalFloorCopies {
		s, err := c.sql(ctx, db)
		if err != nil {
			return 0, 0, nil, err
		}
		stmts = append(stmts, s)
	}
	start := time.Now()
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return 0, 0, nil, err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
	var rows int64
	var steps []floorStep
	args := map[string]any{"ids": pq.Array(ids), "due": due, "started": started, "per": per}
	for i, s := range append(stmts, renewalFloorWrites...) {
		at := time.Now()
		r, err := tx.NamedExecContext(ctx, s, args)
		if err != nil {
			return 0, 0, nil, fmt.Errorf("renewal floor: %w\n%s", err, s)
		}
		steps = append(steps, floorStep{table: floorTable(s), took: time.Since(at)})
		if i <= len(stmts) { // the inserts (copies and fan-out rows)
			n, _ := r.RowsAffected()
			rows += n
		}
	}
	at := time.Now()
	if err := tx.Commit(); err != nil {
		return 0, 0, nil, err
	}
	steps = append(steps, floorStep{table: "commit", took: time.Since(at)})
	return time.Since(start), rows, steps, nil
}

// floorStep is one statement of the floor: the table it writes and how long it took.
type floorStep struct {
	table string
	took  time.Duration
}

// floorTable is the table an INSERT INTO or UPDATE statement writes.
func floorTable(stmt string) string {
	f := strings.Fields(stmt)
	switch {
	case len(f) > 2 && f[0] == "INSERT":
		return f[2]
	case len(f) > 1 && f[0] == "UPDATE":
		return f[1]
	}
	return "?"
}

// sql is the INSERT … SELECT of c, with the table's columns as the database lists them.
func (c copyStmt) sql(ctx context.Context, db *sqlx.DB) (string, error) {
	var cols []string
	if err := db.SelectContext(ctx, &cols, `SELECT column_name FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = $1 AND is_generated = 'NEVER' ORDER BY ordinal_position`, c.table); err != nil {
		return "", err
	}
	vals := make([]string, len(cols))
	for i, col := range cols {
		vals[i] = "x." + col
		if e, ok := c.set[col]; ok {
			vals[i] = e
		}
	}
	return fmt.Sprintf("INSERT INTO %s (%s) SELECT %s FROM %s", c.table, strings.Join(cols, ", "), strings.Join(vals, ", "), c.from), nil
}
