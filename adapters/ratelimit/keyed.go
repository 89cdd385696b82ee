package ratelimit

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// MaxKeys bounds the buckets one Keyed limiter holds. Beyond it an arbitrary bucket is
// forgotten to make room (its key starts afresh): memory stays bounded however many addresses
// or secrets a flood uses.
const MaxKeys = 1 << 16

// Keyed is a token bucket per string key (a client address, a dashboard session, a client
// secret and address): perSecond tokens a second, up to burst. It backs the HTTP abuse
// throttles (adapters/http/kit). Buckets that have refilled completely are dropped. It is
// safe for concurrent use and holds state for one process only.
type Keyed struct {
	limit rate.Limit
	burst int
	idle  time.Duration // a bucket unused this long is full again
	now   func() time.Time

	mu        sync.Mutex
	buckets   map[string]*bucket
	lastSweep time.Time
}

// NewKeyed returns a limiter of perSecond tokens a second per key with bursts of burst
// (at least 1). perSecond ≤ 0 means unlimited.
func NewKeyed(perSecond float64, burst int) *Keyed {
	return newKeyedWithClock(perSecond, burst, time.Now)
}

func newKeyedWithClock(perSecond float64, burst int, now func() time.Time) *Keyed {
	k := &Keyed{now: now, buckets: map[string]*bucket{}, burst: max(burst, 1)}
	k.lastSweep = now()
	if perSecond <= 0 || math.IsInf(perSecond, 1) || math.IsNaN(perSecond) {
		k.limit = rate.Inf
		return k
	}
	k.limit = rate.Limit(perSecond)
	k.idle = max(time.Duration(float64(k.burst)/perSecond*float64(time.Second)), time.Second)
	return k
}

// Unlimited reports whether the limiter never refuses.
func (k *Keyed) Unlimited() bool { return k.limit == rate.Inf }

// bucketOf returns key's bucket, made full when new. It sweeps idle buckets now and then.
func (k *Keyed) bucketOf(key string, now time.Time) *rate.Limiter {
	k.mu.Lock()
	defer k.mu.Unlock()
	if now.Sub(k.lastSweep) >= min(k.idle, sweepEvery) {
		k.sweep(now)
	}
	b, ok := k.buckets[key]
	if !ok {
		if len(k.buckets) >= MaxKeys {
			for other := range k.buckets {
				delete(k.buckets, other)
				break
			}
		}
		b = &bucket{lim: rate.NewLimiter(k.limit, k.burst)}
		k.buckets[key] = b
	}
	b.lastSeen = now
	return b.lim
}

// sweep drops buckets that have refilled since they were last used. Caller holds k.mu.
func (k *Keyed) sweep(now time.Time) {
	for key, b := range k.buckets {
		if now.Sub(b.lastSeen) > k.idle && b.lim.TokensAt(now) >= float64(k.burst) {
			delete(k.buckets, key)
		}
	}
	k.lastSweep = now
}

// Allow takes one token from key's bucket. When none is left it takes nothing and returns
// false with how long until one is back, in whole seconds, at least one.
func (k *Keyed) Allow(key string) (bool, time.Duration) {
	if k.Unlimited() {
		return true, 0
	}
	now := k.now()
	lim := k.bucketOf(key, now)
	r := lim.ReserveN(now, 1)
	delay := r.DelayFrom(now)
	if delay <= 0 {
		return true, 0
	}
	r.CancelAt(now)
	return false, wholeSeconds(delay)
}

// Wait returns how long until key's bucket holds a token, in whole seconds, at least one;
// zero when it holds one now. It takes nothing.
func (k *Keyed) Wait(key string) time.Duration {
	if k.Unlimited() {
		return 0
	}
	now := k.now()
	k.mu.Lock()
	b, ok := k.buckets[key]
	k.mu.Unlock()
	if !ok {
		return 0
	}
	tokens := b.lim.TokensAt(now)
	if tokens >= 1 {
		return 0
	}
	return wholeSeconds(time.Duration((1 - tokens) / float64(k.limit) * float64(time.Second)))
}

// Take takes one token from key's bucket even when it is empty: the bucket then owes it, and
// refills that much later (what a failure costs, counted after the fact).
func (k *Keyed) Take(key string) {
	if k.Unlimited() {
		return
	}
	now := k.now()
	k.bucketOf(key, now).ReserveN(now, 1)
}

// Len is the number of buckets currently held (for tests).
func (k *Keyed) Len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.buckets)
}

func wholeSeconds(d time.Duration) time.Duration {
	secs := time.Duration(math.Ceil(d.Seconds())) * time.Second
	return max(secs, time.Second)
}
