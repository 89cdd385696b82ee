package postgres_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

const idemTTL = 24 * time.Hour

func idemKey(scope core.Scope) ports.IdempotencyKey {
	return ports.IdempotencyKey{Scope: scope, Method: "POST", Path: "/v1/products", Key: "k-" + core.RandomBase62(8)}
}

type idemRig struct {
	db  *sqlx.DB
	s   *postgres.IdempotencyStore
	uow ports.UnitOfWorkOf[*postgres.Tx]
}

func newIdemRig(t *testing.T) *idemRig {
	db := pgtest.New(t)
	return &idemRig{db: db, s: postgres.NewIdempotencyStore(db, db),
		uow: postgres.Bind(postgres.NewUnitOfWork(db), func(tx *postgres.Tx) *postgres.Tx { return tx })}
}

// freezeIn freezes scope's clock at `at` on the unit of work's transaction: a change that
// commits with the key's record or not at all.
func freezeIn(ctx context.Context, scope core.Scope, at time.Time) error {
	_, err := postgres.AmbientExec(ctx)(`INSERT INTO test_clocks (merchant_id, environment, frozen_time) VALUES ($1, $2, $3)`,
		scope.MerchantID, string(scope.Env), at)
	return err
}

// put stores a record under k in a unit of work of its own.
func (r *idemRig) put(t *testing.T, k ports.IdempotencyKey, hash string, at time.Time) {
	t.Helper()
	err := r.uow.Do(context.Background(), func(ctx context.Context, tx *postgres.Tx) error {
		if ok, err := tx.IdempotencyKeys().Lock(ctx, k); err != nil || !ok {
			t.Fatalf("lock: %v %v", ok, err)
		}
		return tx.IdempotencyKeys().Put(ctx, k, ports.IdempotencyRecord{RequestHash: []byte(hash), Status: 201,
			ContentType: "application/json", Body: []byte(`{"id":"x"}`), CreatedAt: at})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// get reads the record under k live at now.
func (r *idemRig) get(t *testing.T, k ports.IdempotencyKey, now time.Time) *ports.IdempotencyRecord {
	t.Helper()
	var rec *ports.IdempotencyRecord
	err := r.uow.Do(context.Background(), func(ctx context.Context, tx *postgres.Tx) (err error) {
		rec, err = tx.IdempotencyKeys().Get(ctx, k, now.Add(-idemTTL))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// The store's Get reads the committed record on the pool, without any lock.
func TestIdempotencyGetReadsOnThePool(t *testing.T) {
	t.Parallel()
	r := newIdemRig(t)
	k := idemKey(pgtest.Merchant(t, r.db))
	if rec, err := r.s.Get(context.Background(), k, time.Now()); err != nil || rec != nil {
		t.Errorf("Get of an unknown key: %+v %v", rec, err)
	}
	now := time.Now().UTC()
	r.put(t, k, "h", now)
	if rec, err := r.s.Get(context.Background(), k, now.Add(-idemTTL)); err != nil || rec == nil || !rec.Completed() {
		t.Errorf("Get of a completed key: %+v %v", rec, err)
	}
}

// The lock is held exactly as long as the unit of work: another one cannot take it meanwhile,
// and can at once after the commit, and sees what was committed with it.
func TestIdempotencyLockLastsTheUnitOfWork(t *testing.T) {
	t.Parallel()
	r := newIdemRig(t)
	k := idemKey(pgtest.Merchant(t, r.db))
	now := time.Now().UTC().Truncate(time.Microsecond)
	err := r.uow.Do(context.Background(), func(ctx context.Context, tx *postgres.Tx) error {
		if ok, err := tx.IdempotencyKeys().Lock(ctx, k); err != nil || !ok {
			t.Fatalf("first lock: %v %v", ok, err)
		}
		if err := tx.IdempotencyKeys().Put(ctx, k, ports.IdempotencyRecord{RequestHash: []byte("h"), Status: 201,
			ContentType: "application/json", Body: []byte(`{"id":"prod_1"}`), CreatedAt: now}); err != nil {
			return err
		}
		// Another unit of work, on another connection, meanwhile.
		return r.uow.Do(context.WithoutCancel(context.Background()), func(ctx2 context.Context, tx *postgres.Tx) error {
			if ok, err := tx.IdempotencyKeys().Lock(ctx2, k); err != nil || ok {
				t.Errorf("second lock while the first is held: %v %v", ok, err)
			}
			if rec, err := tx.IdempotencyKeys().Get(ctx2, k, now.Add(-idemTTL)); err != nil || rec != nil {
				t.Errorf("uncommitted record visible: %+v %v", rec, err)
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	var rec *ports.IdempotencyRecord
	err = r.uow.Do(context.Background(), func(ctx context.Context, tx *postgres.Tx) (err error) {
		if ok, err := tx.IdempotencyKeys().Lock(ctx, k); err != nil || !ok {
			t.Fatalf("lock after the commit: %v %v", ok, err)
		}
		rec, err = tx.IdempotencyKeys().Get(ctx, k, now.Add(-idemTTL))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if rec == nil || rec.Status != 201 || rec.ContentType != "application/json" || !bytes.Equal(rec.Body, []byte(`{"id":"prod_1"}`)) ||
		string(rec.RequestHash) != "h" || !rec.CreatedAt.Equal(now) {
		t.Fatalf("record: %+v", rec)
	}
}

// Fifty concurrent requests with one key: one executes; each other one either found the key
// locked (409 in use) or replays what the first committed. None executes a second time.
func TestIdempotencyConcurrentRequestsExecuteOnce(t *testing.T) {
	t.Parallel()
	r := newIdemRig(t)
	k := idemKey(pgtest.Merchant(t, r.db))
	now := time.Now().UTC()
	var executed, replayed, inUse atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			err := r.uow.Do(context.Background(), func(ctx context.Context, tx *postgres.Tx) error {
				ok, err := tx.IdempotencyKeys().Lock(ctx, k)
				if err != nil {
					return err
				}
				if !ok {
					inUse.Add(1)
					return nil
				}
				rec, err := tx.IdempotencyKeys().Get(ctx, k, now.Add(-idemTTL))
				if err != nil {
					return err
				}
				if rec != nil {
					replayed.Add(1)
					return nil
				}
				executed.Add(1)
				return tx.IdempotencyKeys().Put(ctx, k, ports.IdempotencyRecord{RequestHash: []byte("h"), Status: 200, ContentType: "application/json", CreatedAt: now})
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	close(start)
	wg.Wait()
	if executed.Load() != 1 || executed.Load()+replayed.Load()+inUse.Load() != 50 {
		t.Fatalf("executed %d, replayed %d, in use %d", executed.Load(), replayed.Load(), inUse.Load())
	}
}

// A unit of work that rolls back (a 5xx, a panic, a lost connection) leaves neither the change
// nor the record, and does not keep the key: the next attempt takes it at once.
func TestIdempotencyRollbackLeavesNothing(t *testing.T) {
	t.Parallel()
	r := newIdemRig(t)
	scope := pgtest.Merchant(t, r.db)
	k := idemKey(scope)
	now := time.Now().UTC()
	clocks := postgres.NewTestClockStore(r.db)
	boom := errors.New("boom")
	err := r.uow.Do(context.Background(), func(ctx context.Context, tx *postgres.Tx) error {
		if ok, err := tx.IdempotencyKeys().Lock(ctx, k); err != nil || !ok {
			t.Fatalf("lock: %v %v", ok, err)
		}
		if err := freezeIn(ctx, scope, now); err != nil {
			return err
		}
		if err := tx.IdempotencyKeys().Put(ctx, k, ports.IdempotencyRecord{RequestHash: []byte("h"), Status: 200, ContentType: "application/json", CreatedAt: now}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if rec := r.get(t, k, now); rec != nil {
		t.Fatalf("record of a rolled-back request: %+v", rec)
	}
	if frozen, err := clocks.FrozenTime(context.Background(), scope); err != nil || frozen != nil {
		t.Fatalf("change of a rolled-back request: %v %v", frozen, err)
	}
	r.put(t, k, "h", now) // the key is free
}

// A process that dies between the change and the record (its connection ends) leaves neither,
// and its lock is gone with its connection: no lease to wait out, no claim to take over.
func TestIdempotencyCrashBetweenChangeAndRecord(t *testing.T) {
	t.Parallel()
	r := newIdemRig(t)
	scope := pgtest.Merchant(t, r.db)
	k := idemKey(scope)
	now := time.Now().UTC()
	clocks := postgres.NewTestClockStore(r.db)
	err := r.uow.Do(context.Background(), func(ctx context.Context, tx *postgres.Tx) error {
		if ok, err := tx.IdempotencyKeys().Lock(ctx, k); err != nil || !ok {
			t.Fatalf("lock: %v %v", ok, err)
		}
		if err := freezeIn(ctx, scope, now); err != nil {
			return err
		}
		// The process dies here: its backend is terminated, as when the socket closes.
		var pid int
		if err := postgres.AmbientGet(ctx, &pid, `SELECT pg_backend_pid()`); err != nil {
			return err
		}
		if _, err := r.db.Exec(`SELECT pg_terminate_backend($1)`, pid); err != nil {
			t.Fatal(err)
		}
		return tx.IdempotencyKeys().Put(ctx, k, ports.IdempotencyRecord{RequestHash: []byte("h"), Status: 200, ContentType: "application/json", CreatedAt: now})
	})
	if err == nil {
		t.Fatal("the unit of work committed on a terminated connection")
	}
	if frozen, err := clocks.FrozenTime(context.Background(), scope); err != nil || frozen != nil {
		t.Fatalf("the change survived the crash without its record: %v %v", frozen, err)
	}
	if rec := r.get(t, k, now); rec != nil {
		t.Fatalf("record: %+v", rec)
	}
	r.put(t, k, "h", now) // the retry takes the key at once
}

func TestIdempotencyExpiryReplacement(t *testing.T) {
	t.Parallel()
	r := newIdemRig(t)
	k := idemKey(pgtest.Merchant(t, r.db))
	t0 := time.Now().UTC()
	r.put(t, k, "old", t0)
	if rec := r.get(t, k, t0.Add(idemTTL-time.Second)); rec == nil {
		t.Fatal("record gone before 24 h")
	}
	if rec := r.get(t, k, t0.Add(idemTTL+time.Second)); rec != nil {
		t.Fatalf("expired record still live: %+v", rec)
	}
	r.put(t, k, "new", t0.Add(idemTTL+time.Second))
	if rec := r.get(t, k, t0.Add(idemTTL+2*time.Second)); rec == nil || string(rec.RequestHash) != "new" {
		t.Fatalf("replacement: %+v", rec)
	}
}

// Purge judges every record by the wall clock, whatever its scope's test clock says: a
// clock advanced a year ahead, or frozen in the past, purges nothing more and nothing less.
func TestIdempotencyPurgeByTheWallClock(t *testing.T) {
	t.Parallel()
	r := newIdemRig(t)
	now := time.Now().UTC()
	onReal, ahead, behind := pgtest.Merchant(t, r.db), pgtest.Merchant(t, r.db), pgtest.Merchant(t, r.db)
	clocks := postgres.NewTestClockStore(r.db)
	set := func(scope core.Scope, at time.Time) {
		if err := setClock(context.Background(), clocks, scope, at); err != nil {
			t.Fatal(err)
		}
	}
	set(ahead, now.AddDate(1, 0, 0))
	set(behind, now.Add(-72*time.Hour))
	type rec struct {
		k    ports.IdempotencyKey
		at   time.Time
		gone bool
	}
	var recs []rec
	for _, scope := range []core.Scope{onReal, ahead, behind} {
		recs = append(recs, rec{idemKey(scope), now.Add(-25 * time.Hour), true}, rec{idemKey(scope), now.Add(-time.Hour), false})
	}
	for _, x := range recs {
		r.put(t, x.k, "h", x.at)
	}
	n, err := r.s.Purge(context.Background(), now, idemTTL)
	if err != nil || n != 3 {
		t.Fatalf("purged %d, %v; want 3", n, err)
	}
	for i, x := range recs {
		var left int
		if err := r.db.Get(&left, `SELECT count(*) FROM idempotency_keys WHERE merchant_id = $1 AND key = $2`, x.k.Scope.MerchantID, x.k.Key); err != nil {
			t.Fatal(err)
		}
		if (left == 0) != x.gone {
			t.Errorf("record %d: left %d, want gone=%v", i, left, x.gone)
		}
	}
}

// 64 concurrent replays of a completed key, while another request holds the key's lock all
// along: every one reads the record (outside any unit of work, without the lock).
func TestIdempotencyReplaysReadWithoutTheLock(t *testing.T) {
	t.Parallel()
	r := newIdemRig(t)
	k := idemKey(pgtest.Merchant(t, r.db))
	now := time.Now().UTC()
	r.put(t, k, "h", now)
	held := make(chan struct{})
	done := make(chan struct{})
	go func() {
		_ = r.uow.Do(context.Background(), func(ctx context.Context, tx *postgres.Tx) error {
			if ok, err := tx.IdempotencyKeys().Lock(ctx, k); err != nil || !ok {
				t.Errorf("lock: %v %v", ok, err)
			}
			close(held)
			<-done
			return nil
		})
	}()
	<-held
	var wg sync.WaitGroup
	var replayed atomic.Int64
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec, err := r.s.Get(context.Background(), k, now.Add(-idemTTL))
			if err != nil || rec == nil || !rec.Completed() {
				t.Errorf("replay: %+v %v", rec, err)
				return
			}
			replayed.Add(1)
		}()
	}
	wg.Wait()
	close(done)
	if replayed.Load() != 64 {
		t.Fatalf("%d of 64 replayed", replayed.Load())
	}
}

// The phased shape: Hold keeps the key for one live holder; Start, Reach and Finish commit
// each at once; the key's point moved in a unit of work commits with it or not at all.
func TestIdempotencyPhases(t *testing.T) {
	t.Parallel()
	r := newIdemRig(t)
	scope := pgtest.Merchant(t, r.db)
	k := idemKey(scope)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Microsecond)
	release, ok, err := r.s.Hold(ctx, k)
	if err != nil || !ok {
		t.Fatalf("hold: %v %v", ok, err)
	}
	if _, ok, err := r.s.Hold(ctx, k); err != nil || ok {
		t.Fatalf("a second hold of a held key: %v %v", ok, err)
	}
	// The one-transaction lock of the same key is taken too.
	if err := r.uow.Do(ctx, func(ctx context.Context, tx *postgres.Tx) error {
		if ok, err := tx.IdempotencyKeys().Lock(ctx, k); err != nil || ok {
			t.Errorf("Lock of a held key: %v %v", ok, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := r.s.Start(ctx, k, []byte("h"), now); err != nil {
		t.Fatal(err)
	}
	if rec, err := r.s.Get(ctx, k, now.Add(-idemTTL)); err != nil || rec == nil || rec.Completed() || rec.RecoveryPoint != "" ||
		string(rec.RequestHash) != "h" {
		t.Fatalf("started: %+v %v", rec, err)
	}
	if err := r.s.Reach(ctx, k, "target 1"); err != nil {
		t.Fatal(err)
	}
	// A phase with a change moves the point in its unit of work: rolled back, neither stays.
	uow := r.uow
	boom := errors.New("boom")
	err = uow.Do(ctx, func(ctx context.Context, tx *postgres.Tx) error {
		if err := tx.RecoveryPoints().Reach(ctx, k, "charged"); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if rec := r.get(t, k, now); rec == nil || rec.RecoveryPoint != "target 1" {
		t.Fatalf("after the rollback: %+v", rec)
	}
	if err := uow.Do(ctx, func(ctx context.Context, tx *postgres.Tx) error {
		return tx.RecoveryPoints().Reach(ctx, k, "charged")
	}); err != nil {
		t.Fatal(err)
	}
	if rec := r.get(t, k, now); rec == nil || rec.RecoveryPoint != "charged" {
		t.Fatalf("after the commit: %+v", rec)
	}
	if err := r.s.Finish(ctx, k, ports.IdempotencyRecord{RequestHash: []byte("h"), Status: 200, ContentType: "application/json", Body: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if rec := r.get(t, k, now); rec == nil || !rec.Completed() || rec.Status != 200 || rec.RecoveryPoint != "" {
		t.Fatalf("finished: %+v", rec)
	}
	if err := r.s.Reach(ctx, k, "late"); err == nil {
		t.Fatal("a completed key's point moved")
	}
	release()
	release() // twice is harmless
	release2, ok, err := r.s.Hold(ctx, k)
	if err != nil || !ok {
		t.Fatalf("hold after the release: %v %v", ok, err)
	}
	release2()
}

// A holder whose database session ends (its process died) frees the key at once: no lease.
func TestIdempotencyHoldOfADeadOwnerIsTakenOverAtOnce(t *testing.T) {
	t.Parallel()
	r := newIdemRig(t)
	k := idemKey(pgtest.Merchant(t, r.db))
	ctx := context.Background()
	release, ok, err := r.s.Hold(ctx, k)
	if err != nil || !ok {
		t.Fatalf("hold: %v %v", ok, err)
	}
	defer release()
	// The holder's backend is ended, as when its process is killed.
	var n int
	if err := r.db.Get(&n, `SELECT count(pg_terminate_backend(l.pid)) FROM pg_locks l
		JOIN pg_database d ON d.oid = l.database AND d.datname = current_database()
		WHERE l.locktype = 'advisory' AND l.granted AND l.pid <> pg_backend_pid()`); err != nil || n != 1 {
		t.Fatalf("terminated %d holders: %v", n, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		release2, ok, err := r.s.Hold(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			release2()
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the dead holder's key was not free")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestIdempotencyScopeSeparation(t *testing.T) {
	t.Parallel()
	r := newIdemRig(t)
	scope := pgtest.Merchant(t, r.db)
	other := pgtest.Merchant(t, r.db)
	now := time.Now().UTC()
	base := idemKey(scope)
	r.put(t, base, "h", now)
	live := base
	live.Scope.Env = core.EnvLive
	otherMerchant := base
	otherMerchant.Scope = other
	otherPath := base
	otherPath.Path = "/v1/subscriptions"
	otherMethod := base
	otherMethod.Method = "PUT"
	err := r.uow.Do(context.Background(), func(ctx context.Context, tx *postgres.Tx) error {
		if ok, err := tx.IdempotencyKeys().Lock(ctx, base); err != nil || !ok {
			t.Fatalf("lock: %v %v", ok, err)
		}
		for name, k := range map[string]ports.IdempotencyKey{"env": live, "merchant": otherMerchant, "path": otherPath, "method": otherMethod} {
			if rec, err := tx.IdempotencyKeys().Get(ctx, k, now.Add(-idemTTL)); err != nil || rec != nil {
				t.Errorf("%s: key shared across scopes: %+v %v", name, rec, err)
			}
			// Nor is the lock shared: each scope's key is free while base is held.
			err := r.uow.Do(context.WithoutCancel(context.Background()), func(ctx context.Context, tx *postgres.Tx) error {
				ok, err := tx.IdempotencyKeys().Lock(ctx, k)
				if err == nil && !ok {
					t.Errorf("%s: lock shared across scopes", name)
				}
				return err
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// setClock freezes scope's test clock at `at` through the store's claim-and-finish advance.
func setClock(ctx context.Context, clocks *postgres.TestClockStore, scope core.Scope, at time.Time) error {
	if _, ok, err := clocks.ClaimAdvance(ctx, scope, "idem-test", time.Minute); err != nil || !ok {
		return fmt.Errorf("claim the clock: %v %w", ok, err)
	}
	if ok, err := clocks.FinishAdvance(ctx, scope, "idem-test", at); err != nil || !ok {
		return fmt.Errorf("set the clock: %v %w", ok, err)
	}
	return nil
}
