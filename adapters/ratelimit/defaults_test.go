package ratelimit

import (
	"testing"
	"time"
)

// D5: 100 requests/s live and 25 test, burst equal to the rate, Retry-After at least 1 s.
func TestDefaultsFollowD5(t *testing.T) {
	if DefaultLiveRate != 100 || DefaultTestRate != 25 {
		t.Fatalf("defaults live %v test %v, want 100 and 25", DefaultLiveRate, DefaultTestRate)
	}
	l, c := newFake(DefaultLiveRate, DefaultTestRate)
	if n := drain(l, testScope); n != 25 {
		t.Fatalf("test burst %d, want 25", n)
	}
	if n := drain(l, liveScope); n != 100 {
		t.Fatalf("live burst %d, want 100", n)
	}
	if ok, ra := l.Allow(testScope); ok || ra < time.Second || ra%time.Second != 0 {
		t.Fatalf("exhausted test scope: ok=%v retryAfter=%v, want refused with whole seconds ≥ 1", ok, ra)
	}
	c.add(time.Second)
	if n := drain(l, liveScope); n != 100 {
		t.Fatalf("live refill after 1 s: %d, want 100", n)
	}
}
