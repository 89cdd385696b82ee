package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/identity"
)

type movingClock struct{ t time.Time }

func (c *movingClock) Now() time.Time { return c.t }

func ptrTo[T any](v T) *T { return &v }

// Dashboard sign-in on Postgres: sessions by token hash with idle and absolute expiry, sign-out,
// throttling per e-mail and address, per address and the e-mail backoff, and the same e-mail
// in two merchants (users written before owner e-mails became unique).
func TestDashboardSignIn(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	clk := &movingClock{t: time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)}
	ids := newIdentityService(t, postgres.NewIdentityStore(db), clk)
	owner := func(email, password string) string {
		t.Helper()
		m, _, _, err := ids.CreateMerchant(ctx, identity.MerchantInput{Name: "Shop", Country: "DE", Email: email, OwnerPassword: &password})
		if err != nil {
			t.Fatal(err)
		}
		return m.ID()
	}
	first := owner("Ann@Example.com", "first password")
	// A second owner with the same e-mail is refused since the operator API answers 409
	// email_in_use; users written before that rule may still share an e-mail across
	// merchants, and sign-in keeps serving them: insert such a user directly.
	if _, _, _, err := ids.CreateMerchant(ctx, identity.MerchantInput{Name: "Shop", Country: "DE", Email: "ann@example.com", OwnerPassword: ptrTo("second password")}); !errors.Is(err, identity.ErrOwnerEmailTaken) {
		t.Fatalf("second owner with the same e-mail: %v", err)
	}
	m2, _, _, err := ids.CreateMerchant(ctx, identity.MerchantInput{Name: "Shop", Country: "DE", Email: "ann@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	second := m2.ID()
	hash, err := identity.HashPassword("second password")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO users (id, merchant_id, email, password_hash, created) VALUES ($1, $2, $3, $4, $5)`,
		core.NewID(identity.PrefixUser), second, "ann@example.com", hash, clk.t); err != nil {
		t.Fatal(err)
	}
	d := newDashboard(t, postgres.NewDashboardStore(db), clk, identity.ThrottlePolicy{PerPair: 3, PerIP: 5, EmailBackoffAfter: 4, Window: 15 * time.Minute})

	// The same e-mail in two merchants: the password decides which one signs in.
	for want, pw := range map[string]string{first: "first password", second: "second password"} {
		res, err := d.SignIn(ctx, "ANN@example.com", pw, "192.0.2.1")
		if err != nil {
			t.Fatal(err)
		}
		if res.Session.MerchantID != want || res.Session.UserEmail == "" || len(res.Token) < 40 {
			t.Fatalf("signed in as %+v", res.Session)
		}
	}

	res, err := d.SignIn(ctx, "ann@example.com", "first password", "192.0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	var stored []byte
	if err := db.Get(&stored, `SELECT token_hash FROM dashboard_sessions WHERE token_hash = $1`, identity.HashSecret(res.Token)); err != nil {
		t.Fatalf("session not stored by its hash: %v", err)
	}
	if n := countRows(t, db, `SELECT count(*) FROM dashboard_sessions WHERE token_hash = $1`, []byte(res.Token)); n != 0 {
		t.Fatal("token stored in clear")
	}
	// Active use keeps the session; 12 h idle ends it.
	for range 3 {
		clk.t = clk.t.Add(11 * time.Hour)
		if _, err := d.Session(ctx, res.Token); err != nil {
			t.Fatalf("active session refused: %v", err)
		}
	}
	clk.t = clk.t.Add(12*time.Hour + time.Second)
	if _, err := d.Session(ctx, res.Token); !errors.Is(err, identity.ErrSessionRequired) {
		t.Fatalf("idle session: %v", err)
	}
	// 7 days after sign-in it ends whatever the activity.
	res, _ = d.SignIn(ctx, "ann@example.com", "first password", "192.0.2.1")
	for range 18 { // 180 h, beyond the 168 h limit
		clk.t = clk.t.Add(10 * time.Hour)
		_, err := d.Session(ctx, res.Token)
		if clk.t.Before(res.Session.ExpiresAt) && err != nil {
			t.Fatalf("session refused before its end: %v", err)
		}
		if !clk.t.Before(res.Session.ExpiresAt) && !errors.Is(err, identity.ErrSessionRequired) {
			t.Fatalf("session beyond 7 days: %v", err)
		}
	}
	// Sign-out ends it at once.
	res, _ = d.SignIn(ctx, "ann@example.com", "first password", "192.0.2.1")
	s, err := d.Session(ctx, res.Token)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.SignOut(ctx, s); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Session(ctx, res.Token); !errors.Is(err, identity.ErrSessionRequired) {
		t.Fatalf("after sign-out: %v", err)
	}

	throttled := func(err error) bool {
		var te *identity.ThrottledError
		return errors.As(err, &te) && te.RetryAfter >= time.Second && errors.Is(err, &core.Error{Type: core.TypeRateLimit, Code: "login_throttled"})
	}
	// Throttling per e-mail and address: 3 failures, then 429 from that address even with the
	// right password, until the oldest failure leaves the window; another address that has
	// not failed signs in meanwhile.
	for i := range 3 {
		if _, err := d.SignIn(ctx, "ann@example.com", "nope", "198.51.100.7"); !errors.Is(err, identity.ErrCredentialsInvalid) {
			t.Fatalf("failure %d: %v", i, err)
		}
		clk.t = clk.t.Add(time.Minute)
	}
	if _, err := d.SignIn(ctx, "ann@example.com", "first password", "198.51.100.7"); !throttled(err) {
		t.Fatalf("4th attempt: %v", err)
	}
	if _, err := d.SignIn(ctx, "ann@example.com", "first password", "198.51.100.8"); err != nil {
		t.Fatalf("an address that has not failed: %v", err)
	}
	clk.t = clk.t.Add(13 * time.Minute)
	if _, err := d.SignIn(ctx, "ann@example.com", "first password", "198.51.100.7"); err != nil {
		t.Fatalf("after the window: %v", err)
	}
	// The store counts the pair, the address and the e-mail; success cleared only its pair.
	c, err := postgres.NewDashboardStore(db).LoginFailures(ctx, "ann@example.com", "198.51.100.7", clk.t.Add(-time.Hour))
	if err != nil || c.Pair != 0 || c.IP != 0 || c.Email != 0 {
		t.Fatalf("counts after success: %+v %v", c, err)
	}
	st := postgres.NewDashboardStore(db)
	base := clk.t
	for i, f := range []struct{ email, ip string }{
		{"bob@example.com", "192.0.2.50"}, {"bob@example.com", "192.0.2.50"}, {"bob@example.com", "192.0.2.51"},
		{"carl@example.com", "192.0.2.50"},
	} {
		if err := st.RecordLoginFailure(ctx, f.email, f.ip, base.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	c, err = st.LoginFailures(ctx, "bob@example.com", "192.0.2.50", base.Add(-time.Second))
	if err != nil || c.Pair != 2 || !c.PairOldest.Equal(base) || c.IP != 3 || !c.IPOldest.Equal(base) ||
		c.Email != 3 || !c.EmailLatest.Equal(base.Add(2*time.Second)) {
		t.Fatalf("counts %+v %v", c, err)
	}
	if c, _ = st.LoginFailures(ctx, "bob@example.com", "192.0.2.50", base); c.Pair != 1 || c.IP != 2 || c.Email != 2 {
		t.Fatalf("counts after since %+v", c)
	}
	if err := st.ClearLoginFailures(ctx, "bob@example.com", "192.0.2.50"); err != nil {
		t.Fatal(err)
	}
	if c, _ = st.LoginFailures(ctx, "bob@example.com", "192.0.2.50", base.Add(-time.Second)); c.Pair != 0 || c.IP != 1 || c.Email != 1 || !c.PairOldest.IsZero() {
		t.Fatalf("counts after clear %+v", c)
	}
	// The e-mail backoff (4 failures of bob, here 1 left plus 3 more) holds an address that
	// failed for it, not a fresh one.
	for _, ip := range []string{"192.0.2.52", "192.0.2.53", "192.0.2.54"} {
		_ = st.RecordLoginFailure(ctx, "bob@example.com", ip, clk.t)
	}
	if _, err := d.SignIn(ctx, "bob@example.com", "x", "192.0.2.52"); !throttled(err) {
		t.Fatalf("e-mail backoff: %v", err)
	}
	if _, err := d.SignIn(ctx, "bob@example.com", "x", "192.0.2.99"); !errors.Is(err, identity.ErrCredentialsInvalid) {
		t.Fatalf("fresh address under the e-mail backoff: %v", err)
	}
	// Throttling per address, across e-mails (unknown ones included).
	for i := range 5 {
		if _, err := d.SignIn(ctx, "x"+string(rune('a'+i))+"@example.com", "nope", "203.0.113.9"); !errors.Is(err, identity.ErrCredentialsInvalid) {
			t.Fatalf("address failure %d: %v", i, err)
		}
	}
	if _, err := d.SignIn(ctx, "ann@example.com", "first password", "203.0.113.9"); !throttled(err) {
		t.Fatalf("address throttle: %v", err)
	}
	if _, err := d.SignIn(ctx, "ann@example.com", "first password", "203.0.113.10"); err != nil {
		t.Fatalf("another address: %v", err)
	}

	// The purge keeps live sessions and recent failures only.
	clk.t = clk.t.Add(30 * 24 * time.Hour)
	if _, err := d.Purge(ctx); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, db, `SELECT count(*) FROM dashboard_sessions`) + countRows(t, db, `SELECT count(*) FROM login_failures`); n != 0 {
		t.Fatalf("%d rows left after purge", n)
	}
}

// TouchSession writes only to a session of the merchant it names.
func TestDashboardTouchSessionFiltersByMerchant(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	clk := &movingClock{t: time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)}
	ids := newIdentityService(t, postgres.NewIdentityStore(db), clk)
	pw := "the password"
	m, _, _, err := ids.CreateMerchant(ctx, identity.MerchantInput{Name: "Shop", Country: "DE", Email: "touch@example.com", OwnerPassword: &pw})
	if err != nil {
		t.Fatal(err)
	}
	other, _, _, err := ids.CreateMerchant(ctx, identity.MerchantInput{Name: "Other", Country: "DE", Email: "other@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	store := postgres.NewDashboardStore(db)
	d := newDashboard(t, store, clk, identity.ThrottlePolicy{PerPair: 3, PerIP: 5, EmailBackoffAfter: 4, Window: 15 * time.Minute})
	res, err := d.SignIn(ctx, "touch@example.com", pw, "192.0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	hash := identity.HashSecret(res.Token)
	later := clk.t.Add(time.Hour)
	lastSeen := func() time.Time {
		var at time.Time
		if err := db.Get(&at, `SELECT last_seen FROM dashboard_sessions WHERE token_hash = $1`, hash); err != nil {
			t.Fatal(err)
		}
		return at.UTC()
	}
	before := lastSeen()
	if err := store.TouchSession(ctx, other.ID(), hash, later); err != nil {
		t.Fatal(err)
	}
	if got := lastSeen(); !got.Equal(before) {
		t.Fatalf("another merchant's write moved last_seen to %v", got)
	}
	if err := store.TouchSession(ctx, m.ID(), hash, later); err != nil {
		t.Fatal(err)
	}
	if got := lastSeen(); !got.Equal(later) {
		t.Fatalf("own merchant: last_seen %v, want %v", got, later)
	}
}
