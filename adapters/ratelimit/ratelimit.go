// Package ratelimit is the in-process token bucket behind ports.RateLimiter (D5): one bucket
// per merchant and environment, burst equal to the rate. It holds state for one process only;
// several processes need a shared limiter (Redis) instead.
package ratelimit

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// Default rates (requests per second) of D5.
const (
	DefaultLiveRate = 100
	DefaultTestRate = 25
)

// idleAfter is how long a bucket may go unused before it is dropped. A bucket refills
// completely within one second (burst = rate), so dropping it after a minute loses nothing.
const idleAfter = time.Minute

// sweepEvery bounds how often Allow scans for idle buckets.
const sweepEvery = 30 * time.Second

type bucket struct {
	lim      *rate.Limiter
	lastSeen time.Time
}

// Limiter is a per-scope token bucket. It is safe for concurrent use.
type Limiter struct {
	live, test rate.Limit
	liveBurst  int
	testBurst  int
	now        func() time.Time

	mu        sync.Mutex
	buckets   map[core.Scope]*bucket
	lastSweep time.Time
}

var _ ports.RateLimiter = (*Limiter)(nil)

// New returns a limiter allowing liveRate requests per second to each live scope and testRate
// to each test scope, with bursts equal to the rates. A rate ≤ 0 means unlimited.
func New(liveRate, testRate float64) *Limiter {
	return newWithClock(liveRate, testRate, time.Now)
}

func newWithClock(liveRate, testRate float64, now func() time.Time) *Limiter {
	l := &Limiter{now: now, buckets: map[core.Scope]*bucket{}}
	l.live, l.liveBurst = limitOf(liveRate)
	l.test, l.testBurst = limitOf(testRate)
	l.lastSweep = now()
	return l
}

func limitOf(r float64) (rate.Limit, int) {
	if r <= 0 || math.IsInf(r, 1) || math.IsNaN(r) {
		return rate.Inf, 1
	}
	burst := int(math.Ceil(r))
	return rate.Limit(r), max(burst, 1)
}

// Allow takes one token from the scope's bucket. When none is left it returns false and how
// long to wait, rounded up to whole seconds and at least one second (Retry-After).
func (l *Limiter) Allow(scope core.Scope) (bool, time.Duration) {
	now := l.now()
	l.mu.Lock()
	if now.Sub(l.lastSweep) >= sweepEvery {
		l.sweep(now)
	}
	b, ok := l.buckets[scope]
	if !ok {
		lim, burst := l.test, l.testBurst
		if scope.Env == core.EnvLive {
			lim, burst = l.live, l.liveBurst
		}
		b = &bucket{lim: rate.NewLimiter(lim, burst)}
		l.buckets[scope] = b
	}
	b.lastSeen = now
	l.mu.Unlock()

	r := b.lim.ReserveN(now, 1)
	if !r.OK() {
		return false, time.Second
	}
	delay := r.DelayFrom(now)
	if delay <= 0 {
		return true, 0
	}
	r.CancelAt(now) // the request is refused, so it must not consume the future token
	secs := time.Duration(math.Ceil(delay.Seconds())) * time.Second
	return false, max(secs, time.Second)
}

// sweep drops buckets idle for longer than idleAfter. Caller holds l.mu.
func (l *Limiter) sweep(now time.Time) {
	for s, b := range l.buckets {
		if now.Sub(b.lastSeen) > idleAfter {
			delete(l.buckets, s)
		}
	}
	l.lastSweep = now
}

// Len is the number of buckets currently held (for metrics and tests).
func (l *Limiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}
