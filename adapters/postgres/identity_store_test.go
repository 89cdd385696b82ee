package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/identity"
	"github.com/kassa-pay/kassa/modules/identity/identitytest"
)

type movableClock struct{ t time.Time }

func (c *movableClock) Now() time.Time { return c.t }

func identityFixture(t *testing.T) (*identity.Service, *postgres.IdentityStore, *movableClock) {
	t.Helper()
	db := pgtest.New(t)
	st := postgres.NewIdentityStore(db)
	clk := &movableClock{t: time.Now().UTC().Truncate(time.Second)}
	return newIdentityService(t, st, clk), st, clk
}

func newIdentityService(t testing.TB, st identity.Store, clk core.Clock) *identity.Service {
	t.Helper()
	svc, err := identity.NewService(st, clk)
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func newDashboard(t testing.TB, st identity.DashboardStore, clk core.Clock, p identity.ThrottlePolicy) *identity.Dashboard {
	t.Helper()
	d, err := identity.NewDashboard(st, clk, p)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestIdentityStoreContract runs the identity store suite on PostgreSQL; the module's fake
// passes the same suite (modules/identity/store_contract_test.go).
func TestIdentityStoreContract(t *testing.T) {
	t.Parallel()
	st := postgres.NewIdentityStore(pgtest.New(t))
	identitytest.RunStore(t, func(*testing.T) identity.Store { return st })
}

func authCode(t *testing.T, err error, want error) {
	t.Helper()
	if err != want {
		t.Fatalf("want %v, got %v", want, err)
	}
}

func TestIdentityStoreCreateAndAuthenticate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, st, clk := identityFixture(t)
	pw := "correct horse battery"
	m, test, live, err := svc.CreateMerchant(ctx, identity.MerchantInput{Name: "Acme", Country: "DE", Email: "Owner@Acme.example", OwnerPassword: &pw})
	if err != nil {
		t.Fatal(err)
	}
	got, err := svc.GetMerchant(ctx, m.ID())
	if err != nil || *got != *m {
		t.Fatalf("get: %+v %v (want %+v)", got, err, m)
	}
	u, err := st.UserByEmail(ctx, m.ID(), "owner@acme.EXAMPLE")
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := u.PasswordMatches(pw); !ok {
		t.Fatal("owner password does not verify")
	}

	for env, secret := range map[core.Environment]string{core.EnvTest: test, core.EnvLive: live} {
		c, err := svc.Authenticate(ctx, "Bearer "+secret)
		if err != nil {
			t.Fatal(err)
		}
		if c.Scope != (core.Scope{MerchantID: m.ID(), Env: env}) || c.Onboarded {
			t.Fatalf("caller %+v", c)
		}
	}
	keys, err := svc.ListKeys(ctx, m.ID())
	if err != nil || len(keys) != 2 {
		t.Fatalf("keys %v %v", keys, err)
	}
	for _, k := range keys {
		if k.LastUsed() == nil || !k.LastUsed().Equal(clk.t) {
			t.Fatalf("last_used not recorded: %+v", k)
		}
	}
	// Within the minute last_used stays; after it, it moves.
	clk.t = clk.t.Add(30 * time.Second)
	_, _ = svc.Authenticate(ctx, "Bearer "+test)
	keys, _ = svc.ListKeys(ctx, m.ID())
	for _, k := range keys {
		if k.LastUsed().Equal(clk.t) {
			t.Fatal("last_used written twice within a minute")
		}
	}
	clk.t = clk.t.Add(61 * time.Second)
	_, _ = svc.Authenticate(ctx, "Bearer "+test)
	keys, _ = svc.ListKeys(ctx, m.ID())
	for _, k := range keys {
		if k.Env() == core.EnvTest && !k.LastUsed().Equal(clk.t) {
			t.Fatalf("last_used not refreshed: %+v", k)
		}
	}

	if _, err := svc.CompleteOnboarding(ctx, m.ID()); err != nil {
		t.Fatal(err)
	}
	if c, _ := svc.Authenticate(ctx, "Bearer "+live); !c.Onboarded {
		t.Fatal("onboarding not visible to the next request")
	}
	_, err = svc.GetMerchant(ctx, "mer_000000000000000000000000")
	if !errors.Is(err, identity.ErrMerchantNotFound) {
		t.Fatalf("unknown merchant: %v", err)
	}
	_, _, err = svc.CreateKey(ctx, "mer_000000000000000000000000", "k", core.EnvTest)
	if !errors.Is(err, identity.ErrMerchantNotFound) {
		t.Fatalf("key for unknown merchant: %v", err)
	}
}

func TestIdentityStoreCreateMerchantIsAtomic(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	st := postgres.NewIdentityStore(db)
	now := time.Now().UTC()
	m := identity.RehydrateMerchant(identity.MerchantSnapshot{ID: core.NewID(core.PrefixMerchant), Name: "A", Country: "DE", Email: "a@b.de", Created: now})
	ks := identity.APIKeySnapshot{ID: core.NewID(core.PrefixAPIKey), MerchantID: m.ID(), Name: "k", Display: "sk_test_…abcd", Env: core.EnvTest, SecretHash: []byte("same-hash"), Created: now}
	k := identity.RehydrateAPIKey(ks)
	ks.ID = core.NewID(core.PrefixAPIKey) // same hash: violates the unique index
	k2 := identity.RehydrateAPIKey(ks)
	if err := st.CreateMerchant(ctx, m, []*identity.APIKey{k, k2}, nil); err == nil {
		t.Fatal("expected failure")
	}
	if _, err := st.GetMerchant(ctx, m.ID()); !errors.Is(err, identity.ErrNotFound) {
		t.Fatalf("merchant survived a failed create: %v", err)
	}
}

func TestIdentityStoreRevoke(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, _, clk := identityFixture(t)
	m, test, _, err := svc.CreateMerchant(ctx, identity.MerchantInput{Name: "Acme", Country: "DE", Email: "o@acme.example", Onboarded: true})
	if err != nil {
		t.Fatal(err)
	}
	k, secret, err := svc.CreateKey(ctx, m.ID(), "Rotation", core.EnvTest)
	if err != nil {
		t.Fatal(err)
	}
	c, err := svc.Authenticate(ctx, "Bearer "+secret)
	if err != nil || c.KeyID != k.ID() {
		t.Fatalf("%+v %v", c, err)
	}
	first, err := svc.RevokeKey(ctx, k.ID())
	if err != nil || first.RevokedAt() == nil {
		t.Fatalf("%+v %v", first, err)
	}
	authCode(t, func() error { _, err := svc.Authenticate(ctx, "Bearer "+secret); return err }(), identity.ErrRevokedAPIKey)
	clk.t = clk.t.Add(time.Hour)
	again, err := svc.RevokeKey(ctx, k.ID())
	if err != nil || !again.RevokedAt().Equal(*first.RevokedAt()) {
		t.Fatalf("second revoke: %+v %v", again, err)
	}
	// The other key of the merchant is untouched.
	if _, err := svc.Authenticate(ctx, "Bearer "+test); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.RevokeKey(ctx, "key_000000000000000000000000"); !errors.Is(err, identity.ErrAPIKeyNotFound) {
		t.Fatalf("unknown key: %v", err)
	}
}

func TestIdentityStoreModeMismatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	svc := newIdentityService(t, postgres.NewIdentityStore(db), core.SystemClock{})
	m, _, _, err := svc.CreateMerchant(ctx, identity.MerchantInput{Name: "Acme", Country: "DE", Email: "o@acme.example"})
	if err != nil {
		t.Fatal(err)
	}
	secret := "sk_live_" + core.NewSecretPart()
	if _, err := db.Exec(`INSERT INTO api_keys (id, merchant_id, environment, name, secret_hash, display)
		VALUES ($1, $2, 'test', 'odd', $3, 'sk_live_…odd')`, core.NewID(core.PrefixAPIKey), m.ID(), identity.HashSecret(secret)); err != nil {
		t.Fatal(err)
	}
	_, err = svc.Authenticate(ctx, "Bearer "+secret)
	authCode(t, err, identity.ErrAPIKeyModeClash)
	_, err = svc.Authenticate(ctx, "Bearer sk_live_"+core.NewSecretPart())
	authCode(t, err, identity.ErrUnknownAPIKey)
}

