package postgres_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/checkout"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/ports"
)

// writes returns the statements of sent that write: an INSERT, an UPDATE or a flush.
func writes(sent []string) []string {
	var out []string
	for _, q := range sent {
		if strings.HasPrefix(q, "INSERT") || strings.HasPrefix(q, "UPDATE") || strings.HasPrefix(q, "WITH w1 AS (") {
			out = append(out, q)
		}
	}
	return out
}

func sessionStatus(t *testing.T, db *sqlx.DB, id string) string {
	t.Helper()
	var st string
	if err := db.Get(&st, `SELECT status FROM checkout_sessions WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	return st
}

func eventIDs(t *testing.T, db *sqlx.DB, scope core.Scope) []string {
	t.Helper()
	var ids []string
	if err := db.Select(&ids, `SELECT id FROM events WHERE merchant_id = $1 ORDER BY seq`, scope.MerchantID); err != nil {
		t.Fatal(err)
	}
	return ids
}

// A unit of work's writes (a session, events of two Adds, a mail) reach the database as one
// statement, at the commit; the events of both Adds keep their order.
func TestWriteBehindSendsAUnitsWritesAsOneStatement(t *testing.T) {
	t.Parallel()
	db, log := countedDB(t)
	scope := pgtest.Merchant(t, db)
	s := createSession(t, checkoutOn(db, fixedClocks{payNow}), scope)
	first := core.NewEvent(checkout.EventExpired, scope, payNow, checkout.SessionEvent{Session: s})
	second := core.NewEvent(checkout.EventExpired, scope, payNow, checkout.SessionEvent{Session: s})
	mail := core.Mail{Kind: payments.MailReceipt, Scope: scope, SubjectID: "py_writebehind", Created: payNow}
	before := log.count()
	err := checkoutUoW(db).Do(context.Background(), func(ctx context.Context, tx checkout.Tx) error {
		locked, err := tx.Sessions().Lock(ctx, scope, s.ID())
		if err != nil {
			return err
		}
		if err := locked.Expire(); err != nil {
			return err
		}
		if err := tx.Sessions().Save(ctx, locked); err != nil {
			return err
		}
		if err := tx.Outbox().Add(ctx, first); err != nil {
			return err
		}
		if err := tx.Mail().Enqueue(ctx, mail); err != nil {
			return err
		}
		return tx.Outbox().Add(ctx, second)
	})
	if err != nil {
		t.Fatal(err)
	}
	sent := log.since(before)
	w := writes(sent)
	if len(w) != 1 || !strings.HasPrefix(w[0], "WITH w1 AS (") || sent[len(sent)-1] != "COMMIT" || sent[len(sent)-2] != w[0] {
		t.Fatalf("the unit of work sent %q; want its writes in one statement right before COMMIT", sent)
	}
	if st := sessionStatus(t, db, s.ID()); st != "expired" {
		t.Fatalf("session %s", st)
	}
	if got := eventIDs(t, db, scope); !slices.Equal(got, []string{first.ID, second.ID}) {
		t.Fatalf("events %v, want %v in this order", got, []string{first.ID, second.ID})
	}
	if c := mailRows(t, db, scope); c != 1 {
		t.Fatalf("%d mails", c)
	}
}

// A read inside the unit of work sees the writes made before it, whichever store reads: the
// repository, a store reached through ctx (the prepared read of SessionStore.Get), a plain
// query on the ambient transaction. They are undone with the unit of work all the same.
func TestWriteBehindReadsSeeEarlierWrites(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	s := createSession(t, checkoutOn(db, fixedClocks{payNow}), scope)
	store := postgres.NewSessionStore(db)
	boom := errors.New("boom")
	err := checkoutUoW(db).Do(context.Background(), func(ctx context.Context, tx checkout.Tx) error {
		locked, err := tx.Sessions().Lock(ctx, scope, s.ID())
		if err != nil {
			return err
		}
		if err := locked.Cancel(payNow); err != nil {
			return err
		}
		if err := tx.Sessions().Save(ctx, locked); err != nil {
			return err
		}
		if got, err := store.Get(ctx, scope, s.ID()); err != nil || got.Status() != checkout.StatusCanceled {
			t.Errorf("store read after the save: %v %v, want canceled", got, err)
		}
		if err := tx.Outbox().Add(ctx, core.NewEvent(checkout.EventCanceled, scope, payNow, checkout.SessionEvent{Session: locked})); err != nil {
			return err
		}
		var n int
		if err := postgres.AmbientGet(ctx, &n, `SELECT count(*) FROM events WHERE merchant_id = $1`, scope.MerchantID); err != nil || n != 1 {
			t.Errorf("events seen after the Add: %d %v, want 1", n, err)
		}
		again, err := tx.Sessions().Lock(ctx, scope, s.ID())
		if err != nil || again.Status() != checkout.StatusCanceled {
			t.Errorf("repository read after the save: %v %v, want canceled", again, err)
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if st := sessionStatus(t, db, s.ID()); st != "open" {
		t.Fatalf("session %s after the rollback", st)
	}
	if got := eventIDs(t, db, scope); len(got) != 0 {
		t.Fatalf("events %v after the rollback", got)
	}
}

// beginTwice records two pending attempts of s in tx, after saving s canceled: the second
// breaks charge_attempts_one_pending when the buffer is sent.
func beginTwice(ctx context.Context, ch *payments.Charger, tx checkout.Tx, scope core.Scope, id string) error {
	s, err := tx.Sessions().Lock(ctx, scope, id)
	if err != nil {
		return err
	}
	for n := 1; n <= 2; n++ {
		if _, err := ch.Begin(ctx, tx, s, n, ports.MethodCard, payNow); err != nil {
			return err
		}
	}
	if err := s.Cancel(payNow); err != nil {
		return err
	}
	return tx.Sessions().Save(ctx, s)
}

// A flush that fails answers the module's sentinel (from the constraint's name) and undoes
// everything the unit of work wrote; so does one whose update misses its row.
func TestWriteBehindFailedFlushRollsBackAndMapsTheSentinel(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	s := createSession(t, checkoutOn(db, fixedClocks{payNow}), scope)
	ch := chargerOf(t, db)
	uow := checkoutUoW(db)
	ctx := context.Background()
	err := uow.Do(ctx, func(ctx context.Context, tx checkout.Tx) error {
		return beginTwice(ctx, ch, tx, scope, s.ID())
	})
	if !errors.Is(err, payments.ErrChargeInProgress) {
		t.Fatalf("err = %v, want ErrChargeInProgress", err)
	}
	if c := countRows(t, db, `SELECT count(*) FROM charge_attempts WHERE reference = $1`, s.ID()); c != 0 {
		t.Fatalf("%d attempts after a failed flush", c)
	}
	if st := sessionStatus(t, db, s.ID()); st != "open" {
		t.Fatalf("session %s after a failed flush", st)
	}

	// A pending attempt, resolved behind the repository's back before its Save is sent: the
	// update finds no pending row, and the unit of work fails whole.
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
	err = uow.Do(ctx, func(ctx context.Context, tx checkout.Tx) error {
		locked, _, err := ch.LockAttempt(ctx, tx, scope, s.ID(), a.IdempotencyKey())
		if err != nil {
			return err
		}
		if _, err := postgres.AmbientExec(ctx)(`UPDATE charge_attempts SET status = 'abandoned' WHERE reference = $1`, s.ID()); err != nil {
			return err
		}
		sess, err := tx.Sessions().Lock(ctx, scope, s.ID())
		if err != nil {
			return err
		}
		if err := sess.Cancel(payNow); err != nil {
			return err
		}
		if err := tx.Sessions().Save(ctx, sess); err != nil {
			return err
		}
		return ch.Abandon(ctx, tx, locked)
	})
	if err == nil || !strings.Contains(err.Error(), "0 rows, not 1") {
		t.Fatalf("err = %v, want the missed row", err)
	}
	if c := countRows(t, db, `SELECT count(*) FROM charge_attempts WHERE reference = $1 AND status = 'pending'`, s.ID()); c != 1 {
		t.Fatalf("%d pending attempts, want the one left as it was", c)
	}
	if st := sessionStatus(t, db, s.ID()); st != "open" {
		t.Fatalf("session %s after a failed flush", st)
	}
}

// A serialization failure raised by the flush reaches Do's retry: fn runs again, and the
// writes land once.
func TestWriteBehindRetriesASerializationFailureOfTheFlush(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	s := createSession(t, checkoutOn(db, fixedClocks{payNow}), scope)
	// The first two updates of a session fail with 40001 (a sequence is not rolled back).
	if _, err := db.Exec(`CREATE SEQUENCE wb_failures;
		CREATE FUNCTION wb_fail() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF nextval('wb_failures') <= 2 THEN
				RAISE EXCEPTION 'forced' USING ERRCODE = '40001';
			END IF;
			RETURN NEW;
		END $$;
		CREATE TRIGGER wb_fail BEFORE UPDATE ON checkout_sessions FOR EACH ROW EXECUTE FUNCTION wb_fail();`); err != nil {
		t.Fatal(err)
	}
	calls := 0
	err := checkoutUoW(db).Do(context.Background(), func(ctx context.Context, tx checkout.Tx) error {
		calls++
		return cancelIfOpen(ctx, tx, scope, s.ID())
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 3 {
		t.Errorf("fn ran %d times, want 3", calls)
	}
	if st := sessionStatus(t, db, s.ID()); st != "canceled" {
		t.Fatalf("session %s", st)
	}
	if got := eventIDs(t, db, scope); len(got) != 1 {
		t.Fatalf("%d events, want 1", len(got))
	}
}

// A nested Do sends its writes inside its savepoint: one that fails there (even when its fn
// hid the failure) is undone alone, with its sentinel, and the outer unit of work goes on and
// commits its own writes and those of a nested Do that succeeded.
func TestWriteBehindNestedDoFlushesInItsSavepoint(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	co := checkoutOn(db, fixedClocks{payNow})
	outerS, failS, hiddenS, okS := createSession(t, co, scope), createSession(t, co, scope), createSession(t, co, scope), createSession(t, co, scope)
	ch := chargerOf(t, db)
	uow := checkoutUoW(db)
	cancel := func(ctx context.Context, tx checkout.Tx, id string) error {
		s, err := tx.Sessions().Lock(ctx, scope, id)
		if err != nil {
			return err
		}
		if err := s.Cancel(payNow); err != nil {
			return err
		}
		return tx.Sessions().Save(ctx, s)
	}
	err := uow.Do(context.Background(), func(ctx context.Context, tx checkout.Tx) error {
		if err := cancel(ctx, tx, outerS.ID()); err != nil {
			return err
		}
		if err := uow.Do(ctx, func(ctx context.Context, tx checkout.Tx) error {
			return beginTwice(ctx, ch, tx, scope, failS.ID())
		}); !errors.Is(err, payments.ErrChargeInProgress) {
			t.Errorf("failing nested Do: %v, want ErrChargeInProgress", err)
		}
		if err := uow.Do(ctx, func(ctx context.Context, tx checkout.Tx) error {
			if err := beginTwice(ctx, ch, tx, scope, hiddenS.ID()); err != nil {
				return err
			}
			_, _ = tx.Sessions().Lock(ctx, scope, hiddenS.ID()) // the flush fails here; fn ignores it
			return nil
		}); !errors.Is(err, payments.ErrChargeInProgress) {
			t.Errorf("nested Do hiding its failed flush: %v, want ErrChargeInProgress", err)
		}
		return uow.Do(ctx, func(ctx context.Context, tx checkout.Tx) error { return cancel(ctx, tx, okS.ID()) })
	})
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{outerS.ID(): "canceled", failS.ID(): "open", hiddenS.ID(): "open", okS.ID(): "canceled"} {
		if st := sessionStatus(t, db, id); st != want {
			t.Errorf("session %s: %s, want %s", id, st, want)
		}
	}
	if c := countRows(t, db, `SELECT count(*) FROM charge_attempts WHERE merchant_id = $1`, scope.MerchantID); c != 0 {
		t.Errorf("%d attempts of the failed nested units of work", c)
	}
}

// Postgres cannot write one row twice in one statement: an attempt inserted and resolved in
// one unit of work, and a session saved twice, are sent in two statements and all land.
func TestWriteBehindWritesARowTwice(t *testing.T) {
	t.Parallel()
	db, log := countedDB(t)
	scope := pgtest.Merchant(t, db)
	s := createSession(t, checkoutOn(db, fixedClocks{payNow}), scope)
	ch := chargerOf(t, db)
	before := log.count()
	err := checkoutUoW(db).Do(context.Background(), func(ctx context.Context, tx checkout.Tx) error {
		locked, err := tx.Sessions().Lock(ctx, scope, s.ID())
		if err != nil {
			return err
		}
		a, err := ch.Begin(ctx, tx, locked, 1, ports.MethodCard, payNow)
		if err != nil {
			return err
		}
		if err := ch.Abandon(ctx, tx, a); err != nil {
			return err
		}
		if err := locked.Cancel(payNow); err != nil {
			return err
		}
		if err := tx.Sessions().Save(ctx, locked); err != nil {
			return err
		}
		return tx.Sessions().Save(ctx, locked)
	})
	if err != nil {
		t.Fatal(err)
	}
	if w := writes(log.since(before)); len(w) != 3 {
		t.Errorf("%d write statements, want 3 (insert | update attempt, session | session): %q", len(w), w)
	}
	if c := countRows(t, db, `SELECT count(*) FROM charge_attempts WHERE reference = $1 AND status = 'abandoned'`, s.ID()); c != 1 {
		t.Fatalf("%d abandoned attempts, want 1", c)
	}
	if st := sessionStatus(t, db, s.ID()); st != "canceled" {
		t.Fatalf("session %s", st)
	}
}
