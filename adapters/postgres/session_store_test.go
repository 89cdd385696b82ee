package postgres_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/checkout"
	"github.com/kassa-pay/kassa/modules/checkout/checkouttest"
	"github.com/kassa-pay/kassa/ports"
)

// noPrices is a PriceLookup with an empty catalog.
type noPrices struct{}

func (noPrices) LookupPrice(_ context.Context, _ core.Scope, id string) (*checkout.PriceInfo, error) {
	return nil, core.NotFound("price", "price", id)
}

// fixedClocks answers the same time for every scope.
type fixedClocks struct{ t time.Time }

func (c fixedClocks) Now(context.Context, core.Scope) (time.Time, error) { return c.t, nil }

func checkoutOn(db *sqlx.DB, clocks ports.Clocks) *checkout.Service {
	svc, _ := chargeOn(db, checkoutUoW(db), clocks, core.SystemClock{}, sandboxes(db))
	return svc
}

func sessionInput() checkout.CreateInput {
	amount := int64(2500)
	return checkout.CreateInput{Amount: &amount, Currency: "eur", CustomerName: "Grace Hopper", CustomerEmail: "grace@example.com"}
}

func createSession(t *testing.T, svc *checkout.Service, scope core.Scope) *checkout.Session {
	t.Helper()
	s, err := svc.Create(context.Background(), core.Caller{Scope: scope, Onboarded: true}, sessionInput())
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	return s
}

