package postgres_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
)

func uowTable(t *testing.T, db *sqlx.DB) {
	t.Helper()
	if _, err := db.Exec(`CREATE TABLE uow_t (id int PRIMARY KEY, v int NOT NULL); INSERT INTO uow_t VALUES (1, 0), (2, 0)`); err != nil {
		t.Fatal(err)
	}
}

func uowValue(t *testing.T, db *sqlx.DB, id int) int {
	t.Helper()
	var v int
	if err := db.Get(&v, `SELECT v FROM uow_t WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	return v
}

// A deadlock between two units of work is resolved by Postgres aborting one of them; Do runs
// the loser again, so both finish and both increments land.
func TestUnitOfWorkRetriesDeadlock(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	uowTable(t, db)
	uow := postgres.NewUnitOfWork(db)
	var calls atomic.Int32
	var both sync.WaitGroup // both transactions hold their first row before taking the second
	both.Add(2)
	run := func(first, second int) error {
		attempt := 0
		return uow.Do(context.Background(), func(ctx context.Context) error {
			calls.Add(1)
			attempt++
			tx := postgres.AmbientExec(ctx)
			if _, err := tx(`UPDATE uow_t SET v = v + 1 WHERE id = $1`, first); err != nil {
				return err
			}
			if attempt == 1 {
				both.Done()
				both.Wait()
			}
			_, err := tx(`UPDATE uow_t SET v = v + 1 WHERE id = $1`, second)
			return err
		})
	}
	errs := make(chan error, 2)
	go func() { errs <- run(1, 2) }()
	go func() { errs <- run(2, 1) }()
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("a unit of work failed despite the retry: %v", err)
		}
	}
	// At least one of the two deadlocked and ran again. On a loaded machine the retry may meet
	// the other's locks once more (another deadlock, retried again): what must hold is that the
	// retries are bounded and each unit of work counted once.
	if n := calls.Load(); n < 3 || n > 2*5 {
		t.Errorf("fn ran %d times, want 3 to 10 (one of the two deadlocked and ran again, within the bound)", n)
	}
	if a, b := uowValue(t, db, 1), uowValue(t, db, 2); a != 2 || b != 2 {
		t.Errorf("rows = %d, %d; want 2, 2 (each unit of work counted once)", a, b)
	}
}

// A serialization failure is retried even when fn turned it into another error (as a handler
// turns a store error into a 500): the unit of work remembers what the database said.
func TestUnitOfWorkRetriesSerializationFailureEvenWhenHidden(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	uowTable(t, db)
	uow := postgres.NewUnitOfWork(db)
	calls := 0
	err := uow.Do(context.Background(), func(ctx context.Context) error {
		calls++
		exec := postgres.AmbientExec(ctx)
		if _, err := exec(`UPDATE uow_t SET v = v + 1 WHERE id = 1`); err != nil {
			return err
		}
		if calls < 3 {
			_, err := exec(`DO $$ BEGIN RAISE EXCEPTION 'forced' USING ERRCODE = '40001'; END $$`)
			if err == nil {
				t.Fatal("the forced failure did not fail")
			}
			return errors.New("internal error") // the cause is hidden from Do
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 3 {
		t.Errorf("fn ran %d times, want 3", calls)
	}
	if v := uowValue(t, db, 1); v != 1 {
		t.Errorf("v = %d, want 1: the failed attempts must have rolled back", v)
	}
}

// The retries are bounded: a unit of work that always loses ends with the database's error.
func TestUnitOfWorkRetriesAreBounded(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	uow := postgres.NewUnitOfWork(db)
	calls := 0
	err := uow.Do(context.Background(), func(ctx context.Context) error {
		calls++
		_, err := postgres.AmbientExec(ctx)(`DO $$ BEGIN RAISE EXCEPTION 'forced' USING ERRCODE = '40P01'; END $$`)
		return err
	})
	var pe *pq.Error
	if !errors.As(err, &pe) || pe.Code != "40P01" {
		t.Fatalf("err = %v, want the deadlock error", err)
	}
	if calls != postgres.UnitOfWorkAttempts {
		t.Errorf("fn ran %d times, want %d", calls, postgres.UnitOfWorkAttempts)
	}
}

// A Do inside a Do joins the outer transaction: nothing is committed until the outer one is,
// an inner failure undoes only the inner writes, and an outer failure undoes everything.
func TestUnitOfWorkNestedJoinsOuter(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	uowTable(t, db)
	uow := postgres.NewUnitOfWork(db)
	ctx := context.Background()
	boom := errors.New("boom")
	err := uow.Do(ctx, func(ctx context.Context) error {
		if err := uow.Do(ctx, func(ctx context.Context) error {
			_, err := postgres.AmbientExec(ctx)(`UPDATE uow_t SET v = 10 WHERE id = 1`)
			return err
		}); err != nil {
			return err
		}
		if v := uowValue(t, db, 1); v != 0 {
			t.Errorf("the inner Do committed on its own: v = %d seen from outside", v)
		}
		if err := uow.Do(ctx, func(ctx context.Context) error {
			if _, err := postgres.AmbientExec(ctx)(`UPDATE uow_t SET v = 20 WHERE id = 2`); err != nil {
				return err
			}
			return boom
		}); !errors.Is(err, boom) {
			t.Errorf("inner error = %v, want boom", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := uowValue(t, db, 1), uowValue(t, db, 2); a != 10 || b != 0 {
		t.Errorf("rows = %d, %d; want 10 (committed with the outer) and 0 (the failed inner undone)", a, b)
	}

	err = uow.Do(ctx, func(ctx context.Context) error {
		if err := uow.Do(ctx, func(ctx context.Context) error {
			_, err := postgres.AmbientExec(ctx)(`UPDATE uow_t SET v = 30 WHERE id = 2`)
			return err
		}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	if b := uowValue(t, db, 2); b != 0 {
		t.Errorf("row 2 = %d: the outer failure must undo the joined inner writes", b)
	}
}

// A store called inside a unit of work never joins the transaction it cannot see: it runs on
// the pool, its read sees only what is committed, and its write commits on its own even when
// the unit of work rolls back. Only the repositories handed to fn (and a Do called with fn's
// ctx) run on the transaction.
func TestUnitOfWorkStoresNeverJoinTheTransaction(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope, other := pgtest.Merchant(t, db), pgtest.Merchant(t, db)
	uow := postgres.NewUnitOfWork(db)
	clocks := postgres.NewTestClockStore(db)
	ctx := context.Background()
	at := time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)
	boom := errors.New("boom")
	err := uow.Do(ctx, func(ctx context.Context) error {
		// Written on the transaction: not visible to the store's read on the pool.
		if _, err := postgres.AmbientExec(ctx)(`INSERT INTO test_clocks (merchant_id, environment, frozen_time) VALUES ($1, 'test', $2)`,
			scope.MerchantID, at); err != nil {
			return err
		}
		if got, err := clocks.FrozenTime(ctx, scope); err != nil || got != nil {
			t.Errorf("a store read inside the unit of work saw its uncommitted write: %v %v", got, err)
		}
		// Written by a store: committed at once, on its own.
		return errors.Join(setClock(ctx, clocks, other, at), boom)
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	if got, err := clocks.FrozenTime(ctx, scope); err != nil || got != nil {
		t.Errorf("the unit of work's write survived its rollback: %v %v", got, err)
	}
	if got, err := clocks.FrozenTime(ctx, other); err != nil || got == nil || !got.Equal(at) {
		t.Errorf("the store's own write = %v %v, want it committed on its own", got, err)
	}
}

// A panic in fn rolls the unit of work back and goes on up.
func TestUnitOfWorkPanicRollsBack(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	uowTable(t, db)
	uow := postgres.NewUnitOfWork(db)
	func() {
		defer func() {
			if p := recover(); p != "boom" {
				t.Errorf("recovered %v, want the panic of fn", p)
			}
		}()
		_ = uow.Do(context.Background(), func(ctx context.Context) error {
			if _, err := postgres.AmbientExec(ctx)(`UPDATE uow_t SET v = 5 WHERE id = 1`); err != nil {
				return err
			}
			panic("boom")
		})
	}()
	if v := uowValue(t, db, 1); v != 0 {
		t.Errorf("v = %d after a panic, want 0", v)
	}
}
