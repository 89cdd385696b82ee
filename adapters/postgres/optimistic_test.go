package postgres_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/checkout"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/ports"
)

// cancelIfOpen is a unit of work's function: it locks the session, and when it is open
// cancels it, saves it and adds its event; otherwise it writes nothing.
func cancelIfOpen(ctx context.Context, tx checkout.Tx, scope core.Scope, id string) error {
	s, err := tx.Sessions().Lock(ctx, scope, id)
	if err != nil {
		return err
	}
	if s.Status() != checkout.StatusOpen {
		return nil
	}
	if err := s.Cancel(payNow); err != nil {
		return err
	}
	if err := tx.Sessions().Save(ctx, s); err != nil {
		return err
	}
	return tx.Outbox().Add(ctx, core.NewEvent(checkout.EventCanceled, scope, payNow, checkout.SessionEvent{Session: s}))
}

// expireBehind changes the session's row behind the unit of work's back (another writer).
func expireBehind(t *testing.T, db *sqlx.DB, id string) {
	t.Helper()
	if _, err := db.Exec(`UPDATE checkout_sessions SET status = 'expired' WHERE id = $1`, id); err != nil {
		t.Error(err)
	}
}

// An optimistic unit of work sends its reads and then its writes as exactly one statement:
// no BEGIN, no COMMIT, no lock.
func TestOptimisticUnitSendsReadsAndOneStatement(t *testing.T) {
	t.Parallel()
	db, log := countedDB(t)
	scope := pgtest.Merchant(t, db)
	s := createSession(t, checkoutOn(db, fixedClocks{payNow}), scope)
	mail := core.Mail{Kind: payments.MailReceipt, Scope: scope, SubjectID: "py_optimistic", Created: payNow}
	before := log.count()
	err := checkoutUoW(db).Do(ports.Optimistic(context.Background()), func(ctx context.Context, tx checkout.Tx) error {
		if err := cancelIfOpen(ctx, tx, scope, s.ID()); err != nil {
			return err
		}
		return tx.Mail().Enqueue(ctx, mail)
	})
	if err != nil {
		t.Fatal(err)
	}
	sent := log.since(before)
	if len(sent) != 2 || !strings.HasPrefix(sent[0], "SELECT") || strings.Contains(sent[0], "FOR UPDATE") ||
		!strings.HasPrefix(sent[1], "WITH w1 AS (UPDATE checkout_sessions") {
		t.Fatalf("the unit of work sent %q; want the read, then one statement", sent)
	}
	if st := sessionStatus(t, db, s.ID()); st != "canceled" {
		t.Fatalf("session %s", st)
	}
	if got := eventIDs(t, db, scope); len(got) != 1 {
		t.Fatalf("%d events, want 1", len(got))
	}
	if c := mailRows(t, db, scope); c != 1 {
		t.Fatalf("%d mails", c)
	}
}

