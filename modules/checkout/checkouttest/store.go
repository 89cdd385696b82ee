// Package checkouttest is the behaviour every checkout.Store and its unit of work
// (checkout.Tx's SessionRepository) show, written once and run against each implementation:
// adapters/postgres runs it on a database, the module's tests on their in-memory fake, so
// that the fake the use-case tests rely on cannot drift from what production does. It imports
// testing and is imported by tests only.
package checkouttest

import (
	"context"
	"crypto/sha256"
	"errors"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/checkout"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/ports"
)

// Harness is one store under test, the unit of work over the same storage, and a way to get
// scopes they accept.
type Harness struct {
	Store checkout.Store
	UoW   ports.UnitOfWorkOf[checkout.Tx]
	// NewScope returns the test scope of a merchant no other test uses (Postgres: a fresh
	// merchant row).
	NewScope func(t *testing.T) core.Scope
	// Merchant is the buyer-facing part of every merchant NewScope makes, which
	// FindByClientSecretHash reads with the session.
	Merchant checkout.BuyerMerchant
}

// RunStore runs the suite; newHarness is called once per case, which runs in parallel with
// the others.
func RunStore(t *testing.T, newHarness func(t *testing.T) Harness) {
	cases := []struct {
		name string
		run  func(t *testing.T, h Harness)
	}{
		{"round trip", roundTrip},
		{"unknown ids and other scopes", unknownAndOtherScopes},
		{"save writes what changed", saveWritesChanges},
		{"failed unit of work writes nothing", failedUnitOfWork},
		{"list pages newest first", listPages},
		{"list status as of now", listStatusAsOfNow},
		{"claim due", claimDue},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, newHarness(t))
		})
	}
}

// t0 is a time every store keeps exactly (microseconds, UTC).
var t0 = time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)

// clocks is a settable clock shared by every scope.
type clocks struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clocks) Now(context.Context, core.Scope) (time.Time, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t, nil
}

func (c *clocks) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// noPrices answers every price lookup with not found: the suite creates payment sessions.
type noPrices struct{}

func (noPrices) LookupPrice(_ context.Context, _ core.Scope, id string) (*checkout.PriceInfo, error) {
	return nil, core.NotFound("price", "price", id)
}

// fixture creates sessions through the module's own use case, on the harness's store, with a
// clock the case sets.
type fixture struct {
	h     Harness
	svc   *checkout.Service
	clock *clocks
}

func newFixture(t *testing.T, h Harness) *fixture {
	t.Helper()
	c := &clocks{t: t0}
	kind, err := checkout.BindPayableKind(h.UoW)
	if err != nil {
		t.Fatal(err)
	}
	// The suite charges nothing: the charger is there because the service requires one.
	charger, err := payments.NewCharger(payments.ChargerDeps{Fees: noFees{}, Attempts: noAttempts{},
		Wall: core.SystemClock{}, Kinds: []payments.Kind{kind}})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := checkout.NewService(checkout.Deps{Store: h.Store, UoW: h.UoW, Prices: noPrices{}, Clocks: c,
		CheckoutBaseURL: "https://pay.example.test", Charger: charger, Merchants: noMerchants{h.Merchant}})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{h: h, svc: svc, clock: c}
}

type noFees struct{}

func (noFees) Compute(context.Context, payments.FeeInput) (payments.Fee, error) {
	return payments.Fee{}, errors.New("checkouttest: nothing is charged")
}

type noAttempts struct{}

func (noAttempts) Pending(context.Context, core.Scope, payments.PayableKind, string) (*payments.ChargeAttempt, error) {
	return nil, nil
}

func (noAttempts) Stale(context.Context, *core.Scope, time.Time, int) ([]*payments.ChargeAttempt, error) {
	return nil, nil
}

type noMerchants struct{ m checkout.BuyerMerchant }

func (n noMerchants) BuyerMerchant(context.Context, string) (checkout.BuyerMerchant, error) {
	return n.m, nil
}

