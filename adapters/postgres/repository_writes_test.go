package postgres_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/checkout"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/ports"
)

func sessionStatus(t *testing.T, db *sqlx.DB, id string) string {
	t.Helper()
	var st string
	if err := db.Get(&st, `SELECT status FROM checkout_sessions WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	return st
}

// cancelIfOpen cancels session id in tx with its event, unless it is no longer open.
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

// A repository's write runs where it is called and answers there: a second pending attempt
// of a payable is payments.ErrChargeInProgress from the Insert itself, and the Save of an
// attempt that is no longer pending fails at the Save. Either failure undoes the whole unit.
func TestRepositoryWritesAnswerWhereTheyAreCalled(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	s := createSession(t, checkoutOn(db, fixedClocks{payNow}), scope)
	ch := chargerOf(t, db)
	uow := checkoutUoW(db)
	ctx := context.Background()

	err := uow.Do(ctx, func(ctx context.Context, tx checkout.Tx) error {
		locked, err := tx.Sessions().Lock(ctx, scope, s.ID())
		if err != nil {
			return err
		}
		if _, err := ch.Begin(ctx, tx, locked, 1, ports.MethodCard, payNow); err != nil {
			t.Errorf("first attempt: %v", err)
			return err
		}
		if _, err := ch.Begin(ctx, tx, locked, 2, ports.MethodCard, payNow); !errors.Is(err, payments.ErrChargeInProgress) {
			t.Errorf("second pending attempt: %v, want ErrChargeInProgress at the call", err)
		}
		return payments.ErrChargeInProgress
	})
	if !errors.Is(err, payments.ErrChargeInProgress) {
		t.Fatalf("Do: %v", err)
	}
	if c := countRows(t, db, `SELECT count(*) FROM charge_attempts WHERE reference = $1`, s.ID()); c != 0 {
		t.Fatalf("%d attempts after a failed unit of work", c)
	}

	// A pending attempt, resolved behind the repository's back before its Save: the Save
	// itself answers the missed row.
	var a *payments.ChargeAttempt
	if err := uow.Do(ctx, func(ctx context.Context, tx checkout.Tx) error {
		locked, err := tx.Sessions().Lock(ctx, scope, s.ID())
		if err != nil {
			return err
		}
		a, err = ch.Begin(ctx, tx, locked, 1, ports.MethodCard, payNow)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	saveErr := errors.New("not reached")
	err = uow.Do(ctx, func(ctx context.Context, tx checkout.Tx) error {
		locked, _, err := ch.LockAttempt(ctx, tx, scope, s.ID(), a.IdempotencyKey())
		if err != nil {
			return err
		}
		if _, err := postgres.AmbientExec(ctx)(`UPDATE charge_attempts SET status = 'abandoned' WHERE reference = $1`, s.ID()); err != nil {
			return err
		}
		saveErr = ch.Abandon(ctx, tx, locked)
		return saveErr
	})
	if saveErr == nil || !errors.Is(err, saveErr) {
		t.Fatalf("Save: %v, Do: %v; want the missed row from the Save", saveErr, err)
	}
	if c := countRows(t, db, `SELECT count(*) FROM charge_attempts WHERE reference = $1 AND status = 'pending'`, s.ID()); c != 1 {
		t.Fatalf("%d pending attempts, want the one left as it was", c)
	}
}

// One row written twice in one unit of work (an attempt inserted and then resolved, a
// session saved twice): every write lands, none is lost.
func TestARowWrittenTwiceInOneUnitKeepsBothWrites(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	s := createSession(t, checkoutOn(db, fixedClocks{payNow}), scope)
	ch := chargerOf(t, db)
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
		// A read in the unit of work sees the writes before it.
		var st string
		if err := postgres.AmbientGet(ctx, &st, `SELECT status FROM checkout_sessions WHERE id = $1`, s.ID()); err != nil || st != "canceled" {
			t.Errorf("read after the save: %q %v", st, err)
		}
		return tx.Sessions().Save(ctx, locked)
	})
	if err != nil {
		t.Fatal(err)
	}
	if c := countRows(t, db, `SELECT count(*) FROM charge_attempts WHERE reference = $1 AND status = 'abandoned'`, s.ID()); c != 1 {
		t.Fatalf("%d abandoned attempts, want 1", c)
	}
	if st := sessionStatus(t, db, s.ID()); st != "canceled" {
		t.Fatalf("session %s", st)
	}
}

// A serialization failure raised by a Save reaches Do's retry: fn runs again, and the writes
// land once.
func TestASerializationFailureOfASaveIsRetried(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	s := createSession(t, checkoutOn(db, fixedClocks{payNow}), scope)
	// The first two updates of a session fail with 40001 (a sequence is not rolled back).
	if _, err := db.Exec(`CREATE SEQUENCE ser_failures;
		CREATE FUNCTION ser_fail() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF nextval('ser_failures') <= 2 THEN
				RAISE EXCEPTION 'forced' USING ERRCODE = '40001';
			END IF;
			RETURN NEW;
		END $$;
		CREATE TRIGGER ser_fail BEFORE UPDATE ON checkout_sessions FOR EACH ROW EXECUTE FUNCTION ser_fail();`); err != nil {
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
	if c := countRows(t, db, `SELECT count(*) FROM events WHERE merchant_id = $1`, scope.MerchantID); c != 1 {
		t.Fatalf("%d events, want 1", c)
	}
}

// A nested Do that fails on a sentinel is undone alone; the outer unit of work goes on and
// commits its own writes and those of a nested Do that succeeded.
func TestAFailedNestedDoIsUndoneAlone(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	co := checkoutOn(db, fixedClocks{payNow})
	outerS, failS, okS := createSession(t, co, scope), createSession(t, co, scope), createSession(t, co, scope)
	ch := chargerOf(t, db)
	uow := checkoutUoW(db)
	err := uow.Do(context.Background(), func(ctx context.Context, tx checkout.Tx) error {
		if err := cancelIfOpen(ctx, tx, scope, outerS.ID()); err != nil {
			return err
		}
		if err := uow.Do(ctx, func(ctx context.Context, tx checkout.Tx) error {
			if err := cancelIfOpen(ctx, tx, scope, failS.ID()); err != nil {
				return err
			}
			s, err := tx.Sessions().Lock(ctx, scope, failS.ID())
			if err != nil {
				return err
			}
			if _, err := ch.Begin(ctx, tx, s, 1, ports.MethodCard, payNow); err != nil {
				return err
			}
			_, err = ch.Begin(ctx, tx, s, 2, ports.MethodCard, payNow)
			return err
		}); !errors.Is(err, payments.ErrChargeInProgress) {
			t.Errorf("failing nested Do: %v, want ErrChargeInProgress", err)
		}
		return uow.Do(ctx, func(ctx context.Context, tx checkout.Tx) error { return cancelIfOpen(ctx, tx, scope, okS.ID()) })
	})
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{outerS.ID(): "canceled", failS.ID(): "open", okS.ID(): "canceled"} {
		if st := sessionStatus(t, db, id); st != want {
			t.Errorf("session %s: %s, want %s", id, st, want)
		}
	}
	if c := countRows(t, db, `SELECT count(*) FROM charge_attempts WHERE merchant_id = $1`, scope.MerchantID); c != 0 {
		t.Errorf("%d attempts of the failed nested unit of work", c)
	}
}
