package postgres_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/adapters/sandbox"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/checkout"
	"github.com/kassa-pay/kassa/modules/scheduler"
	"github.com/kassa-pay/kassa/modules/testclock"
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
	clocks := testclock.NewService(postgres.NewTestClockStore(db), core.SystemClock{}, due)
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

// Concurrent advances of one merchant run one after the other.
func TestTestClockAdvancesSerialise(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	clocks := testclock.NewService(postgres.NewTestClockStore(db), core.FixedClock{T: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
		scheduler.NewRegistry())
	var wg sync.WaitGroup
	sixty := int64(60)
	errs := make(chan error, 10)
	for range 10 {
		wg.Go(func() {
			_, err := clocks.Advance(context.Background(), scope, &sixty, nil)
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
	if want := time.Date(2026, 1, 1, 0, 10, 0, 0, time.UTC); err != nil || !now.Equal(want) {
		t.Fatalf("now %v %v, want %v", now, err, want)
	}
}

type failingProcessor struct{}

func (failingProcessor) ProcessDue(context.Context, *core.Scope, time.Time) (int, error) {
	return 0, errors.New("processor failed")
}

// A failed advance leaves the clock where it was (here: not created, so real time).
func TestTestClockAdvanceRollsBack(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	due := scheduler.NewRegistry()
	due.Register("failing", failingProcessor{})
	clocks := testclock.NewService(postgres.NewTestClockStore(db), core.SystemClock{}, due)
	sixty := int64(60)
	if _, err := clocks.Advance(context.Background(), scope, &sixty, nil); err == nil {
		t.Fatal("want the processor's error")
	}
	var rows int
	if err := db.Get(&rows, `SELECT count(*) FROM test_clocks WHERE merchant_id = $1`, scope.MerchantID); err != nil || rows != 0 {
		t.Fatalf("clock rows %d %v", rows, err)
	}
	if c, err := clocks.Get(context.Background(), scope); err != nil || c.FrozenTime != nil {
		t.Fatalf("clock %+v %v", c, err)
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
	clocks := testclock.NewService(postgres.NewTestClockStore(db), core.FixedClock{T: payNow}, due)
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
