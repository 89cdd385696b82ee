// Package identitytest is the behaviour every identity.Store shows, written once and run
// against each implementation (river's driver-suite habit): adapters/postgres runs it on a
// database, the module's tests on their in-memory fake. It is imported by tests only.
package identitytest

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/identity"
)

// RunStore runs the suite; newStore is called once per case, and cases run in parallel. Every
// case makes merchants and e-mails of its own, so one store may serve them all.
func RunStore(t *testing.T, newStore func(t *testing.T) identity.Store) {
	cases := []struct {
		name string
		run  func(t *testing.T, st identity.Store)
	}{
		{"create and read a merchant", createAndRead},
		{"a taken owner e-mail writes nothing", ownerEmailTaken},
		{"unknown ids", unknownIDs},
		{"keys newest first, per scope", listKeys},
		{"revoke keeps the first time", revoke},
		{"touch once a minute, in its scope only", touch},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, newStore(t))
		})
	}
}

// now is a time every store keeps exactly (microseconds, UTC).
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

func must[T any](v T, err error) func(t *testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func email() string { return strings.ToLower(core.RandomBase62(12)) + "@example.com" }

func merchant(at time.Time) *identity.Merchant {
	return merchantWith(email(), at)
}

func merchantWith(email string, at time.Time) *identity.Merchant {
	return identity.RehydrateMerchant(identity.MerchantSnapshot{ID: core.NewID(core.PrefixMerchant), Name: "Acme", Country: "DE", Email: email, Created: at})
}

func key(merchantID string, env core.Environment, at time.Time) *identity.APIKey {
	return identity.RehydrateAPIKey(identity.APIKeySnapshot{
		ID: core.NewID(core.PrefixAPIKey), MerchantID: merchantID, Name: "k",
		Display: "sk_test_…abcd", Env: env, SecretHash: identity.HashSecret(core.NewSecretPart()), Created: at,
	})
}

func user(merchantID, email, hash string, at time.Time) *identity.User {
	return identity.RehydrateUser(identity.UserSnapshot{ID: core.NewID(identity.PrefixUser), MerchantID: merchantID, Email: email, PasswordHash: hash, Created: at})
}

// create makes a merchant with one test key and returns both.
func create(t *testing.T, st identity.Store) (*identity.Merchant, *identity.APIKey) {
	t.Helper()
	at := now()
	m := merchant(at)
	k := key(m.ID(), core.EnvTest, at)
	if err := st.CreateMerchant(context.Background(), m, []*identity.APIKey{k}, nil); err != nil {
		t.Fatal(err)
	}
	return m, k
}

func createAndRead(t *testing.T, st identity.Store) {
	ctx := context.Background()
	at := now()
	m := merchant(at)
	test, live := key(m.ID(), core.EnvTest, at), key(m.ID(), core.EnvLive, at)
	owner := user(m.ID(), m.Email(), "$argon2id$x", at)
	if err := st.CreateMerchant(ctx, m, []*identity.APIKey{test, live}, owner); err != nil {
		t.Fatal(err)
	}
	if got := must(st.GetMerchant(ctx, m.ID()))(t); !reflect.DeepEqual(got.Snapshot(), m.Snapshot()) {
		t.Fatalf("merchant:\n got %+v\nwant %+v", got.Snapshot(), m.Snapshot())
	}
	for _, k := range []*identity.APIKey{test, live} {
		rec := must(st.KeyByHash(ctx, k.SecretHash()))(t)
		if !reflect.DeepEqual(rec.Key.Snapshot(), k.Snapshot()) || rec.Onboarded || rec.TestClock != nil {
			t.Fatalf("auth record:\n got %+v %+v\nwant %+v", rec, rec.Key.Snapshot(), k.Snapshot())
		}
	}
	on := must(st.SetOnboarded(ctx, m.ID()))(t)
	again := must(st.SetOnboarded(ctx, m.ID()))(t)
	if !on.Onboarded() || !reflect.DeepEqual(on.Snapshot(), again.Snapshot()) {
		t.Fatalf("onboarded: %+v then %+v", on.Snapshot(), again.Snapshot())
	}
	if rec := must(st.KeyByHash(ctx, test.SecretHash()))(t); !rec.Onboarded {
		t.Fatal("the key's merchant reads as not onboarded")
	}
	extra := key(m.ID(), core.EnvTest, now())
	if err := st.CreateKey(ctx, extra); err != nil {
		t.Fatal(err)
	}
	if rec := must(st.KeyByHash(ctx, extra.SecretHash()))(t); rec.Key.ID() != extra.ID() {
		t.Fatalf("new key: %+v", rec)
	}
}

func ownerEmailTaken(t *testing.T, st identity.Store) {
	ctx := context.Background()
	first := merchant(now())
	owner := user(first.ID(), first.Email(), "h", now())
	if err := st.CreateMerchant(ctx, first, nil, owner); err != nil {
		t.Fatal(err)
	}
	second := merchant(now())
	k := key(second.ID(), core.EnvTest, now())
	again := user(second.ID(), strings.ToUpper(first.Email()), "h", now())
	if err := st.CreateMerchant(ctx, second, []*identity.APIKey{k}, again); !errors.Is(err, identity.ErrEmailInUse) {
		t.Fatalf("want ErrEmailInUse, got %v", err)
	}
	if _, err := st.GetMerchant(ctx, second.ID()); !errors.Is(err, identity.ErrNotFound) {
		t.Fatalf("the refused merchant was written: %v", err)
	}
	if _, err := st.KeyByHash(ctx, k.SecretHash()); !errors.Is(err, identity.ErrNotFound) {
		t.Fatalf("the refused merchant's key was written: %v", err)
	}
	// Without an owner the e-mail is only the merchant's contact: no conflict.
	third := merchantWith(first.Email(), now())
	if err := st.CreateMerchant(ctx, third, nil, nil); err != nil {
		t.Fatal(err)
	}
}

func unknownIDs(t *testing.T, st identity.Store) {
	ctx := context.Background()
	m, k := create(t, st)
	scope := core.Scope{MerchantID: m.ID(), Env: core.EnvTest}
	for name, err := range map[string]error{
		"GetMerchant":    second(st.GetMerchant(ctx, "mer_unknown")),
		"SetOnboarded":   second(st.SetOnboarded(ctx, "mer_unknown")),
		"CreateKey":      st.CreateKey(ctx, key("mer_unknown", core.EnvTest, now())),
		"RevokeKey":      second(st.RevokeKey(ctx, "key_unknown", now())),
		"RevokeScopeKey": second(st.RevokeScopeKey(ctx, scope, "key_unknown", now())),
		"KeyByHash":      second(st.KeyByHash(ctx, identity.HashSecret("sk_test_unknown"))),
	} {
		if !errors.Is(err, identity.ErrNotFound) {
			t.Errorf("%s: want ErrNotFound, got %v", name, err)
		}
	}
	if keys := must(st.ListKeys(ctx, "mer_unknown"))(t); len(keys) != 0 {
		t.Fatalf("keys of an unknown merchant: %v", keys)
	}
	if err := st.TouchKey(ctx, scope, "key_unknown", now()); err != nil {
		t.Fatalf("touching an unknown key: %v", err)
	}
	_ = k
}

func second[T any](_ T, err error) error { return err }

func keyIDs(keys []*identity.APIKey) []string {
	out := []string{}
	for _, k := range keys {
		out = append(out, k.ID())
	}
	return out
}

func listKeys(t *testing.T, st identity.Store) {
	ctx := context.Background()
	m, k0 := create(t, st)
	at := k0.Created()
	// Keys made within the same instant list newest (last made) first.
	k1, k2 := key(m.ID(), core.EnvLive, at), key(m.ID(), core.EnvTest, at)
	for _, k := range []*identity.APIKey{k1, k2} {
		if err := st.CreateKey(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	later := key(m.ID(), core.EnvLive, at.Add(time.Second))
	if err := st.CreateKey(ctx, later); err != nil {
		t.Fatal(err)
	}
	other, _ := create(t, st)
	_ = other
	if got := keyIDs(must(st.ListKeys(ctx, m.ID()))(t)); !slices.Equal(got, []string{later.ID(), k2.ID(), k1.ID(), k0.ID()}) {
		t.Fatalf("ListKeys: %v", got)
	}
	test := core.Scope{MerchantID: m.ID(), Env: core.EnvTest}
	live := core.Scope{MerchantID: m.ID(), Env: core.EnvLive}
	if got := keyIDs(must(st.ListScopeKeys(ctx, test))(t)); !slices.Equal(got, []string{k2.ID(), k0.ID()}) {
		t.Fatalf("ListScopeKeys(test): %v", got)
	}
	if got := keyIDs(must(st.ListScopeKeys(ctx, live))(t)); !slices.Equal(got, []string{later.ID(), k1.ID()}) {
		t.Fatalf("ListScopeKeys(live): %v", got)
	}
}

func revoke(t *testing.T, st identity.Store) {
	ctx := context.Background()
	m, k := create(t, st)
	first := now()
	got := must(st.RevokeKey(ctx, k.ID(), first))(t)
	if got.RevokedAt() == nil || !got.RevokedAt().Equal(first) {
		t.Fatalf("revoked_at %v, want %v", got.RevokedAt(), first)
	}
	got = must(st.RevokeKey(ctx, k.ID(), first.Add(time.Hour)))(t)
	if !got.RevokedAt().Equal(first) {
		t.Fatalf("a second revoke moved revoked_at to %v", got.RevokedAt())
	}
	if rec := must(st.KeyByHash(ctx, k.SecretHash()))(t); rec.Key.RevokedAt() == nil || !rec.Key.RevokedAt().Equal(first) {
		t.Fatalf("auth record after revoke: %+v", rec.Key)
	}
	// RevokeScopeKey touches only a key of its scope.
	k2 := key(m.ID(), core.EnvTest, now())
	if err := st.CreateKey(ctx, k2); err != nil {
		t.Fatal(err)
	}
	other, _ := create(t, st)
	for _, sc := range []core.Scope{{MerchantID: m.ID(), Env: core.EnvLive}, {MerchantID: other.ID(), Env: core.EnvTest}} {
		if _, err := st.RevokeScopeKey(ctx, sc, k2.ID(), now()); !errors.Is(err, identity.ErrNotFound) {
			t.Fatalf("RevokeScopeKey from %+v: %v", sc, err)
		}
	}
	if rec := must(st.KeyByHash(ctx, k2.SecretHash()))(t); rec.Key.RevokedAt() != nil {
		t.Fatal("a key was revoked from another scope")
	}
	if got := must(st.RevokeScopeKey(ctx, core.Scope{MerchantID: m.ID(), Env: core.EnvTest}, k2.ID(), first))(t); got.RevokedAt() == nil {
		t.Fatal("RevokeScopeKey in its scope did not revoke")
	}
}

func touch(t *testing.T, st identity.Store) {
	ctx := context.Background()
	m, k := create(t, st)
	scope := core.Scope{MerchantID: m.ID(), Env: core.EnvTest}
	lastUsed := func() *time.Time {
		t.Helper()
		return must(st.KeyByHash(ctx, k.SecretHash()))(t).Key.LastUsed()
	}
	t0 := now()
	other, _ := create(t, st)
	for _, sc := range []core.Scope{{MerchantID: m.ID(), Env: core.EnvLive}, {MerchantID: other.ID(), Env: core.EnvTest}} {
		if err := st.TouchKey(ctx, sc, k.ID(), t0); err != nil {
			t.Fatal(err)
		}
	}
	if lastUsed() != nil {
		t.Fatal("a key was touched from another scope")
	}
	for _, c := range []struct {
		at, want time.Time
	}{
		{t0, t0},                       // unset: written
		{t0.Add(30 * time.Second), t0}, // within a minute: kept
		{t0.Add(61 * time.Second), t0.Add(61 * time.Second)}, // later: written
	} {
		if err := st.TouchKey(ctx, scope, k.ID(), c.at); err != nil {
			t.Fatal(err)
		}
		if got := lastUsed(); got == nil || !got.Equal(c.want) {
			t.Fatalf("touch at %v: last_used %v, want %v", c.at, got, c.want)
		}
	}
}
