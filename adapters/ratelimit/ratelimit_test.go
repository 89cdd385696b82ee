package ratelimit

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newFake(live, test float64) (*Limiter, *fakeClock) {
	c := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	return newWithClock(live, test, c.now), c
}

var (
	testScope = core.Scope{MerchantID: "mer_a", Env: core.EnvTest}
	liveScope = core.Scope{MerchantID: "mer_a", Env: core.EnvLive}
)

func drain(l *Limiter, s core.Scope) int {
	n := 0
	for {
		ok, _ := l.Allow(s)
		if !ok {
			return n
		}
		n++
		if n > 10000 {
			return n
		}
	}
}

func TestBurstEqualsRate(t *testing.T) {
	l, _ := newFake(100, 25)
	if n := drain(l, testScope); n != 25 {
		t.Fatalf("test burst = %d, want 25", n)
	}
	if n := drain(l, liveScope); n != 100 {
		t.Fatalf("live burst = %d, want 100", n)
	}
}

func TestScopesAreIndependent(t *testing.T) {
	l, _ := newFake(2, 2)
	drain(l, testScope)
	if ok, _ := l.Allow(core.Scope{MerchantID: "mer_b", Env: core.EnvTest}); !ok {
		t.Fatal("other merchant limited by mer_a")
	}
	if ok, _ := l.Allow(liveScope); !ok {
		t.Fatal("live limited by test")
	}
}

func TestRetryAfterRoundsUpToWholeSeconds(t *testing.T) {
	l, c := newFake(100, 25)
	drain(l, testScope)
	ok, ra := l.Allow(testScope)
	if ok || ra != time.Second {
		t.Fatalf("ok=%v retryAfter=%v, want false 1s", ok, ra)
	}
	// Slow rate: the next token is 10 s away, then 9.5 s → 10 s.
	slow, sc := newFake(0.1, 0.1)
	slow.Allow(testScope)
	if ok, ra := slow.Allow(testScope); ok || ra != 10*time.Second {
		t.Fatalf("slow: ok=%v retryAfter=%v", ok, ra)
	}
	sc.add(500 * time.Millisecond)
	if ok, ra := slow.Allow(testScope); ok || ra != 10*time.Second {
		t.Fatalf("slow rounded: ok=%v retryAfter=%v", ok, ra)
	}
	sc.add(9600 * time.Millisecond)
	if ok, _ := slow.Allow(testScope); !ok {
		t.Fatal("token not refilled")
	}
	// Refused requests do not eat future tokens.
	c.add(40 * time.Millisecond) // one token at 25/s
	if ok, _ := l.Allow(testScope); !ok {
		t.Fatal("refill lost to refused requests")
	}
}

func TestRefill(t *testing.T) {
	l, c := newFake(100, 25)
	drain(l, testScope)
	c.add(time.Second)
	if n := drain(l, testScope); n != 25 {
		t.Fatalf("after 1 s: %d, want 25", n)
	}
	c.add(200 * time.Millisecond)
	if n := drain(l, testScope); n != 5 {
		t.Fatalf("after 200 ms: %d, want 5", n)
	}
}

func TestIdleBucketsAreEvicted(t *testing.T) {
	l, c := newFake(100, 25)
	for i := range 1000 {
		l.Allow(core.Scope{MerchantID: fmt.Sprintf("mer_%d", i), Env: core.EnvTest})
	}
	if l.Len() != 1000 {
		t.Fatalf("len %d", l.Len())
	}
	c.add(2 * idleAfter)
	l.Allow(testScope)
	if l.Len() != 1 {
		t.Fatalf("idle buckets kept: %d", l.Len())
	}
}

func TestUnlimited(t *testing.T) {
	l, _ := newFake(0, -1)
	for range 1000 {
		if ok, _ := l.Allow(testScope); !ok {
			t.Fatal("limited with rate 0")
		}
	}
}

func TestConcurrentUse(t *testing.T) {
	l := New(100, 25)
	var wg sync.WaitGroup
	var mu sync.Mutex
	allowed := 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				if ok, _ := l.Allow(testScope); ok {
					mu.Lock()
					allowed++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if allowed < 25 || allowed > 30 {
		t.Fatalf("allowed %d of 160 with burst 25", allowed)
	}
}
