package identity

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// memDashboard is an in-memory DashboardStore for the rule tests.
type memDashboard struct {
	mu       sync.Mutex
	users    []*User
	sessions map[string]*DashboardSession
	failures []memFailure
}

type memFailure struct {
	email, ip string
	at        time.Time
}

func newMemDashboard(users ...*User) *memDashboard {
	return &memDashboard{users: users, sessions: map[string]*DashboardSession{}}
}

func (m *memDashboard) UsersByEmail(_ context.Context, email string, limit int) ([]*User, error) {
	var out []*User
	for _, u := range m.users {
		if strings.EqualFold(u.Email(), email) && len(out) < limit {
			out = append(out, u)
		}
	}
	return out, nil
}

func (m *memDashboard) CreateSession(_ context.Context, r *SessionRecord) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sessions[string(r.TokenHash)] = &DashboardSession{SessionRecord: *r, UserEmail: "u@example.com"}
	return nil
}

func (m *memDashboard) SessionByHash(_ context.Context, hash []byte) (*DashboardSession, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[string(hash)]
	if !ok {
		return nil, ErrNotFound
	}
	c := *s
	return &c, nil
}

func (m *memDashboard) TouchSession(_ context.Context, merchantID string, hash []byte, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.sessions[string(hash)]; ok && s.MerchantID == merchantID {
		s.LastSeen = at
	}
	return nil
}

func (m *memDashboard) DeleteSession(_ context.Context, hash []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.sessions, string(hash))
	return nil
}

func (m *memDashboard) RecordLoginFailure(_ context.Context, email, ip string, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.failures = append(m.failures, memFailure{email, ip, at})
	return nil
}

func (m *memDashboard) LoginFailures(_ context.Context, email, ip string, since time.Time) (LoginFailureCounts, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var c LoginFailureCounts
	for _, f := range m.failures {
		if !f.at.After(since) {
			continue
		}
		if f.email == email && f.ip == ip {
			if c.Pair == 0 || f.at.Before(c.PairOldest) {
				c.PairOldest = f.at
			}
			c.Pair++
		}
		if f.ip == ip {
			if c.IP == 0 || f.at.Before(c.IPOldest) {
				c.IPOldest = f.at
			}
			c.IP++
		}
		if f.email == email {
			if f.at.After(c.EmailLatest) {
				c.EmailLatest = f.at
			}
			c.Email++
		}
	}
	return c, nil
}

func (m *memDashboard) ClearLoginFailures(_ context.Context, email, ip string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	kept := m.failures[:0]
	for _, f := range m.failures {
		if f.email != email || f.ip != ip {
			kept = append(kept, f)
		}
	}
	m.failures = kept
	return nil
}

func (m *memDashboard) PurgeDashboard(context.Context, time.Time, time.Time, time.Time) (int64, error) {
	return 0, nil
}

func cheapUser(t *testing.T, email, password string) *User {
	t.Helper()
	h, err := hashPasswordWith(password, PasswordParams{Memory: 64, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32})
	if err != nil {
		t.Fatal(err)
	}
	return RehydrateUser(UserSnapshot{ID: core.NewID(PrefixUser), MerchantID: core.NewID(core.PrefixMerchant), Email: email, PasswordHash: h})
}

func TestSignInRules(t *testing.T) {
	clk := &stepClock{t: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	u := cheapUser(t, "Owner@Shop.example", "right password")
	st := newMemDashboard(u)
	d := mustDashboard(t, st, clk, ThrottlePolicy{PerPair: 2, PerIP: 10, EmailBackoffAfter: 20, Window: 10 * time.Minute})
	ctx := context.Background()

	_, err := d.SignIn(ctx, " ", "x", "ip")
	wantCode(t, err, core.TypeInvalidRequest, core.CodeParameterMissing, "email")
	_, err = d.SignIn(ctx, "a@b.example", "", "ip")
	wantCode(t, err, core.TypeInvalidRequest, core.CodeParameterMissing, "password")

	res, err := d.SignIn(ctx, "  owner@SHOP.example ", "right password", "ip")
	if err != nil {
		t.Fatal(err)
	}
	if res.Session.UserID != u.ID() || res.Session.MerchantID != u.MerchantID() || len(res.Token) < 43 ||
		res.Session.CSRFToken == "" || res.Session.CSRFToken == res.Token || !res.Session.ExpiresAt.Equal(clk.t.Add(SessionMaxAge)) {
		t.Fatalf("session %+v", res.Session)
	}
	if _, ok := st.sessions[string(HashSecret(res.Token))]; !ok {
		t.Fatal("the session is not kept under the token's hash")
	}
	s, err := d.Session(ctx, res.Token)
	if err != nil || !s.CSRFValid(res.Session.CSRFToken) || s.CSRFValid("") || s.CSRFValid(res.Session.CSRFToken+"x") {
		t.Fatalf("session check: %v", err)
	}
	if s.Caller(core.EnvLive).Scope != (core.Scope{MerchantID: u.MerchantID(), Env: core.EnvLive}) {
		t.Fatal("caller scope")
	}
	for _, bad := range []string{"", "nope", strings.Repeat("x", 201)} {
		if _, err := d.Session(ctx, bad); !errors.Is(err, ErrSessionRequired) {
			t.Fatalf("token %q: %v", bad, err)
		}
	}

	// Unknown e-mail and wrong password: one answer, each recorded.
	_, errUnknown := d.SignIn(ctx, "nobody@shop.example", "right password", "ip")
	_, errWrong := d.SignIn(ctx, "owner@shop.example", "wrong", "ip")
	if errUnknown != ErrCredentialsInvalid || errWrong != ErrCredentialsInvalid {
		t.Fatalf("%v / %v", errUnknown, errWrong)
	}
	clk.t = clk.t.Add(4 * time.Minute)
	_, _ = d.SignIn(ctx, "owner@shop.example", "wrong again", "ip")
	// Two failures of the pair: throttled until the first is 10 minutes old (6 min from now).
	_, err = d.SignIn(ctx, "owner@shop.example", "right password", "ip")
	var te *ThrottledError
	if !errors.As(err, &te) || te.RetryAfter != 6*time.Minute {
		t.Fatalf("throttle: %v", err)
	}
	wantCode(t, err, core.TypeRateLimit, "login_throttled", "")
	clk.t = clk.t.Add(6*time.Minute + time.Second)
	if _, err := d.SignIn(ctx, "owner@shop.example", "right password", "ip"); err != nil {
		t.Fatalf("after the window: %v", err)
	}
	// Success clears the pair's failures; the address keeps those of other e-mails.
	if c, _ := st.LoginFailures(ctx, "owner@shop.example", "ip", time.Time{}); c.Pair != 0 || c.Email != 0 || c.IP == 0 {
		t.Fatalf("failures after success: %+v", c)
	}

	// Idle expiry deletes the session.
	clk.t = clk.t.Add(SessionIdle + time.Hour)
	if _, err := d.Session(ctx, res.Token); !errors.Is(err, ErrSessionRequired) {
		t.Fatalf("idle: %v", err)
	}
	if _, ok := st.sessions[string(HashSecret(res.Token))]; ok {
		t.Fatal("an ended session was kept")
	}
}
