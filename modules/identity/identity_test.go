package identity

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
)

type stepClock struct{ t time.Time }

func (c *stepClock) Now() time.Time { return c.t }

func newTestService() (*Service, *memStore, *stepClock) {
	st := newMemStore()
	clk := &stepClock{t: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	s, err := NewService(st, clk)
	if err != nil {
		panic(err)
	}
	return s, st, clk
}

func ptr[T any](v T) *T { return &v }

func wantCode(t *testing.T, err error, typ core.ErrorType, code, param string) {
	t.Helper()
	var ce *core.Error
	if !errors.As(err, &ce) {
		t.Fatalf("want %s/%s, got %v", typ, code, err)
	}
	if ce.Type != typ || ce.Code != code || ce.Param != param {
		t.Fatalf("want %s/%s (%s), got %s/%s (%s): %s", typ, code, param, ce.Type, ce.Code, ce.Param, ce.Message)
	}
}

func TestCreateMerchantValidation(t *testing.T) {
	ok := MerchantInput{Name: "Acme", Country: "DE", Email: "owner@acme.example"}
	cases := []struct {
		name  string
		edit  func(*MerchantInput)
		param string
	}{
		{"empty name", func(m *MerchantInput) { m.Name = "  " }, "name"},
		{"long name", func(m *MerchantInput) { m.Name = strings.Repeat("x", 201) }, "name"},
		{"lower country", func(m *MerchantInput) { m.Country = "de" }, "country"},
		{"three-letter country", func(m *MerchantInput) { m.Country = "DEU" }, "country"},
		{"empty country", func(m *MerchantInput) { m.Country = "" }, "country"},
		{"no at", func(m *MerchantInput) { m.Email = "owner.acme.example" }, "email"},
		{"display name", func(m *MerchantInput) { m.Email = "Owner <owner@acme.example>" }, "email"},
		{"no domain dot", func(m *MerchantInput) { m.Email = "owner@acme" }, "email"},
		{"empty email", func(m *MerchantInput) { m.Email = "" }, "email"},
		{"short password", func(m *MerchantInput) { m.OwnerPassword = ptr("123456789") }, "owner_password"},
		{"long password", func(m *MerchantInput) { m.OwnerPassword = ptr(strings.Repeat("p", 201)) }, "owner_password"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			svc, _, _ := newTestService()
			in := ok
			c.edit(&in)
			_, _, _, err := svc.CreateMerchant(context.Background(), in)
			wantCode(t, err, core.TypeInvalidRequest, c.param+"_invalid", c.param)
		})
	}
	t.Run("limits inclusive", func(t *testing.T) {
		svc, _, _ := newTestService()
		in := ok
		in.Name = strings.Repeat("é", 200)
		in.OwnerPassword = ptr(strings.Repeat("p", 10))
		if _, _, _, err := svc.CreateMerchant(context.Background(), in); err != nil {
			t.Fatal(err)
		}
		in.OwnerPassword = ptr(strings.Repeat("p", 200))
		in.Email = "second-owner@acme.example"
		if _, _, _, err := svc.CreateMerchant(context.Background(), in); err != nil {
			t.Fatal(err)
		}
	})
}

