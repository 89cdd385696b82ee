package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/adapters/sandbox"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/checkout"
	"github.com/kassa-pay/kassa/modules/scheduler"
	"github.com/kassa-pay/kassa/modules/testclock"
	"github.com/kassa-pay/kassa/modules/testclock/testclocktest"
)

// An advance runs the due work up to the target before it returns, then the clock stays
// frozen there and the other environment and merchants are untouched.
func TestTestClockAdvanceRunsProcessorsAndFreezes(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	other := pgtest.Merchant(t, db)
	ctx := context.Background()
	due := scheduler.NewRegistry()
	clocks := newClocks(t, db, core.SystemClock{}, due)
	svc := checkoutOn(db, clocks)
	due.Register("sessions", svc)

	first := createSession(t, svc, scope)
	c, err := clocks.Get(ctx, scope)
	if err != nil || c.FrozenTime != nil {
		t.Fatalf("initial clock %+v %v", c, err)
	}
	day := int64(checkout.Lifetime / time.Second)
	half := day / 2
	if c, err = clocks.Advance(ctx, scope, &half, nil); err != nil {
		t.Fatal(err)
	}
	second := createSession(t, svc, scope) // created at the frozen time
	if !second.Created().Equal(*c.FrozenTime) {
		t.Fatalf("created %v, want frozen %v", second.Created(), *c.FrozenTime)
	}
	if got, _ := svc.Get(ctx, scope, first.ID()); got.Status() != checkout.StatusOpen {
		t.Fatal("expired too early")
	}
	to := first.ExpiresAt().Unix()
	if c, err = clocks.Advance(ctx, scope, nil, &to); err != nil {
		t.Fatal(err)
	}
	// Read straight from the store: no lazy expiry may have helped.
	store := postgres.NewSessionStore(db)
	if got, _ := store.Get(ctx, scope, first.ID()); got.Status() != checkout.StatusExpired {
		t.Fatalf("first session %s after advance", got.Status())
	}
	if got, _ := store.Get(ctx, scope, second.ID()); got.Status() != checkout.StatusOpen {
		t.Fatalf("second session %s after advance", got.Status())
	}
	if n := expiredEvents(t, db, scope, first.ID()); n != 1 {
		t.Fatalf("%d events", n)
	}
	now, err := clocks.Now(ctx, scope)
	if err != nil || !now.Equal(time.Unix(to, 0)) {
		t.Fatalf("now %v %v, want %v", now, err, time.Unix(to, 0))
	}
	if got, _ := clocks.Get(ctx, scope); got.FrozenTime == nil || !got.FrozenTime.Equal(time.Unix(to, 0)) {
		t.Fatalf("clock %+v", got)
	}
	// Other merchants and live keep real time.
	for _, sc := range []core.Scope{other, {MerchantID: scope.MerchantID, Env: core.EnvLive}} {
		if n, _ := clocks.Now(ctx, sc); time.Since(n) > time.Minute {
			t.Fatalf("%v runs on %v", sc, n)
		}
	}
	if _, err := clocks.Advance(ctx, core.Scope{MerchantID: scope.MerchantID, Env: core.EnvLive}, &half, nil); !errors.Is(err, core.ErrTestModeOnly) {
		t.Fatalf("live advance: %v", err)
	}
}