func TestIdentityStoreTenantSeparation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, _, _ := identityFixture(t)
	a, aTest, _, err := svc.CreateMerchant(ctx, identity.MerchantInput{Name: "A", Country: "DE", Email: "a@a.example"})
	if err != nil {
		t.Fatal(err)
	}
	b, bTest, _, err := svc.CreateMerchant(ctx, identity.MerchantInput{Name: "B", Country: "FR", Email: "b@b.example"})
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := svc.Authenticate(ctx, "Bearer "+aTest)
	cb, _ := svc.Authenticate(ctx, "Bearer "+bTest)
	if ca.Scope.MerchantID != a.ID() || cb.Scope.MerchantID != b.ID() {
		t.Fatalf("%+v %+v", ca, cb)
	}
	ka, _ := svc.ListKeys(ctx, a.ID())
	kb, _ := svc.ListKeys(ctx, b.ID())
	for _, k := range ka {
		if k.MerchantID() != a.ID() {
			t.Fatal("foreign key listed")
		}
	}
	for _, k := range kb {
		if k.MerchantID() != b.ID() {
			t.Fatal("foreign key listed")
		}
	}
	// Revoking A's key leaves B alone.
	if _, err := svc.RevokeKey(ctx, ca.KeyID); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Authenticate(ctx, "Bearer "+bTest); err != nil {
		t.Fatal(err)
	}
	// An owner e-mail belongs to one dashboard user: a second merchant's owner with the same
	// e-mail (any case) is refused and nothing of that merchant is written; as a mere contact
	// address (no owner) the e-mail may repeat.
	pw := "0123456789"
	if _, _, _, err := svc.CreateMerchant(ctx, identity.MerchantInput{Name: "C", Country: "DE", Email: "a@a.example", OwnerPassword: &pw}); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := svc.CreateMerchant(ctx, identity.MerchantInput{Name: "D", Country: "DE", Email: "A@a.example", OwnerPassword: &pw}); !errors.Is(err, identity.ErrOwnerEmailTaken) {
		t.Fatalf("second owner with the same e-mail: %v, want ErrOwnerEmailTaken", err)
	}
	if _, _, _, err := svc.CreateMerchant(ctx, identity.MerchantInput{Name: "E", Country: "DE", Email: "A@a.example"}); err != nil {
		t.Fatal(err)
	}
}