func expiredEvents(t *testing.T, db *sqlx.DB, scope core.Scope, sessionID string) int {
	t.Helper()
	var n int
	if err := db.Get(&n, `SELECT count(*) FROM events WHERE merchant_id = $1 AND environment = $2
		AND type = 'checkout.session.expired' AND object->>'id' = $3`, scope.MerchantID, string(scope.Env), sessionID); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestSessionStoreRoundTrip(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	store := postgres.NewSessionStore(db)
	svc := checkoutOn(db, fixedClocks{time.Date(2026, 5, 1, 8, 30, 0, 0, time.UTC)})
	str := func(s string) *string { return &s }
	amt := int64(1200)
	in := sessionInput()
	in.Reference, in.Description = str("order-42"), str("Two mugs")
	in.SuccessURL, in.CancelURL = str("https://shop.example/ok"), str("https://shop.example/cancel")
	in.LineItems = []checkout.LineItem{{Name: "Mug", Quantity: 2, Amount: &amt, ImageURL: str("https://img.example/m.png"),
		PriceID: str("price_abcdefghijklmnopqrstuvwx"), ProductID: str("prod_abcdefghijklmnopqrstuvwx")}, {Name: "Gift wrap"}}
	in.Metadata = map[string]string{"order": "42", "channel": "web"}
	created, err := svc.Create(context.Background(), core.Caller{Scope: scope, Onboarded: true}, in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := store.Get(context.Background(), scope, created.ID())
	if err != nil {
		t.Fatal(err)
	}
	if want, have := created.Snapshot(), got.Snapshot(); !reflect.DeepEqual(want, have) {
		t.Fatalf("round trip differs:\nwant %+v\nhave %+v", want, have)
	}
	var hash []byte
	if err := db.Get(&hash, `SELECT client_secret_hash FROM checkout_sessions WHERE id = $1`, created.ID()); err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256([]byte(created.ClientSecret())); !reflect.DeepEqual(hash, sum[:]) {
		t.Fatal("client_secret_hash is not the SHA-256 of the secret")
	}

	// Minimal session: optional fields absent, empty collections.
	bare := createSession(t, svc, scope)
	got, err = store.Get(context.Background(), scope, bare.ID())
	if err != nil {
		t.Fatal(err)
	}
	if got.Reference() != nil || got.SuccessURL() != nil || len(got.LineItems()) != 0 || len(got.Metadata()) != 0 {
		t.Fatalf("bare session %+v", got.Snapshot())
	}
}

// TestCheckoutStoreContract runs checkout's store suite on PostgreSQL; the module's fake passes
// the same suite (modules/checkout/store_contract_test.go).
func TestCheckoutStoreContract(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	st, uow := postgres.NewSessionStore(db), checkoutUoW(db)
	checkouttest.RunStore(t, func(*testing.T) checkouttest.Harness {
		return checkouttest.Harness{Store: st, UoW: uow, NewScope: func(t *testing.T) core.Scope { return pgtest.Merchant(t, db) },
			Merchant: checkout.BuyerMerchant{Name: "Test merchant", Onboarded: true}} // pgtest.Merchant's
	})
}

func TestSessionStoreTenantAndEnvironmentIsolation(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	other := pgtest.Merchant(t, db)
	liveScope := core.Scope{MerchantID: scope.MerchantID, Env: core.EnvLive}
	svc := checkoutOn(db, fixedClocks{time.Now().UTC().Truncate(time.Second)})
	s := createSession(t, svc, scope)
	notFound := core.NotFound("session", "", "")
	ctx := context.Background()
	for _, sc := range []core.Scope{other, liveScope} {
		if _, err := svc.Get(ctx, sc, s.ID()); !errors.Is(err, notFound) {
			t.Errorf("get under %v: %v", sc, err)
		}
		if _, err := svc.Expire(ctx, sc, s.ID()); !errors.Is(err, notFound) {
			t.Errorf("expire under %v: %v", sc, err)
		}
		page, err := svc.List(ctx, sc, core.ListQuery{}, "")
		if err != nil || len(page.Items) != 0 {
			t.Errorf("list under %v: %v %v", sc, page.Items, err)
		}
		if _, err := svc.List(ctx, sc, core.ListQuery{StartingAfter: s.ID()}, ""); !errors.Is(err, core.InvalidField("starting_after", "")) {
			t.Errorf("cursor under %v: %v", sc, err)
		}
	}
	if got, err := svc.Get(ctx, scope, s.ID()); err != nil || got.Status() != checkout.StatusOpen {
		t.Fatalf("own get: %v %v", got, err)
	}
}

func TestSessionStoreListPages(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	svc := checkoutOn(db, fixedClocks{time.Now().UTC().Truncate(time.Second)})
	ctx := context.Background()
	var ids []string // oldest first
	for range 5 {
		ids = append(ids, createSession(t, svc, scope).ID())
	}
	if _, err := svc.Expire(ctx, scope, ids[1]); err != nil {
		t.Fatal(err)
	}
	idsOf := func(p core.Page[*checkout.Session]) []string {
		var out []string
		for _, s := range p.Items {
			out = append(out, s.ID())
		}
		return out
	}
	p, err := svc.List(ctx, scope, core.ListQuery{Limit: 2}, "")
	if err != nil || !p.HasMore || !reflect.DeepEqual(idsOf(p), []string{ids[4], ids[3]}) {
		t.Fatalf("first page %v %v %v", idsOf(p), p.HasMore, err)
	}
	p, err = svc.List(ctx, scope, core.ListQuery{Limit: 2, StartingAfter: ids[3]}, "")
	if err != nil || !p.HasMore || !reflect.DeepEqual(idsOf(p), []string{ids[2], ids[1]}) {
		t.Fatalf("second page %v %v %v", idsOf(p), p.HasMore, err)
	}
	p, err = svc.List(ctx, scope, core.ListQuery{Limit: 2, StartingAfter: ids[1]}, "")
	if err != nil || p.HasMore || !reflect.DeepEqual(idsOf(p), []string{ids[0]}) {
		t.Fatalf("last page %v %v %v", idsOf(p), p.HasMore, err)
	}
	p, err = svc.List(ctx, scope, core.ListQuery{Limit: 2, EndingBefore: ids[1]}, "")
	if err != nil || !p.HasMore || !reflect.DeepEqual(idsOf(p), []string{ids[3], ids[2]}) {
		t.Fatalf("ending_before page %v %v %v", idsOf(p), p.HasMore, err)
	}
	p, err = svc.List(ctx, scope, core.ListQuery{}, "expired")
	if err != nil || !reflect.DeepEqual(idsOf(p), []string{ids[1]}) {
		t.Fatalf("expired filter %v %v", idsOf(p), err)
	}
	if _, err := svc.List(ctx, scope, core.ListQuery{StartingAfter: "cs_unknown"}, ""); !errors.Is(err, core.InvalidField("starting_after", "")) {
		t.Fatalf("unknown cursor: %v", err)
	}
	if _, err := svc.List(ctx, scope, core.ListQuery{EndingBefore: "cs_unknown"}, ""); !errors.Is(err, core.InvalidField("ending_before", "")) {
		t.Fatalf("unknown ending_before cursor: %v", err)
	}
}

// Twenty readers find the same session past its expiry: it expires once, with one event.
func TestSessionLazyExpiryConcurrentGets(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	past := time.Now().UTC().Truncate(time.Second).Add(-25 * time.Hour)
	s := createSession(t, checkoutOn(db, fixedClocks{past}), scope)
	svc := checkoutOn(db, fixedClocks{past.Add(checkout.Lifetime)}) // exactly at expires_at: due

	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Go(func() {
			got, err := svc.Get(context.Background(), scope, s.ID())
			if err == nil && got.Status() != checkout.StatusExpired {
				err = errors.New("reader saw status " + string(got.Status()))
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
	if n := expiredEvents(t, db, scope, s.ID()); n != 1 {
		t.Fatalf("%d expired events, want 1", n)
	}
	var created time.Time
	if err := db.Get(&created, `SELECT created FROM events WHERE object->>'id' = $1`, s.ID()); err != nil {
		t.Fatal(err)
	}
	if !created.Equal(s.ExpiresAt()) {
		t.Fatalf("event stamped %v, want expires_at %v", created, s.ExpiresAt())
	}
}

// The sweep and explicit expire calls race over the same due sessions: each session expires
// once, with one event, and every expire call gets session_expired (they were all due).
func TestSessionSweepRacesExpire(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	now := time.Now().UTC().Truncate(time.Second)
	creator := checkoutOn(db, fixedClocks{now.Add(-25 * time.Hour)})
	var ids []string
	for range 30 {
		ids = append(ids, createSession(t, creator, scope).ID())
	}
	svc := checkoutOn(db, fixedClocks{now})
	ctx := context.Background()

	var wg sync.WaitGroup
	var mu sync.Mutex
	swept, won := 0, 0
	var failures []error
	for range 3 {
		wg.Go(func() {
			n, err := svc.ProcessDue(ctx, nil, now)
			mu.Lock()
			defer mu.Unlock()
			swept += n
			if err != nil {
				failures = append(failures, err)
			}
		})
	}
	for _, id := range ids {
		wg.Go(func() {
			_, err := svc.Expire(ctx, scope, id)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won++
			case !errors.Is(err, checkout.ErrSessionExpired):
				failures = append(failures, err)
			}
		})
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Fatal(failures)
	}
	// Every session was past its lifetime: whoever recorded the expiry, the expire calls all
	// answer session_expired (D6), and each session has exactly one event.
	if won != 0 || swept > len(ids) {
		t.Fatalf("swept %d, expire calls that succeeded %d; want ≤ %d and 0", swept, won, len(ids))
	}
	for _, id := range ids {
		if n := expiredEvents(t, db, scope, id); n != 1 {
			t.Fatalf("session %s: %d events", id, n)
		}
	}
}

// The background sweep leaves alone the test sessions of merchants whose clock is frozen;
// those move with their clock.
func TestSessionSweepSkipsFrozenClocks(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	frozen := pgtest.Merchant(t, db)
	running := pgtest.Merchant(t, db)
	frozenLive := core.Scope{MerchantID: frozen.MerchantID, Env: core.EnvLive}
	now := time.Now().UTC().Truncate(time.Second)
	creator := checkoutOn(db, fixedClocks{now.Add(-25 * time.Hour)})
	sFrozen := createSession(t, creator, frozen)
	sRunning := createSession(t, creator, running)
	sLive := createSession(t, creator, frozenLive)
	if _, err := db.Exec(`INSERT INTO test_clocks (merchant_id, frozen_time) VALUES ($1, $2)`, frozen.MerchantID, now.Add(-30*time.Hour)); err != nil {
		t.Fatal(err)
	}
	// A clock row without a frozen time is real time.
	if _, err := db.Exec(`INSERT INTO test_clocks (merchant_id) VALUES ($1)`, running.MerchantID); err != nil {
		t.Fatal(err)
	}
	svc := checkoutOn(db, fixedClocks{now})
	ctx := context.Background()
	n, err := svc.ProcessDue(ctx, nil, now)
	if err != nil || n != 2 {
		t.Fatalf("sweep expired %d (%v), want 2", n, err)
	}
	store := postgres.NewSessionStore(db)
	for _, c := range []struct {
		scope core.Scope
		s     *checkout.Session
		want  checkout.Status
	}{{frozen, sFrozen, checkout.StatusOpen}, {running, sRunning, checkout.StatusExpired}, {frozenLive, sLive, checkout.StatusExpired}} {
		got, err := store.Get(ctx, c.scope, c.s.ID())
		if err != nil || got.Status() != c.want {
			t.Fatalf("%v: %v %v, want %s", c.scope, got.Status(), err, c.want)
		}
	}
	if n, err := svc.ProcessDue(ctx, &frozen, now); err != nil || n != 1 {
		t.Fatalf("scoped sweep %d %v", n, err)
	}
	if expiredEvents(t, db, frozen, sFrozen.ID()) != 1 {
		t.Fatal("missing event")
	}
}

// A change whose use case fails is rolled back whole: no state change, no event.
func TestSessionUpdateRollsBack(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	store := postgres.NewSessionStore(db)
	uow := checkoutUoW(db)
	ctx := context.Background()
	s := createSession(t, checkoutOn(db, fixedClocks{time.Now().UTC().Truncate(time.Second)}), scope)
	expireThen := func(then func(ctx context.Context, tx checkout.Tx, s *checkout.Session) error) error {
		return uow.Do(ctx, func(ctx context.Context, tx checkout.Tx) error {
			s, err := tx.Sessions().Lock(ctx, scope, s.ID())
			if err != nil {
				return err
			}
			if err := s.Expire(); err != nil {
				return err
			}
			if err := tx.Sessions().Save(ctx, s); err != nil {
				return err
			}
			return then(ctx, tx, s)
		})
	}
	boom := errors.New("boom")
	if err := expireThen(func(context.Context, checkout.Tx, *checkout.Session) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("got %v", err)
	}
	// An event that cannot be rendered fails the transaction after the row was updated.
	err := expireThen(func(ctx context.Context, tx checkout.Tx, s *checkout.Session) error {
		return tx.Outbox().Add(ctx, core.NewEvent(checkout.EventExpired, scope, time.Now(), unrenderable{s.ID()}))
	})
	if err == nil {
		t.Fatal("want a rendering error")
	}
	got, err := store.Get(ctx, scope, s.ID())
	if err != nil || got.Status() != checkout.StatusOpen {
		t.Fatalf("status %v %v, want open", got.Status(), err)
	}
	if n := expiredEvents(t, db, scope, s.ID()); n != 0 {
		t.Fatalf("%d events", n)
	}
}

// The session sweep's claim is a projection of checkout's Session.IsDue: for every status
// and an expiry before, at and after the horizon, storage claims exactly the sessions the
// rule finds due.
func TestSessionClaimDueProjectsTheModulesRule(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	ctx := context.Background()
	store := postgres.NewSessionStore(db)
	uow := checkoutUoW(db)
	s := createSession(t, checkoutOn(db, fixedClocks{time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)}), scope)
	until := s.ExpiresAt()
	checked := 0
	for _, status := range []checkout.Status{checkout.StatusOpen, checkout.StatusComplete, checkout.StatusExpired, checkout.StatusCanceled} {
		for _, expires := range []time.Time{until.Add(-time.Second), until.Add(-time.Microsecond), until, until.Add(time.Microsecond), until.Add(time.Hour)} {
			if _, err := db.Exec(`UPDATE checkout_sessions SET status = $2, expires_at = $3 WHERE id = $1`, s.ID(), string(status), expires); err != nil {
				t.Fatal(err)
			}
			stored, err := store.Get(ctx, scope, s.ID())
			if err != nil {
				t.Fatal(err)
			}
			claimed := 0
			if err := uow.Do(ctx, func(ctx context.Context, tx checkout.Tx) error {
				due, err := tx.Sessions().ClaimDue(ctx, &scope, until, 10)
				claimed = len(due)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if (claimed == 1) != stored.IsDue(until) {
				t.Errorf("%s expiring %s: claimed %d, rule says due %v", status, expires.Sub(until), claimed, stored.IsDue(until))
			}
			// The next due time the test clock steps by is the same projection.
			at, ok, err := store.NextDue(ctx, scope, until)
			if err != nil {
				t.Fatal(err)
			}
			if ok != stored.IsDue(until) || (ok && !at.Equal(expires)) {
				t.Errorf("%s expiring %s: next due %v %v, rule says due %v", status, expires.Sub(until), at, ok, stored.IsDue(until))
			}
			checked++
		}
	}
	if checked != 20 {
		t.Fatalf("%d states", checked)
	}
}

// Reads write nothing in bulk: listing sessions (with or without a status filter) and counting
// the open ones, with every session of the scope due, changes no row and writes no event; the
// list shows and filters the due sessions as expired. Only a Get expires its one session.
func TestSessionReadsWriteNothing(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	ctx := context.Background()
	created := time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)
	for range 5 {
		createSession(t, checkoutOn(db, fixedClocks{created}), scope)
	}
	later := checkoutOn(db, fixedClocks{created.Add(checkout.Lifetime)})
	fresh := createSession(t, later, scope)
	writes := func() int {
		return countRows(t, db, `SELECT (SELECT count(*) FROM events WHERE merchant_id = $1)
			+ (SELECT count(*) FROM checkout_sessions WHERE merchant_id = $1 AND status <> 'open')`, scope.MerchantID)
	}
	for _, status := range []string{"", "open", "expired", "complete"} {
		page, err := later.List(ctx, scope, core.ListQuery{}, status)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]int{"": 6, "open": 1, "expired": 5, "complete": 0}[status]
		if len(page.Items) != want {
			t.Fatalf("status %q: %d sessions, want %d", status, len(page.Items), want)
		}
		for _, s := range page.Items {
			if wantSt := checkout.StatusExpired; s.ID() != fresh.ID() && s.Status() != wantSt {
				t.Fatalf("due session %s shown %s", s.ID(), s.Status())
			}
		}
	}
	if n, err := later.CountOpen(ctx, scope); err != nil || n != 1 {
		t.Fatalf("open count %d %v", n, err)
	}
	if n := writes(); n != 0 {
		t.Fatalf("reads wrote %d rows", n)
	}
	page, _ := later.List(ctx, scope, core.ListQuery{}, "expired")
	if _, err := later.Get(ctx, scope, page.Items[0].ID()); err != nil {
		t.Fatal(err)
	}
	if n := writes(); n != 2 { // one session expired, with its one event
		t.Fatalf("a get wrote %d rows, want 2", n)
	}
}

// unrenderable is a domain event the outbox has no rendering for.
type unrenderable struct{ id string }

func (u unrenderable) EventObjectID() string { return u.id }