func TestCreateMerchantOwnerEmailTaken(t *testing.T) {
	svc, _, _ := newTestService()
	in := MerchantInput{Name: "Acme", Country: "DE", Email: "owner@acme.example", OwnerPassword: ptr("correct horse")}
	if _, _, _, err := svc.CreateMerchant(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	in.Email = "Owner@ACME.example"
	_, _, _, err := svc.CreateMerchant(context.Background(), in)
	wantCode(t, err, core.TypeResourceConflict, "email_in_use", "email")
	// Without an owner the e-mail is only the merchant's contact address: no user, no conflict.
	in.OwnerPassword = nil
	if _, _, _, err := svc.CreateMerchant(context.Background(), in); err != nil {
		t.Fatal(err)
	}
}

func TestCreateMerchantIssuesKeysAndOwner(t *testing.T) {
	svc, st, clk := newTestService()
	m, test, live, err := svc.CreateMerchant(context.Background(), MerchantInput{
		Name: " Acme ", Country: "DE", Email: "owner@acme.example", OwnerPassword: ptr("correct horse battery"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if !core.HasIDShape(m.ID(), core.PrefixMerchant) || m.Name() != "Acme" || m.Onboarded() || !m.Created().Equal(clk.t) {
		t.Fatalf("merchant %+v", m)
	}
	if !strings.HasPrefix(test, "sk_test_") || !strings.HasPrefix(live, "sk_live_") || len(test) != len("sk_test_")+40 {
		t.Fatalf("secrets %q %q", test, live)
	}
	keys, err := svc.ListKeys(context.Background(), m.ID())
	if err != nil || len(keys) != 2 {
		t.Fatalf("keys %v %v", keys, err)
	}
	byEnv := map[core.Environment]*APIKey{}
	for _, k := range keys {
		byEnv[k.Env()] = k
	}
	if byEnv[core.EnvTest].Name() != DefaultTestKeyName || byEnv[core.EnvLive].Name() != DefaultLiveKeyName {
		t.Fatalf("names %+v", byEnv)
	}
	if byEnv[core.EnvTest].Display() != "sk_test_…"+test[len(test)-4:] {
		t.Fatalf("display %q", byEnv[core.EnvTest].Display())
	}
	for _, k := range st.keys {
		if strings.Contains(string(k.SecretHash), test) || len(k.SecretHash) != 32 {
			t.Fatal("secret stored in clear or hash not SHA-256")
		}
	}
	if len(st.users) != 1 || !core.HasIDShape(st.users[0].ID, PrefixUser) || st.users[0].Email != "owner@acme.example" {
		t.Fatalf("users %+v", st.users)
	}
	if ok, err := VerifyPassword(st.users[0].PasswordHash, "correct horse battery"); !ok || err != nil {
		t.Fatalf("owner password does not verify: %v", err)
	}
}

func TestNoOwnerWithoutPassword(t *testing.T) {
	svc, st, _ := newTestService()
	if _, _, _, err := svc.CreateMerchant(context.Background(), MerchantInput{Name: "A", Country: "FR", Email: "a@b.fr"}); err != nil {
		t.Fatal(err)
	}
	if len(st.users) != 0 {
		t.Fatal("user created without password")
	}
}

func TestMerchantNotFound(t *testing.T) {
	svc, _, _ := newTestService()
	_, err := svc.GetMerchant(context.Background(), "mer_nope")
	wantCode(t, err, core.TypeNotFound, "merchant_not_found", "id")
	_, err = svc.CompleteOnboarding(context.Background(), "mer_nope")
	wantCode(t, err, core.TypeNotFound, "merchant_not_found", "id")
	_, _, err = svc.CreateKey(context.Background(), "mer_nope", "k", core.EnvTest)
	wantCode(t, err, core.TypeNotFound, "merchant_not_found", "id")
	_, err = svc.ListKeys(context.Background(), "mer_nope")
	wantCode(t, err, core.TypeNotFound, "merchant_not_found", "id")
	_, err = svc.RevokeKey(context.Background(), "key_nope")
	wantCode(t, err, core.TypeNotFound, "api_key_not_found", "id")
}

func TestCompleteOnboarding(t *testing.T) {
	svc, _, _ := newTestService()
	m, _, live, _ := svc.CreateMerchant(context.Background(), MerchantInput{Name: "A", Country: "FR", Email: "a@b.fr"})
	c, err := svc.Authenticate(context.Background(), "Bearer "+live)
	if err != nil || c.Onboarded {
		t.Fatalf("%+v %v", c, err)
	}
	m2, err := svc.CompleteOnboarding(context.Background(), m.ID())
	if err != nil || !m2.Onboarded() {
		t.Fatalf("%+v %v", m2, err)
	}
	c, err = svc.Authenticate(context.Background(), "Bearer "+live)
	if err != nil || !c.Onboarded || c.Scope != (core.Scope{MerchantID: m.ID(), Env: core.EnvLive}) {
		t.Fatalf("%+v %v", c, err)
	}
}

func TestCreateKeyValidation(t *testing.T) {
	svc, _, _ := newTestService()
	m, _, _, _ := svc.CreateMerchant(context.Background(), MerchantInput{Name: "A", Country: "FR", Email: "a@b.fr"})
	_, _, err := svc.CreateKey(context.Background(), m.ID(), "", core.EnvTest)
	wantCode(t, err, core.TypeInvalidRequest, "name_invalid", "name")
	_, _, err = svc.CreateKey(context.Background(), m.ID(), strings.Repeat("k", 101), core.EnvTest)
	wantCode(t, err, core.TypeInvalidRequest, "name_invalid", "name")
	_, _, err = svc.CreateKey(context.Background(), m.ID(), "k", "prod")
	wantCode(t, err, core.TypeInvalidRequest, "mode_invalid", "mode")
	_, _, err = svc.CreateKey(context.Background(), m.ID(), "k", "")
	wantCode(t, err, core.TypeInvalidRequest, "mode_invalid", "mode")
	k, secret, err := svc.CreateKey(context.Background(), m.ID(), strings.Repeat("k", 100), core.EnvLive)
	if err != nil || !core.HasIDShape(k.ID(), core.PrefixAPIKey) || !strings.HasPrefix(secret, "sk_live_") || k.Env() != core.EnvLive {
		t.Fatalf("%+v %q %v", k, secret, err)
	}
}

func TestAuthenticateFailures(t *testing.T) {
	svc, st, _ := newTestService()
	_, test, _, _ := svc.CreateMerchant(context.Background(), MerchantInput{Name: "A", Country: "FR", Email: "a@b.fr"})
	unknown := "sk_test_" + core.NewSecretPart()
	cases := []struct {
		header string
		want   *core.Error
	}{
		{"", ErrNoAPIKey},
		{"   ", ErrNoAPIKey},
		{"Bearer", ErrNoAPIKey},
		{"Bearer   ", ErrNoAPIKey},
		{"Basic " + test, ErrNotBearer},
		{test, ErrNotBearer},
		{"Bearer pk_test_" + core.NewSecretPart(), ErrMalformedAPIKey},
		{"Bearer sk_test_short", ErrMalformedAPIKey},
		{"Bearer " + test + "x", ErrMalformedAPIKey},
		{"Bearer " + test[:len(test)-1] + "-", ErrMalformedAPIKey},
		{"Bearer sk_prod_" + core.NewSecretPart(), ErrMalformedAPIKey},
		{"Bearer " + unknown, ErrUnknownAPIKey},
	}
	for _, c := range cases {
		_, err := svc.Authenticate(context.Background(), c.header)
		var ce *core.Error
		if !errors.As(err, &ce) || ce.Message != c.want.Message || ce.Type != core.TypeAuthentication || ce.Code != "invalid_api_key" {
			t.Errorf("header %q: want %q, got %v", c.header, c.want.Message, err)
		}
	}
	// A key whose stored mode disagrees with its prefix.
	wrong := "sk_live_" + core.NewSecretPart()
	for id, k := range st.keys {
		if k.Env == core.EnvTest {
			k.SecretHash = HashSecret(wrong)
			st.keys[id] = k
		}
	}
	_, err := svc.Authenticate(context.Background(), "Bearer "+wrong)
	if err != ErrAPIKeyModeClash {
		t.Fatalf("mode clash: %v", err)
	}
}

func TestAuthenticateAndRevoke(t *testing.T) {
	svc, st, clk := newTestService()
	m, test, _, _ := svc.CreateMerchant(context.Background(), MerchantInput{Name: "A", Country: "FR", Email: "a@b.fr", Onboarded: true})
	c, err := svc.Authenticate(context.Background(), "bearer  "+test+" ")
	if err != nil {
		t.Fatal(err)
	}
	if c.Scope != (core.Scope{MerchantID: m.ID(), Env: core.EnvTest}) || !c.Onboarded || !core.HasIDShape(c.KeyID, core.PrefixAPIKey) {
		t.Fatalf("caller %+v", c)
	}
	// last_used is written once per minute, not per request.
	for range 5 {
		if _, err := svc.Authenticate(context.Background(), "Bearer "+test); err != nil {
			t.Fatal(err)
		}
	}
	if st.touches != 1 {
		t.Fatalf("touches = %d, want 1", st.touches)
	}
	clk.t = clk.t.Add(61 * time.Second)
	_, _ = svc.Authenticate(context.Background(), "Bearer "+test)
	if st.touches != 2 {
		t.Fatalf("touches = %d, want 2", st.touches)
	}

	first, err := svc.RevokeKey(context.Background(), c.KeyID)
	if err != nil || first.RevokedAt() == nil || !first.RevokedAt().Equal(clk.t) {
		t.Fatalf("%+v %v", first, err)
	}
	clk.t = clk.t.Add(time.Hour)
	again, err := svc.RevokeKey(context.Background(), c.KeyID)
	if err != nil || !again.RevokedAt().Equal(*first.RevokedAt()) {
		t.Fatalf("second revoke moved revoked_at: %+v %v", again, err)
	}
	if _, err := svc.Authenticate(context.Background(), "Bearer "+test); err != ErrRevokedAPIKey {
		t.Fatalf("revoked key: %v", err)
	}
}

func TestOperatorTokenValid(t *testing.T) {
	cases := []struct {
		header, token string
		want          bool
	}{
		{"Bearer s3cret", "s3cret", true},
		{"bearer s3cret", "s3cret", true},
		{"Bearer s3cret", "", false},
		{"Bearer ", "", false},
		{"", "", false},
		{"Bearer s3cre", "s3cret", false},
		{"Bearer s3cretX", "s3cret", false},
		{"Basic s3cret", "s3cret", false},
		{"s3cret", "s3cret", false},
	}
	for _, c := range cases {
		if got := OperatorTokenValid(c.header, c.token); got != c.want {
			t.Errorf("OperatorTokenValid(%q, %q) = %v", c.header, c.token, got)
		}
	}
}

func TestPasswordHash(t *testing.T) {
	h, err := HashPassword("correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Fatalf("encoding %q", h)
	}
	h2, _ := HashPassword("correct horse battery")
	if h == h2 {
		t.Fatal("salt not random")
	}
	if ok, err := VerifyPassword(h, "correct horse battery"); !ok || err != nil {
		t.Fatalf("verify: %v %v", ok, err)
	}
	if ok, err := VerifyPassword(h, "correct horse batterY"); ok || err != nil {
		t.Fatalf("wrong password: %v %v", ok, err)
	}
	// Parameters are read from the string, so old hashes keep verifying after a cost change.
	cheap, _ := hashPasswordWith("pw", PasswordParams{Memory: 64, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32})
	if ok, err := VerifyPassword(cheap, "pw"); !ok || err != nil {
		t.Fatalf("cheap: %v %v", ok, err)
	}
	for _, bad := range []string{"", "plain", "$argon2i$v=19$m=64,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA",
		"$argon2id$v=18$m=64,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA",
		"$argon2id$v=19$m=99999999,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA",
		"$argon2id$v=19$m=64,t=1,p=1$!!$aGFzaGhhc2hoYXNoaGFzaA"} {
		if _, err := VerifyPassword(bad, "pw"); !errors.Is(err, ErrBadPasswordHash) {
			t.Errorf("VerifyPassword(%q): %v", bad, err)
		}
	}
}

func TestValidEmail(t *testing.T) {
	for _, s := range []string{"a@b.co", "first.last+tag@sub.example.org"} {
		if !core.ValidEmail(s) {
			t.Errorf("%q should be valid", s)
		}
	}
	for _, s := range []string{"", "a", "a@", "@b.co", "a@b", "a b@c.de", "a@b..co", "a@.b.co", "<a@b.co>", "a@b.co."} {
		if core.ValidEmail(s) {
			t.Errorf("%q should be invalid", s)
		}
	}
}

func mustDashboard(t *testing.T, st DashboardStore, clk core.Clock, p ThrottlePolicy) *Dashboard {
	t.Helper()
	d, err := NewDashboard(st, clk, p)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestConstructorsRefuseNil(t *testing.T) {
	clk := &stepClock{}
	if _, err := NewService(nil, clk); err == nil {
		t.Fatal("NewService: a nil store must be refused")
	}
	if _, err := NewService(newMemStore(), nil); err == nil {
		t.Fatal("NewService: a nil clock must be refused")
	}
	if _, err := NewDashboard(nil, clk, ThrottlePolicy{}); err == nil {
		t.Fatal("NewDashboard: a nil store must be refused")
	}
	if _, err := NewDashboard(newMemDashboard(), nil, ThrottlePolicy{}); err == nil {
		t.Fatal("NewDashboard: a nil clock must be refused")
	}
}
