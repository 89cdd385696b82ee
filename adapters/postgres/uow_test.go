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
	"github.com/kassa-pay/kassa/ports"
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

// Store methods called inside a unit of work run on its transaction: with a pool of one
// connection, which the unit of work holds, a store read and a store write still complete
// (through the pool they would wait forever), and the write commits with the unit of work.
func TestUnitOfWorkStoresUseTheAmbientTransaction(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	db.SetMaxOpenConns(1)
	uow := postgres.NewUnitOfWork(db)
	keys := postgres.NewIdempotencyStore(db)
	k := ports.IdempotencyKey{Scope: scope, Method: "POST", Path: "/v1/products", Key: "ambient"}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	at := time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)
	boom := errors.New("boom")
	err := uow.Do(ctx, func(ctx context.Context) error {
		if err := keys.Put(ctx, k, ports.IdempotencyRecord{RequestHash: []byte("h"), Status: 200, ContentType: "application/json", CreatedAt: at}); err != nil {
			return err
		}
		got, err := keys.Get(ctx, k, at.Add(-time.Hour))
		if err != nil {
			return err
		}
		if got == nil || got.Status != 200 {
			t.Errorf("read inside the unit of work = %+v, want the record written", got)
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v (a timeout means a store went through the pool)", err)
	}
	var n int
	if err := db.GetContext(ctx, &n, `SELECT count(*) FROM idempotency_keys WHERE merchant_id = $1`, scope.MerchantID); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d records after the unit of work rolled back, want none", n)
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

// The charge-attempt sweep's read runs on the unit of work's transaction too: a keyed test
// clock advance runs the due work, the attempt sweep included, inside its unit of work, and
// with a pool of one connection (held by the unit of work) a read through the pool would wait
// for ever.
func TestUnitOfWorkChargeAttemptsUseTheAmbientTransaction(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	db.SetMaxOpenConns(1)
	uow := postgres.NewUnitOfWork(db)
	attempts := postgres.NewChargeAttemptStore(db)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := uow.Do(ctx, func(ctx context.Context) error {
		stale, err := attempts.Stale(ctx, &scope, time.Now(), 10)
		if err == nil && len(stale) != 0 {
			t.Errorf("%d stale attempts in a new scope", len(stale))
		}
		return err
	})
	if err != nil {
		t.Fatalf("err = %v (a timeout means the store went through the pool)", err)
	}
}
