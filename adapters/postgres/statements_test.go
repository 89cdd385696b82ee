package postgres_test

import (
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
)

// countedDB returns a fresh migrated database whose every statement is recorded in the log
// (pgtest.NewCounted).
func countedDB(t *testing.T) (*sqlx.DB, *pgtest.StatementLog) { return pgtest.NewCounted(t) }

// The statements of one card confirmation (Confirm: both units of work, the reads around
// them and the sandbox's journal), logged so that a change of the count shows. Every
// repository call is one statement, sent where it is called (no write is buffered):
//
//	 1 the buyer's session read (buyerSession)
//	 2 the charge protocol's begin: BEGIN
//	 3 its timeouts (this test's pool does not start with them; a pool from Open does)
//	 4 the session, FOR UPDATE
//	 5 the session's UPDATE (the charge in flight, by its owner)
//	 6 the attempt's INSERT
//	 7 COMMIT
//	 8 the sandbox's journal
//	 9 the protocol's apply: BEGIN
//	10 its timeouts
//	11 the session, FOR UPDATE
//	12 the attempt, FOR UPDATE
//	13 the payment's INSERT
//	14 the ledger: its balance rows, FOR UPDATE in sorted order (they exist after the first
//	   payment of the currency; before it, an INSERT … ON CONFLICT DO NOTHING and the lock again)
//	15 the ledger: the balance transaction's INSERT
//	16 the ledger: the release queue's INSERT (card funds are pending for two days)
//	17 the ledger: the postings' INSERT
//	18 the ledger: the balance rows' UPDATE, each row once
//	19 the attempt's UPDATE (applied)
//	20 payment_intent.succeeded, queued for the fan-out in the same statement
//	21 the receipt in mail_outbox
//	22 the session's UPDATE (complete)
//	23 checkout.session.completed, queued likewise
//	24 COMMIT
//
// (7 with the optimistic units and the write-behind buffer this replaced; docs/performance.md.)
func TestConfirmationStatements(t *testing.T) {
	t.Parallel()
	db, log := countedDB(t)
	scope := pgtest.Merchant(t, db)
	svc := paymentsOn(db, fixedClocks{payNow})
	s := createSession(t, svc, scope)
	// A first payment warms the prepared statements of the hot reads up (once per connection).
	mustPay(t, svc, createSession(t, svc, scope), visaDE)
	before := log.Count()
	mustPay(t, svc, s, visaDE)
	sent := log.Since(before)
	for i, q := range sent {
		t.Logf("%2d %s", i+1, q)
	}
	t.Logf("one confirmation: %d statements", len(sent))
	want := []string{"EXECUTE SELECT", "BEGIN", "SELECT set_config", "SELECT", "UPDATE checkout_sessions",
		"INSERT INTO charge_attempts", "COMMIT", "WITH ins AS ( INSERT INTO sandbox_charges",
		"BEGIN", "SELECT set_config", "SELECT", "SELECT", "INSERT INTO payments",
		"INSERT INTO payment_volume_days", "UPDATE charge_attempts",
		"WITH written AS (INSERT INTO events", "INSERT INTO mail_outbox", "UPDATE checkout_sessions",
		"WITH written AS (INSERT INTO events",
		"SELECT b.merchant_id", "INSERT INTO balance_transactions", "INSERT INTO ledger_releases", "INSERT INTO ledger_postings",
		"UPDATE ledger_balances", "COMMIT"}
	if len(sent) != len(want) {
		t.Fatalf("%d statements, want %d", len(sent), len(want))
	}
	for i, q := range sent {
		if !strings.HasPrefix(q, want[i]) {
			t.Errorf("statement %d: %s, want %s…", i+1, q, want[i])
		}
	}
	// The locks are taken in code order: the session (the payable), then the attempt.
	if !strings.Contains(sent[3], "checkout_mode") || !strings.Contains(sent[10], "checkout_mode") ||
		!strings.Contains(sent[11], "idempotency_key") {
		t.Errorf("lock order: %s; %s; %s", sent[3], sent[10], sent[11])
	}
}
