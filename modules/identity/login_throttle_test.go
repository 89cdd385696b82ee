package identity

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestThrottlePolicyRefusedUntil(t *testing.T) {
	p := DefaultThrottle
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	for _, tc := range []struct {
		name string
		c    LoginFailureCounts
		want time.Time // zero: allowed
	}{
		{"nothing failed", LoginFailureCounts{}, time.Time{}},
		{"pair under its limit", LoginFailureCounts{Pair: 4, PairOldest: ago(time.Minute), IP: 4, IPOldest: ago(time.Minute), Email: 4, EmailLatest: ago(time.Second)}, time.Time{}},
		{"pair at its limit", LoginFailureCounts{Pair: 5, PairOldest: ago(5 * time.Minute), IP: 5, IPOldest: ago(5 * time.Minute), Email: 5, EmailLatest: ago(time.Second)}, now.Add(10 * time.Minute)},
		{"address at its limit, other e-mails", LoginFailureCounts{IP: 30, IPOldest: ago(14 * time.Minute)}, now.Add(time.Minute)},
		// Many failures of the e-mail from elsewhere: an address that has not failed for it
		// is never refused, whatever the count.
		{"e-mail flooded, fresh address", LoginFailureCounts{Email: 500, EmailLatest: now}, time.Time{}},
		{"e-mail at the backoff, address failed once", LoginFailureCounts{Pair: 1, PairOldest: ago(time.Minute), IP: 1, IPOldest: ago(time.Minute), Email: 10, EmailLatest: now}, now.Add(time.Second)},
		{"backoff doubles", LoginFailureCounts{Pair: 1, IP: 1, Email: 13, EmailLatest: now}, now.Add(8 * time.Second)},
		{"backoff capped at the window", LoginFailureCounts{Pair: 1, IP: 1, Email: 200, EmailLatest: ago(time.Minute)}, now.Add(14 * time.Minute)},
		{"backoff over", LoginFailureCounts{Pair: 1, IP: 1, Email: 11, EmailLatest: ago(3 * time.Second)}, time.Time{}},
		{"the latest of several rules", LoginFailureCounts{Pair: 5, PairOldest: ago(14 * time.Minute), IP: 30, IPOldest: ago(10 * time.Minute), Email: 30, EmailLatest: ago(time.Minute)}, now.Add(14 * time.Minute)},
	} {
		if got := p.refusedUntil(tc.c, now); !got.Equal(tc.want) {
			t.Errorf("%s: refused until %v, want %v", tc.name, got, tc.want)
		}
	}
}

// Someone who knows the owner's e-mail cannot lock the owner out: failures from other
// addresses never refuse the right password from an address that has not failed.
func TestSignInNoLockout(t *testing.T) {
	clk := &stepClock{t: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	u := cheapUser(t, "owner@shop.example", "right password")
	st := newMemDashboard(u)
	d := mustDashboard(t, st, clk, ThrottlePolicy{})
	ctx := context.Background()
	throttled := func(err error) *ThrottledError {
		var te *ThrottledError
		errors.As(err, &te)
		return te
	}

	// One attacker address: refused at the sixth attempt, the right password included.
	for range 5 {
		if _, err := d.SignIn(ctx, "owner@shop.example", "guess", "198.51.100.1"); err != ErrCredentialsInvalid {
			t.Fatalf("guess: %v", err)
		}
	}
	if te := throttled(func() error {
		_, err := d.SignIn(ctx, "owner@shop.example", "right password", "198.51.100.1")
		return err
	}()); te == nil || te.RetryAfter != 15*time.Minute {
		t.Fatalf("attacker's pair not throttled: %v", te)
	}
	// Many attacker addresses push the e-mail into its backoff...
	for i := range 20 {
		ip := "203.0.113." + string(rune('a'+i))
		if _, err := d.SignIn(ctx, "owner@shop.example", "guess", ip); err != ErrCredentialsInvalid {
			t.Fatalf("guess %d: %v", i, err)
		}
	}
	// ...and an address that failed for the e-mail waits for it, right password or not.
	if te := throttled(func() error {
		_, err := d.SignIn(ctx, "owner@shop.example", "right password", "203.0.113.a")
		return err
	}()); te == nil || te.RetryAfter != 15*time.Minute {
		t.Fatalf("e-mail backoff: %v", te)
	}
	// The owner's own address has not failed: signed in.
	if _, err := d.SignIn(ctx, "owner@shop.example", "right password", "192.0.2.7"); err != nil {
		t.Fatalf("owner locked out: %v", err)
	}
	// The owner mistypes once: from then on the owner's address is under the e-mail backoff.
	if _, err := d.SignIn(ctx, "owner@shop.example", "typo", "192.0.2.7"); err != ErrCredentialsInvalid {
		t.Fatal(err)
	}
	if throttled(func() error { _, err := d.SignIn(ctx, "owner@shop.example", "right password", "192.0.2.7"); return err }()) == nil {
		t.Fatal("no backoff after the owner's own failure")
	}
	// After the window everything is allowed again; success clears only its own pair.
	clk.t = clk.t.Add(15*time.Minute + time.Second)
	if _, err := d.SignIn(ctx, "owner@shop.example", "right password", "198.51.100.1"); err != nil {
		t.Fatalf("after the window: %v", err)
	}
}
