package identity

import (
	"context"
	"strconv"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// ThrottlePolicy bounds failed dashboard sign-ins: at most PerEmail failures for one e-mail
// address, and PerIP from one client address, within Window. Beyond that, sign-in answers 429
// login_throttled until the oldest failure of the window is Window old. The address limit is
// higher because one office or one proxy may carry many users.
type ThrottlePolicy struct {
	PerEmail int
	PerIP    int
	Window   time.Duration
}

// DefaultThrottle is the documented policy: 5 per e-mail, 30 per address, 15 minutes.
var DefaultThrottle = ThrottlePolicy{PerEmail: 5, PerIP: 30, Window: 15 * time.Minute}

func (p ThrottlePolicy) withDefaults() ThrottlePolicy {
	if p.PerEmail <= 0 {
		p.PerEmail = DefaultThrottle.PerEmail
	}
	if p.PerIP <= 0 {
		p.PerIP = DefaultThrottle.PerIP
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

// checkThrottle refuses the attempt when the e-mail or the client address has used up its
// failures in the window.
func (d *Dashboard) checkThrottle(ctx context.Context, email, clientIP string) error {
	now := d.clock.Now()
	c, err := d.store.LoginFailures(ctx, email, clientIP, now.Add(-d.throttle.Window))
	if err != nil {
		return err
	}
	var until time.Time
	if c.Email >= d.throttle.PerEmail {
		until = c.EmailOldest.Add(d.throttle.Window)
	}
	if c.IP >= d.throttle.PerIP {
		if t := c.IPOldest.Add(d.throttle.Window); t.After(until) {
			until = t
		}
	}
	if until.IsZero() {
		return nil
	}
	wait := until.Sub(now)
	if wait < time.Second {
		wait = time.Second
	}
	secs := int((wait + time.Second - 1) / time.Second)
	return &ThrottledError{
		Err: core.NewError(core.TypeRateLimit, "login_throttled", "",
			"Too many failed sign-ins. Try again in "+strconv.Itoa(secs)+" second(s)."),
		RetryAfter: time.Duration(secs) * time.Second,
	}
}
