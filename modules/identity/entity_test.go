package identity

import (
	"strings"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
)

func TestNewMerchantTrimsAndStartsNotOnboarded(t *testing.T) {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	m, err := NewMerchant(MerchantInput{Name: " Acme ", Country: "DE", Email: " o@acme.example "}, now)
	if err != nil {
		t.Fatal(err)
	}
	if !core.HasIDShape(m.ID(), core.PrefixMerchant) || m.Name() != "Acme" || m.Email() != "o@acme.example" ||
		m.Onboarded() || !m.Created().Equal(now) {
		t.Fatalf("merchant %+v", m.Snapshot())
	}
	m.Onboard()
	m.Onboard()
	if !m.Onboarded() || !RehydrateMerchant(m.Snapshot()).Onboarded() {
		t.Fatal("Onboard did not stick")
	}
}

func TestNewUser(t *testing.T) {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	u, err := NewUser("mer_1", " a@b.example ", "long enough password", now)
	if err != nil {
		t.Fatal(err)
	}
	if !core.HasIDShape(u.ID(), PrefixUser) || u.MerchantID() != "mer_1" || u.Email() != "a@b.example" || !u.Created().Equal(now) {
		t.Fatalf("user %+v", u.Snapshot())
	}
	if strings.Contains(u.Snapshot().PasswordHash, "long enough password") {
		t.Fatal("the password is kept in clear")
	}
	if ok, err := u.PasswordMatches("long enough password"); !ok || err != nil {
		t.Fatalf("right password: %v %v", ok, err)
	}
	if ok, _ := u.PasswordMatches("wrong password!"); ok {
		t.Fatal("a wrong password matches")
	}
	_, err = NewUser("mer_1", "a@b.example", "short", now)
	wantCode(t, err, core.TypeInvalidRequest, "password_invalid", "password")
	_, err = NewUser("mer_1", "not an e-mail", "long enough password", now)
	wantCode(t, err, core.TypeInvalidRequest, "email_invalid", "email")
}

func TestAPIKeyTransitions(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	k, secret, err := NewAPIKey("mer_1", " k ", core.EnvLive, t0)
	if err != nil {
		t.Fatal(err)
	}
	if k.Name() != "k" || k.Env() != core.EnvLive || k.Revoked() || k.LastUsed() != nil ||
		string(k.SecretHash()) != string(HashSecret(secret)) || k.Display() != displayOf(secret) ||
		k.Scope() != (core.Scope{MerchantID: "mer_1", Env: core.EnvLive}) {
		t.Fatalf("key %+v", k.Snapshot())
	}
	_, _, err = NewAPIKey("mer_1", "k", "prod", t0)
	wantCode(t, err, core.TypeInvalidRequest, "mode_invalid", "mode")

	// Getters hand out copies.
	k.SecretHash()[0] ^= 0xff
	if string(k.SecretHash()) != string(HashSecret(secret)) {
		t.Fatal("SecretHash exposes the key's own slice")
	}

	if !k.TouchDue(t0) {
		t.Fatal("an unused key is not due a touch")
	}
	for _, c := range []struct {
		at, want time.Time
		due      bool // TouchDue at c.at, before the touch
	}{
		{t0, t0, true},
		{t0.Add(30 * time.Second), t0, false},
		{t0.Add(61 * time.Second), t0.Add(61 * time.Second), true},
	} {
		if got := k.TouchDue(c.at); got != c.due {
			t.Fatalf("TouchDue(%v) = %v", c.at, got)
		}
		k.Touch(c.at)
		if got := k.LastUsed(); got == nil || !got.Equal(c.want) {
			t.Fatalf("touch at %v: last_used %v, want %v", c.at, got, c.want)
		}
	}
	*k.LastUsed() = time.Time{}
	if k.LastUsed().IsZero() {
		t.Fatal("LastUsed exposes the key's own pointer")
	}

	k.Revoke(t0)
	k.Revoke(t0.Add(time.Hour))
	if !k.Revoked() || !k.RevokedAt().Equal(t0) {
		t.Fatalf("revoked_at %v, want the first revoke's %v", k.RevokedAt(), t0)
	}
	if r := RehydrateAPIKey(k.Snapshot()); !r.RevokedAt().Equal(t0) || !r.LastUsed().Equal(*k.LastUsed()) {
		t.Fatal("a snapshot round trip loses state")
	}
}
