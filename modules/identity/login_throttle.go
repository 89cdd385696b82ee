package identity

import (
	"context"
	"strconv"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// ThrottlePolicy bounds failed dashboard sign-ins without letting anyone who knows an e-mail
// address lock its owner out. Three rules, each counting the failures of the last Window:
//
//   - PerPair failures of one e-mail from one client address refuse that pair until its oldest
//     failure is Window old;
//   - PerIP failures from one client address, whatever the e-mail, refuse that address;
//   - once an e-mail has EmailBackoffAfter failures from all addresses together, an address
//     that has itself failed for that e-mail waits 1 s after the e-mail's latest failure, 2 s
//     after the next one, doubling up to Window (a slow global backoff against guessing from
//     many addresses).
//
// An address that has not failed for the e-mail (and is under PerIP) is never refused, so the
// owner signs in from their own address whatever others try. Refused attempts answer 429
// login_throttled before any password is checked and are not counted.
type ThrottlePolicy struct {
	PerPair           int
	PerIP             int
	EmailBackoffAfter int
	Window            time.Duration
}

// DefaultThrottle is the documented policy: 5 per e-mail and address, 30 per address, the
// e-mail backoff after 10 failures, 15 minutes.
var DefaultThrottle = ThrottlePolicy{PerPair: 5, PerIP: 30, EmailBackoffAfter: 10, Window: 15 * time.Minute}

// emailBackoffBase is the first wait of the per-e-mail backoff; each further failure doubles it.
const emailBackoffBase = time.Second

func (p ThrottlePolicy) withDefaults() ThrottlePolicy {
	if p.PerPair <= 0 {
		p.PerPair = DefaultThrottle.PerPair
	}
	if p.PerIP <= 0 {
		p.PerIP = DefaultThrottle.PerIP
	}
	if p.EmailBackoffAfter <= 0 {
		p.EmailBackoffAfter = DefaultThrottle.EmailBackoffAfter
	}
	if p.Window <= 0 {
		p.Window = DefaultThrottle.Window
	}
	return p
}

// ThrottledError is the 429 of a throttled sign-in; RetryAfter says when to try again.
type ThrottledError struct {
	Err        *core.Error
	RetryAfter time.Duration
}

func (e *ThrottledError) Error() string { return e.Err.Error() }
func (e *ThrottledError) Unwrap() error { return e.Err }

// refusedUntil applies the policy to the counts of the window ending at now: the zero time
// when the attempt may go on, else the moment it may.
func (p ThrottlePolicy) refusedUntil(c LoginFailureCounts, now time.Time) time.Time {
	var until time.Time
	later := func(t time.Time) {
		if t.After(now) && t.After(until) {
			until = t
		}
	}
	if c.Pair >= p.PerPair {
		later(c.PairOldest.Add(p.Window))
	}
	if c.IP >= p.PerIP {
		later(c.IPOldest.Add(p.Window))
	}
	if c.Pair > 0 && c.Email >= p.EmailBackoffAfter {
		wait := p.Window
		if n := c.Email - p.EmailBackoffAfter; n < 30 {
			wait = min(emailBackoffBase<<n, p.Window)
		}
		later(c.EmailLatest.Add(wait))
	}
	return until
}

// checkThrottle refuses the attempt when the policy says so.
func (d *Dashboard) checkThrottle(ctx context.Context, email, clientIP string) error {
	now := d.clock.Now()
	c, err := d.store.LoginFailures(ctx, email, clientIP, now.Add(-d.throttle.Window))
	if err != nil {
		return err
	}
	until := d.throttle.refusedUntil(c, now)
	if until.IsZero() {
		return nil
	}
	secs := max(int((until.Sub(now)+time.Second-1)/time.Second), 1)
	return &ThrottledError{
		Err: core.NewError(core.TypeRateLimit, "login_throttled", "",
			"Too many failed sign-ins. Try again in "+strconv.Itoa(secs)+" second(s)."),
		RetryAfter: time.Duration(secs) * time.Second,
	}
}