// Concurrent advances of one merchant to one time run it once: the first records it, the
// others join it; an advance to another time meanwhile answers clock_advancing at once.
func TestTestClockConcurrentAdvancesJoin(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	runs := &countingProcessor{}
	due := scheduler.NewRegistry()
	due.Register("counting", runs)
	clocks := newClocks(t, db, core.FixedClock{T: start}, due)
	var wg sync.WaitGroup
	sixty := int64(60)
	errs := make(chan error, 10)
	for range 10 {
		wg.Go(func() {
			c, err := clocks.Advance(context.Background(), scope, &sixty, nil)
			if err == nil && c.Status != testclock.StatusReady {
				err = fmt.Errorf("clock %+v", c)
			}
			if errors.Is(err, testclock.ErrClockAdvancing) {
				err = nil // it began after the first had finished, and met another
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	now, err := clocks.Now(context.Background(), scope)
	if err != nil || now.Before(start.Add(time.Minute)) || now.Sub(start)/time.Minute != time.Duration(runs.n.Load()) {
		t.Fatalf("now %v %v after %d runs", now, err, runs.n.Load())
	}
}

type countingProcessor struct{ n atomic.Int64 }

func (c *countingProcessor) ProcessDue(context.Context, *core.Scope, time.Time) (int, error) {
	c.n.Add(1)
	time.Sleep(20 * time.Millisecond)
	return 0, nil
}

type failingProcessor struct{ fail atomic.Bool }

func (f *failingProcessor) ProcessDue(context.Context, *core.Scope, time.Time) (int, error) {
	if f.fail.Load() {
		return 0, errors.New("processor failed")
	}
	return 0, nil
}

// A failed advance leaves the clock where it was (here: real time), recorded as advancing and
// not running; the next advance to the same time takes it over and ends it.
func TestTestClockFailedAdvanceIsResumed(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	due := scheduler.NewRegistry()
	f := &failingProcessor{}
	f.fail.Store(true)
	due.Register("failing", f)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clocks := newClocks(t, db, core.FixedClock{T: start}, due)
	sixty := int64(60)
	if _, err := clocks.Advance(context.Background(), scope, &sixty, nil); err == nil {
		t.Fatal("want the processor's error")
	}
	c, err := clocks.Get(context.Background(), scope)
	if err != nil || c.FrozenTime != nil || c.Status != testclock.StatusAdvancing {
		t.Fatalf("clock %+v %v", c, err)
	}
	f.fail.Store(false)
	if c, err = clocks.Advance(context.Background(), scope, &sixty, nil); err != nil || c.Status != testclock.StatusReady || !c.Now.Equal(start.Add(time.Minute)) {
		t.Fatalf("resumed %+v %v", c, err)
	}
}

// An advance holds no connection while the sweeps run, and no sweep reads through the pool
// while it holds a row lock: with a pool of n connections, 2n advances of different merchants,
// each with a session to expire and a SEPA payment to settle, all succeed.
func TestTestClockAdvancesShareASmallPool(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	const n = 2
	f := newDueFixture(t, db)
	scopes := make([]core.Scope, 2*n)
	for i := range scopes {
		scopes[i] = pgtest.Merchant(t, db)
		f.pay(t, scopes[i], ibanSettles)
		createSession(t, f.co, scopes[i])
	}
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	due := scheduler.NewRegistry()
	due.Register("sessions", f.co)
	due.Register("payments", f.sweeper)
	clocks := newClocks(t, db, core.FixedClock{T: payNow}, due)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	days := int64((sandbox.SettleDelay + checkout.Lifetime) / time.Second)
	var wg sync.WaitGroup
	errs := make([]error, len(scopes))
	for i, scope := range scopes {
		wg.Go(func() { _, errs[i] = clocks.Advance(ctx, scope, &days, nil) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("advance %d: %v", i, err)
		}
	}
	for _, scope := range scopes {
		if got := countRows(t, db, `SELECT count(*) FROM payments WHERE merchant_id = $1 AND status = 'succeeded'`, scope.MerchantID); got != 1 {
			t.Errorf("%s: %d settled payments", scope.MerchantID, got)
		}
		if got := countRows(t, db, `SELECT count(*) FROM checkout_sessions WHERE merchant_id = $1 AND status = 'expired'`, scope.MerchantID); got != 1 {
			t.Errorf("%s: %d expired sessions", scope.MerchantID, got)
		}
	}
}

// newClocks is the test clock service of a process of its own (a presence on db's database).
func newClocks(t *testing.T, db *sqlx.DB, clock core.Clock, due *scheduler.Registry) *testclock.Service {
	t.Helper()
	p := newPresence(t, db)
	svc, err := testclock.NewService(postgres.NewTestClockStore(db, p.ID()), clock, due, testclock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Shutdown(context.Background()) })
	return svc
}

// newPresence is a presence on db's database, closed with the test.
func newPresence(t *testing.T, db *sqlx.DB) *postgres.Presence {
	t.Helper()
	var name string
	if err := db.Get(&name, `SELECT current_database()`); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(pgtest.AdminURL())
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	p, err := postgres.NewPresence(context.Background(), u.String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// The test clock store passes the contract suite, with two processes' presences; killing one
// is closing its presence's connection (as a SIGKILL closes it).
func TestTestClockStoreContract(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	testclocktest.RunStore(t, func(t *testing.T) testclocktest.Harness {
		a, b := newPresence(t, db), newPresence(t, db)
		return testclocktest.Harness{
			A: postgres.NewTestClockStore(db, a.ID()),
			B: postgres.NewTestClockStore(db, b.ID()),
			KillB: func() {
				_ = b.Close()
				waitGone(t, db, b.ID())
			},
			Scope: func() core.Scope { return pgtest.Merchant(t, db) },
		}
	})
}

// waitGone waits until the presence lock of id is released (the backend of a closed
// connection ends asynchronously).
func waitGone(t *testing.T, db *sqlx.DB, id int32) {
	t.Helper()
	for range 200 {
		var n int
		if err := db.Get(&n, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 2 AND objid = $1::int::oid`, id); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the presence lock outlived its connection")
}