// create opens a session of scope at `at`.
func (f *fixture) create(t *testing.T, scope core.Scope, at time.Time) *checkout.Session {
	t.Helper()
	f.clock.set(at)
	amount, ref := int64(1250), "order-42"
	s, err := f.svc.Create(context.Background(), core.Caller{Scope: scope, Onboarded: true}, checkout.CreateInput{
		Amount: &amount, Currency: "eur", CustomerName: "Ada Lovelace", CustomerEmail: "ada@example.com",
		Reference: &ref, Metadata: map[string]string{"cart": "7"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// inTx runs fn in one unit of work of the harness.
func (f *fixture) inTx(t *testing.T, fn func(ctx context.Context, tx checkout.Tx) error) error {
	t.Helper()
	return f.h.UoW.Do(context.Background(), fn)
}

func sameSession(t *testing.T, what string, got, want *checkout.Session) {
	t.Helper()
	g, w := got.Snapshot(), want.Snapshot()
	if g.ID != w.ID || g.Scope != w.Scope || g.Mode != w.Mode || g.Status != w.Status || g.Amount != w.Amount ||
		g.Currency != w.Currency || g.ClientSecret != w.ClientSecret || g.CheckoutURL != w.CheckoutURL ||
		g.EmbedURL != w.EmbedURL || g.CustomerName != w.CustomerName || g.CustomerEmail != w.CustomerEmail ||
		!g.Created.Equal(w.Created) || !g.ExpiresAt.Equal(w.ExpiresAt) ||
		!equalPtr(g.Reference, w.Reference) || !equalPtr(g.CancellationReason, w.CancellationReason) ||
		!maps.Equal(g.Metadata, w.Metadata) {
		t.Fatalf("%s: got %+v, want %+v", what, g, w)
	}
}

func equalPtr[T comparable](a, b *T) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

func ids(ss []*checkout.Session) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.ID()
	}
	return out
}

// A session inserted is read back whole by Get, by Lock in a unit of work, and by its client
// secret's hash (with no frozen clock reading: the suite's scopes have no test clock).
func roundTrip(t *testing.T, h Harness) {
	f := newFixture(t, h)
	scope := h.NewScope(t)
	s := f.create(t, scope, t0)
	ctx := context.Background()
	got, err := h.Store.Get(ctx, scope, s.ID())
	if err != nil {
		t.Fatal(err)
	}
	sameSession(t, "get", got, s)
	if got.Changes() != 0 {
		t.Fatalf("a read session reports changes %v", got.Changes())
	}
	byHash, err := h.Store.FindByClientSecretHash(ctx, sha256.Sum256([]byte(s.ClientSecret())))
	if err != nil || byHash.Frozen != nil {
		t.Fatalf("find by secret: %v, frozen %v", err, byHash.Frozen)
	}
	sameSession(t, "find by secret", byHash.Session, s)
	if byHash.Merchant != h.Merchant {
		t.Errorf("find by secret: merchant %+v, want %+v (read with the session)", byHash.Merchant, h.Merchant)
	}
	if err := f.inTx(t, func(ctx context.Context, tx checkout.Tx) error {
		locked, err := tx.Sessions().Lock(ctx, scope, s.ID())
		if err != nil {
			return err
		}
		sameSession(t, "lock", locked, s)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// An id unknown in the scope — missing, or a session of another merchant or of the other
// environment — is ErrNotFound for Get and Lock, and an unknown secret hash is ErrNotFound.
func unknownAndOtherScopes(t *testing.T, h Harness) {
	f := newFixture(t, h)
	scope := h.NewScope(t)
	other := h.NewScope(t)
	live := core.Scope{MerchantID: scope.MerchantID, Env: core.EnvLive}
	s := f.create(t, scope, t0)
	ctx := context.Background()
	for _, c := range []struct {
		scope core.Scope
		id    string
	}{{scope, core.NewID(core.PrefixSession)}, {other, s.ID()}, {live, s.ID()}} {
		if _, err := h.Store.Get(ctx, c.scope, c.id); !errors.Is(err, checkout.ErrNotFound) {
			t.Errorf("get %s under %v: %v, want ErrNotFound", c.id, c.scope, err)
		}
		err := f.inTx(t, func(ctx context.Context, tx checkout.Tx) error {
			_, err := tx.Sessions().Lock(ctx, c.scope, c.id)
			return err
		})
		if !errors.Is(err, checkout.ErrNotFound) {
			t.Errorf("lock %s under %v: %v, want ErrNotFound", c.id, c.scope, err)
		}
	}
	if _, err := h.Store.FindByClientSecretHash(ctx, sha256.Sum256([]byte(s.ClientSecret()+"x"))); !errors.Is(err, checkout.ErrNotFound) {
		t.Errorf("unknown secret: %v, want ErrNotFound", err)
	}
}

// Save writes the transition the session reports (status and cancellation reason), and a
// session saved with no change stays as it was.
func saveWritesChanges(t *testing.T, h Harness) {
	f := newFixture(t, h)
	scope := h.NewScope(t)
	s := f.create(t, scope, t0)
	untouched := f.create(t, scope, t0)
	err := f.inTx(t, func(ctx context.Context, tx checkout.Tx) error {
		locked, err := tx.Sessions().Lock(ctx, scope, s.ID())
		if err != nil {
			return err
		}
		if err := locked.Cancel(t0.Add(time.Minute)); err != nil {
			return err
		}
		if err := tx.Sessions().Save(ctx, locked); err != nil {
			return err
		}
		same, err := tx.Sessions().Lock(ctx, scope, untouched.ID())
		if err != nil {
			return err
		}
		return tx.Sessions().Save(ctx, same)
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := h.Store.Get(context.Background(), scope, s.ID())
	if err != nil {
		t.Fatal(err)
	}
	if got.Status() != checkout.StatusCanceled || got.CancellationReason() == nil {
		t.Fatalf("after cancel: %s %v", got.Status(), got.CancellationReason())
	}
	still, err := h.Store.Get(context.Background(), scope, untouched.ID())
	if err != nil {
		t.Fatal(err)
	}
	sameSession(t, "untouched", still, untouched)
}

// A unit of work whose function fails after a Save writes nothing.
func failedUnitOfWork(t *testing.T, h Harness) {
	f := newFixture(t, h)
	scope := h.NewScope(t)
	s := f.create(t, scope, t0)
	boom := errors.New("boom")
	err := f.inTx(t, func(ctx context.Context, tx checkout.Tx) error {
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
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("got %v, want the function's error", err)
	}
	got, err := h.Store.Get(context.Background(), scope, s.ID())
	if err != nil {
		t.Fatal(err)
	}
	sameSession(t, "after rollback", got, s)
}

// List pages the scope's sessions newest first: a limit with has_more, starting_after and
// ending_before, and a cursor that is no session of the scope (unknown, another merchant's,
// the other environment's) is ErrUnknownCursor.
func listPages(t *testing.T, h Harness) {
	f := newFixture(t, h)
	scope := h.NewScope(t)
	other := h.NewScope(t)
	var made []*checkout.Session
	for i := range 5 {
		made = append(made, f.create(t, scope, t0.Add(time.Duration(i)*time.Second)))
	}
	foreign := f.create(t, other, t0)
	slices.Reverse(made) // newest first
	want := ids(made)
	ctx := context.Background()
	list := func(q core.ListQuery) core.Page[*checkout.Session] {
		t.Helper()
		page, err := h.Store.List(ctx, scope, q, "", t0)
		if err != nil {
			t.Fatalf("list %+v: %v", q, err)
		}
		return page
	}
	if p := list(core.ListQuery{Limit: 10}); !slices.Equal(ids(p.Items), want) || p.HasMore {
		t.Fatalf("all: %v more=%v, want %v", ids(p.Items), p.HasMore, want)
	}
	if p := list(core.ListQuery{Limit: 2}); !slices.Equal(ids(p.Items), want[:2]) || !p.HasMore {
		t.Fatalf("first page: %v more=%v", ids(p.Items), p.HasMore)
	}
	if p := list(core.ListQuery{Limit: 2, StartingAfter: want[1]}); !slices.Equal(ids(p.Items), want[2:4]) || !p.HasMore {
		t.Fatalf("starting_after: %v more=%v", ids(p.Items), p.HasMore)
	}
	if p := list(core.ListQuery{Limit: 2, StartingAfter: want[3]}); !slices.Equal(ids(p.Items), want[4:]) || p.HasMore {
		t.Fatalf("last page: %v more=%v", ids(p.Items), p.HasMore)
	}
	if p := list(core.ListQuery{Limit: 2, EndingBefore: want[4]}); !slices.Equal(ids(p.Items), want[2:4]) || !p.HasMore {
		t.Fatalf("ending_before: %v more=%v", ids(p.Items), p.HasMore)
	}
	if p := list(core.ListQuery{Limit: 2, EndingBefore: want[1]}); !slices.Equal(ids(p.Items), want[:1]) || p.HasMore {
		t.Fatalf("ending_before the second: %v more=%v", ids(p.Items), p.HasMore)
	}
	live := core.Scope{MerchantID: scope.MerchantID, Env: core.EnvLive}
	if p, err := h.Store.List(ctx, live, core.ListQuery{Limit: 10}, "", t0); err != nil || len(p.Items) != 0 {
		t.Fatalf("live scope: %v %v", ids(p.Items), err)
	}
	for _, q := range []core.ListQuery{
		{Limit: 2, StartingAfter: core.NewID(core.PrefixSession)},
		{Limit: 2, StartingAfter: foreign.ID()},
		{Limit: 2, EndingBefore: foreign.ID()},
	} {
		if _, err := h.Store.List(ctx, scope, q, "", t0); !errors.Is(err, checkout.ErrUnknownCursor) {
			t.Errorf("cursor %+v: %v, want ErrUnknownCursor", q, err)
		}
	}
	if _, err := h.Store.List(ctx, live, core.ListQuery{Limit: 2, StartingAfter: want[0]}, "", t0); !errors.Is(err, checkout.ErrUnknownCursor) {
		t.Errorf("cursor of the test environment under live: %v, want ErrUnknownCursor", err)
	}
}

// The status filter is applied as of now: a session stored open whose lifetime has run out is
// listed as expired, not open, and any session may be the cursor of a filtered list.
func listStatusAsOfNow(t *testing.T, h Harness) {
	f := newFixture(t, h)
	scope := h.NewScope(t)
	old := f.create(t, scope, t0)
	fresh := f.create(t, scope, t0.Add(time.Hour))
	canceled := f.create(t, scope, t0.Add(2*time.Hour))
	if err := f.inTx(t, func(ctx context.Context, tx checkout.Tx) error {
		s, err := tx.Sessions().Lock(ctx, scope, canceled.ID())
		if err != nil {
			return err
		}
		if err := s.Cancel(t0.Add(2 * time.Hour)); err != nil {
			return err
		}
		return tx.Sessions().Save(ctx, s)
	}); err != nil {
		t.Fatal(err)
	}
	now := old.ExpiresAt() // old is due, fresh is not
	ctx := context.Background()
	for _, c := range []struct {
		status checkout.Status
		q      core.ListQuery
		want   []string
	}{
		{checkout.StatusOpen, core.ListQuery{Limit: 10}, []string{fresh.ID()}},
		{checkout.StatusExpired, core.ListQuery{Limit: 10}, []string{old.ID()}},
		{checkout.StatusCanceled, core.ListQuery{Limit: 10}, []string{canceled.ID()}},
		{checkout.StatusComplete, core.ListQuery{Limit: 10}, []string{}},
		{checkout.StatusExpired, core.ListQuery{Limit: 10, StartingAfter: canceled.ID()}, []string{old.ID()}},
		{checkout.StatusOpen, core.ListQuery{Limit: 10, EndingBefore: old.ID()}, []string{fresh.ID()}},
	} {
		page, err := h.Store.List(ctx, scope, c.q, c.status, now)
		if err != nil {
			t.Fatalf("%s %+v: %v", c.status, c.q, err)
		}
		if got := ids(page.Items); !slices.Equal(got, c.want) {
			t.Errorf("%s %+v: %v, want %v", c.status, c.q, got, c.want)
		}
	}
}

// ClaimDue returns, locked, the scope's open sessions whose expires_at ≤ until, oldest expiry
// first, at most limit, and nothing of another scope; it changes nothing itself.
func claimDue(t *testing.T, h Harness) {
	f := newFixture(t, h)
	scope := h.NewScope(t)
	other := h.NewScope(t)
	first := f.create(t, scope, t0)
	second := f.create(t, scope, t0.Add(time.Minute))
	notYet := f.create(t, scope, t0.Add(time.Hour))
	canceled := f.create(t, scope, t0.Add(-time.Minute))
	f.create(t, other, t0)
	if err := f.inTx(t, func(ctx context.Context, tx checkout.Tx) error {
		s, err := tx.Sessions().Lock(ctx, scope, canceled.ID())
		if err != nil {
			return err
		}
		if err := s.Cancel(t0); err != nil {
			return err
		}
		return tx.Sessions().Save(ctx, s)
	}); err != nil {
		t.Fatal(err)
	}
	until := second.ExpiresAt() // first and second are due, notYet is not
	claim := func(limit int) []string {
		t.Helper()
		var got []string
		if err := f.inTx(t, func(ctx context.Context, tx checkout.Tx) error {
			due, err := tx.Sessions().ClaimDue(ctx, &scope, until, limit)
			got = ids(due)
			for _, s := range due {
				if s.Status() != checkout.StatusOpen || !s.IsDue(until) {
					t.Errorf("claimed %s: %s, due %v", s.ID(), s.Status(), s.IsDue(until))
				}
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got, want := claim(10), []string{first.ID(), second.ID()}; !slices.Equal(got, want) {
		t.Fatalf("claim: %v, want %v (not %s)", got, want, notYet.ID())
	}
	if got, want := claim(1), []string{first.ID()}; !slices.Equal(got, want) {
		t.Fatalf("claim 1: %v, want %v", got, want)
	}
	got, err := h.Store.Get(context.Background(), scope, first.ID())
	if err != nil || got.Status() != checkout.StatusOpen {
		t.Fatalf("a claim changed the session: %v %v", got, err)
	}
}