// Keys made within one second (the resolution of created) are still listed newest first.
func TestIdentityStoreListsKeysNewestFirstWithinASecond(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, _, _ := identityFixture(t) // the fixture's clock stands still
	m, _, _, err := svc.CreateMerchant(ctx, identity.MerchantInput{Name: "Acme", Country: "DE", Email: "o@acme.example", Onboarded: true})
	if err != nil {
		t.Fatal(err)
	}
	var made []string
	for i := range 8 {
		k, _, err := svc.CreateKey(ctx, m.ID(), fmt.Sprintf("key %d", i), core.EnvTest)
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, k.ID())
	}
	list, err := svc.ListKeys(ctx, m.ID())
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range made {
		if got := list[len(made)-1-i].ID(); got != id {
			t.Fatalf("position %d: %s, want %s (newest first)", len(made)-1-i, got, id)
		}
	}
}

// The dashboard's key use cases see one merchant environment: a key of the other environment
// is neither listed nor revocable there.
func TestIdentityStoreScopeKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, _, _ := identityFixture(t)
	m, _, live, err := svc.CreateMerchant(ctx, identity.MerchantInput{Name: "Acme", Country: "DE", Email: "o@acme.example", Onboarded: true})
	if err != nil {
		t.Fatal(err)
	}
	c, err := svc.Authenticate(ctx, "Bearer "+live)
	if err != nil {
		t.Fatal(err)
	}
	test := core.Scope{MerchantID: m.ID(), Env: core.EnvTest}
	keys, err := svc.ListScopeKeys(ctx, test)
	if err != nil || len(keys) != 1 || keys[0].Env() != core.EnvTest {
		t.Fatalf("test keys: %+v %v", keys, err)
	}
	if _, err := svc.RevokeScopeKey(ctx, test, c.KeyID); !errors.Is(err, identity.ErrAPIKeyNotFound) {
		t.Fatalf("revoking the live key under test: %v", err)
	}
	if _, err := svc.Authenticate(ctx, "Bearer "+live); err != nil {
		t.Fatalf("the live key was revoked: %v", err)
	}
	k, err := svc.RevokeScopeKey(ctx, core.Scope{MerchantID: m.ID(), Env: core.EnvLive}, c.KeyID)
	if err != nil || k.RevokedAt() == nil {
		t.Fatalf("revoke under live: %+v %v", k, err)
	}
}

// TouchKey writes only to the key of the scope it is given: a foreign merchant's or the other
// environment's scope changes nothing, even with the right key id.
func TestIdentityStoreTouchKeyFiltersByScope(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, st, _ := identityFixture(t)
	a, _, _, err := svc.CreateMerchant(ctx, identity.MerchantInput{Name: "A", Country: "DE", Email: "a@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	b, _, _, err := svc.CreateMerchant(ctx, identity.MerchantInput{Name: "B", Country: "DE", Email: "b@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := st.ListScopeKeys(ctx, core.Scope{MerchantID: a.ID(), Env: core.EnvTest})
	if err != nil || len(keys) == 0 {
		t.Fatalf("keys: %v %v", keys, err)
	}
	key := keys[0]
	lastUsed := func() *time.Time {
		t.Helper()
		ks, err := st.ListScopeKeys(ctx, core.Scope{MerchantID: a.ID(), Env: core.EnvTest})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range ks {
			if k.ID() == key.ID() {
				return k.LastUsed()
			}
		}
		t.Fatal("key gone")
		return nil
	}
	if lu := lastUsed(); lu != nil {
		t.Fatalf("fresh key already used at %v", lu)
	}
	at := time.Now().UTC().Truncate(time.Second)
	for _, foreign := range []core.Scope{{MerchantID: b.ID(), Env: core.EnvTest}, {MerchantID: a.ID(), Env: core.EnvLive}} {
		if err := st.TouchKey(ctx, foreign, key.ID(), at); err != nil {
			t.Fatal(err)
		}
		if lu := lastUsed(); lu != nil {
			t.Fatalf("a write under %+v changed another scope's key: last_used %v", foreign, lu)
		}
	}
	if err := st.TouchKey(ctx, core.Scope{MerchantID: a.ID(), Env: core.EnvTest}, key.ID(), at); err != nil {
		t.Fatal(err)
	}
	if lu := lastUsed(); lu == nil || !lu.Equal(at) {
		t.Fatalf("own scope: last_used %v, want %v", lu, at)
	}
}