// A row read through Lock that another writer changes before the unit's statement makes the
// statement write nothing and fn run again on the row as it now is.
func TestOptimisticUnitRunsAgainWhenALockedRowChanged(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	s := createSession(t, checkoutOn(db, fixedClocks{payNow}), scope)
	calls := 0
	err := checkoutUoW(db).Do(ports.Optimistic(context.Background()), func(ctx context.Context, tx checkout.Tx) error {
		calls++
		locked, err := tx.Sessions().Lock(ctx, scope, s.ID())
		if err != nil {
			return err
		}
		if calls == 1 {
			expireBehind(t, db, s.ID()) // between the read and the statement
		}
		if locked.Status() != checkout.StatusOpen {
			return nil
		}
		if err := locked.Cancel(payNow); err != nil {
			return err
		}
		if err := tx.Sessions().Save(ctx, locked); err != nil {
			return err
		}
		return tx.Outbox().Add(ctx, core.NewEvent(checkout.EventCanceled, scope, payNow, checkout.SessionEvent{Session: locked}))
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 2 {
		t.Errorf("fn ran %d times, want 2", calls)
	}
	if st := sessionStatus(t, db, s.ID()); st != "expired" {
		t.Fatalf("session %s; the other writer's expiry was overwritten", st)
	}
	if got := eventIDs(t, db, scope); len(got) != 0 {
		t.Fatalf("%d events of the conflicted statement persisted", len(got))
	}
}

// A row read through Lock but not written is checked too: when it changed, nothing of the
// statement persists and fn runs again.
func TestOptimisticUnitChecksARowReadButNotWritten(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	co := checkoutOn(db, fixedClocks{payNow})
	read, written := createSession(t, co, scope), createSession(t, co, scope)
	calls := 0
	var seen []checkout.Status
	err := checkoutUoW(db).Do(ports.Optimistic(context.Background()), func(ctx context.Context, tx checkout.Tx) error {
		calls++
		r, err := tx.Sessions().Lock(ctx, scope, read.ID())
		if err != nil {
			return err
		}
		seen = append(seen, r.Status())
		if calls == 1 {
			expireBehind(t, db, read.ID())
		}
		return cancelIfOpen(ctx, tx, scope, written.ID())
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 2 || len(seen) != 2 || seen[1] != checkout.StatusExpired {
		t.Errorf("fn ran %d times and read %v, want 2 runs, the second reading expired", calls, seen)
	}
	if st := sessionStatus(t, db, written.ID()); st != "canceled" {
		t.Fatalf("written session %s", st)
	}
	if got := eventIDs(t, db, scope); len(got) != 1 {
		t.Fatalf("%d events, want the one of the second run", len(got))
	}
}

// A conflict on every run ends in an error after the unit of work's attempts, and none of
// the conflicted statements left anything behind.
func TestOptimisticUnitRetriesAreBounded(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	co := checkoutOn(db, fixedClocks{payNow})
	read, written := createSession(t, co, scope), createSession(t, co, scope)
	calls := 0
	err := checkoutUoW(db).Do(ports.Optimistic(context.Background()), func(ctx context.Context, tx checkout.Tx) error {
		calls++
		if _, err := tx.Sessions().Lock(ctx, scope, read.ID()); err != nil {
			return err
		}
		// Another writer touches the row after every read (the customer's name, each time anew).
		if _, err := db.Exec(`UPDATE checkout_sessions SET customer_name = customer_name || '.' WHERE id = $1`, read.ID()); err != nil {
			return err
		}
		return cancelIfOpen(ctx, tx, scope, written.ID())
	})
	if err == nil || !strings.Contains(err.Error(), "changed since read") {
		t.Fatalf("err = %v, want the conflict", err)
	}
	if calls != postgres.UnitOfWorkAttempts {
		t.Errorf("fn ran %d times, want %d", calls, postgres.UnitOfWorkAttempts)
	}
	if st := sessionStatus(t, db, written.ID()); st != "open" {
		t.Fatalf("written session %s after conflicts only", st)
	}
	if got := eventIDs(t, db, scope); len(got) != 0 {
		t.Fatalf("%d events after conflicts only", len(got))
	}
}

// Inside a (pessimistic) unit of work, an optimistic one joins it: its reads lock on the
// outer transaction, and the outer rollback undoes its writes.
func TestOptimisticUnitNestedJoinsTheOuterTransaction(t *testing.T) {
	t.Parallel()
	db, log := countedDB(t)
	scope := pgtest.Merchant(t, db)
	s := createSession(t, checkoutOn(db, fixedClocks{payNow}), scope)
	uow := checkoutUoW(db)
	boom := errors.New("boom")
	before := log.count()
	err := postgres.NewUnitOfWork(db).Do(context.Background(), func(ctx context.Context) error {
		if err := uow.Do(ports.Optimistic(ctx), func(ctx context.Context, tx checkout.Tx) error {
			return cancelIfOpen(ctx, tx, scope, s.ID())
		}); err != nil {
			return err
		}
		var st string
		if err := postgres.AmbientGet(ctx, &st, `SELECT status FROM checkout_sessions WHERE id = $1`, s.ID()); err != nil || st != "canceled" {
			t.Errorf("the outer transaction sees %q %v, want the nested unit's write", st, err)
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	sent := strings.Join(log.since(before), "\n")
	if !strings.Contains(sent, "BEGIN") || !strings.Contains(sent, "SAVEPOINT") || !strings.Contains(sent, "ROLLBACK") {
		t.Errorf("sent %s; want the nested unit inside the outer transaction", sent)
	}
	if st := sessionStatus(t, db, s.ID()); st != "open" {
		t.Fatalf("session %s after the outer rollback", st)
	}
	if got := eventIDs(t, db, scope); len(got) != 0 {
		t.Fatalf("%d events after the outer rollback", len(got))
	}
}

// What the optimistic contract forbids answers ErrOptimisticMisuse, from the call and from
// Do, even when fn hides it, and writes nothing: a read after a write (of a repository or of
// a store through ctx), a write outside the typed repositories, a unit of work inside it.
func TestOptimisticUnitRefusesMisuse(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	s := createSession(t, checkoutOn(db, fixedClocks{payNow}), scope)
	store := postgres.NewSessionStore(db)
	uow := checkoutUoW(db)
	cases := map[string]func(ctx context.Context, tx checkout.Tx) error{
		"repository read after a write": func(ctx context.Context, tx checkout.Tx) error {
			_, err := tx.Sessions().Lock(ctx, scope, s.ID())
			return err
		},
		"store read after a write": func(ctx context.Context, tx checkout.Tx) error {
			_, err := store.Get(ctx, scope, s.ID())
			return err
		},
		"plain read after a write": func(ctx context.Context, _ checkout.Tx) error {
			return postgres.AmbientGet(ctx, new(int), `SELECT 1`)
		},
		"write outside the repositories": func(ctx context.Context, _ checkout.Tx) error {
			_, err := postgres.AmbientExec(ctx)(`UPDATE checkout_sessions SET customer_name = 'x' WHERE id = $1`, s.ID())
			return err
		},
		"unit of work inside": func(ctx context.Context, _ checkout.Tx) error {
			return postgres.NewUnitOfWork(db).Do(ctx, func(context.Context) error { return nil })
		},
	}
	for name, after := range cases {
		for _, hide := range []bool{false, true} {
			calls := 0
			err := uow.Do(ports.Optimistic(context.Background()), func(ctx context.Context, tx checkout.Tx) error {
				calls++
				if err := cancelIfOpen(ctx, tx, scope, s.ID()); err != nil {
					return err
				}
				err := after(ctx, tx)
				if !errors.Is(err, postgres.ErrOptimisticMisuse) {
					t.Errorf("%s: the call answered %v, want ErrOptimisticMisuse", name, err)
				}
				if hide {
					return nil
				}
				return err
			})
			if !errors.Is(err, postgres.ErrOptimisticMisuse) || calls != 1 {
				t.Errorf("%s (hidden %v): Do answered %v after %d runs, want ErrOptimisticMisuse after 1", name, hide, err, calls)
			}
		}
	}
	// Before any write, reads of any kind are fine (on the pool).
	if err := uow.Do(ports.Optimistic(context.Background()), func(ctx context.Context, tx checkout.Tx) error {
		if _, err := store.Get(ctx, scope, s.ID()); err != nil {
			return err
		}
		if err := postgres.AmbientGet(ctx, new(int), `SELECT 1`); err != nil {
			return err
		}
		return cancelIfOpen(ctx, tx, scope, s.ID())
	}); err != nil {
		t.Fatal(err)
	}
	if st := sessionStatus(t, db, s.ID()); st != "canceled" {
		t.Fatalf("session %s", st)
	}
	if got := eventIDs(t, db, scope); len(got) != 1 {
		t.Fatalf("%d events, want the one of the last unit", len(got))
	}
}

// A unique violation of the optimistic statement is the module's sentinel, and nothing of the
// statement persists; an unguarded write that misses its row is an error (not retried).
func TestOptimisticUnitMapsSentinelsAndMissedRows(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	s := createSession(t, checkoutOn(db, fixedClocks{payNow}), scope)
	ch := chargerOf(t, db)
	uow := checkoutUoW(db)
	ctx := ports.Optimistic(context.Background())
	err := uow.Do(ctx, func(ctx context.Context, tx checkout.Tx) error {
		return beginTwice(ctx, ch, tx, scope, s.ID())
	})
	if !errors.Is(err, payments.ErrChargeInProgress) {
		t.Fatalf("err = %v, want ErrChargeInProgress", err)
	}
	if c := countRows(t, db, `SELECT count(*) FROM charge_attempts WHERE reference = $1`, s.ID()); c != 0 {
		t.Fatalf("%d attempts after a failed statement", c)
	}
	if st := sessionStatus(t, db, s.ID()); st != "open" {
		t.Fatalf("session %s after a failed statement", st)
	}

	// A pending attempt recorded, then resolved behind the unit's back; the unit abandons it
	// without reading it (an unguarded write) and cancels the session it read: the attempt's
	// update misses, and the session is not canceled.
	var a *payments.ChargeAttempt
	if err := uow.Do(ctx, func(ctx context.Context, tx checkout.Tx) error {
		s, err := tx.Sessions().Lock(ctx, scope, s.ID())
		if err != nil {
			return err
		}
		a, err = ch.Begin(ctx, tx, s, 1, ports.MethodCard, payNow)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	// A second pending attempt, the session read fresh: charge_attempts_one_pending.
	if err := uow.Do(ctx, func(ctx context.Context, tx checkout.Tx) error {
		s, err := tx.Sessions().Lock(ctx, scope, s.ID())
		if err != nil {
			return err
		}
		_, err = ch.Begin(ctx, tx, s, 2, ports.MethodCard, payNow)
		return err
	}); !errors.Is(err, payments.ErrChargeInProgress) {
		t.Fatalf("second attempt: %v, want ErrChargeInProgress", err)
	}
	if _, err := db.Exec(`UPDATE charge_attempts SET status = 'abandoned' WHERE reference = $1`, s.ID()); err != nil {
		t.Fatal(err)
	}
	calls := 0
	err = uow.Do(ctx, func(ctx context.Context, tx checkout.Tx) error {
		calls++
		if err := cancelIfOpen(ctx, tx, scope, s.ID()); err != nil {
			return err
		}
		return ch.Abandon(ctx, tx, a)
	})
	if err == nil || !strings.Contains(err.Error(), "0 rows, not 1") || calls != 1 {
		t.Fatalf("err = %v after %d runs, want the missed row after 1", err, calls)
	}
	if st := sessionStatus(t, db, s.ID()); st != "open" {
		t.Fatalf("session %s after a failed statement", st)
	}
	if got := eventIDs(t, db, scope); len(got) != 0 {
		t.Fatalf("%d events after failed statements", len(got))
	}
}

// Two confirmations of one session at once (a double click), both optimistic: one payment,
// one checkout.session.completed; the other confirmation waits for the charge and answers
// that the session is no longer open.
func TestOptimisticConfirmationsOfOneSessionMakeOnePayment(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	svc := paymentsOn(db, fixedClocks{payNow})
	for range 5 {
		s := createSession(t, svc, scope)
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = pay(context.Background(), svc, s, visaDE)
			}()
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case !errors.Is(err, checkout.ErrSessionExpired):
				t.Errorf("a confirmation answered %v", err)
			}
		}
		if ok != 1 {
			t.Errorf("%d confirmations succeeded (%v), want 1", ok, errs)
		}
		if c := countRows(t, db, `SELECT count(*) FROM payments WHERE session_id = $1`, s.ID()); c != 1 {
			t.Errorf("%d payments of one session", c)
		}
		if c := countRows(t, db, `SELECT count(*) FROM events WHERE object_id = $1 AND type = 'checkout.session.completed'`, s.ID()); c != 1 {
			t.Errorf("%d checkout.session.completed", c)
		}
	}
}
