package ratelimit

import (
	"strconv"
	"testing"
	"time"
)

func newKeyedFake(perSecond float64, burst int) (*Keyed, *fakeClock) {
	c := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	return newKeyedWithClock(perSecond, burst, c.now), c
}

func TestKeyedAllow(t *testing.T) {
	k, clk := newKeyedFake(2, 4)
	for i := range 4 {
		if ok, _ := k.Allow("a"); !ok {
			t.Fatalf("request %d of the burst refused", i)
		}
	}
	ok, wait := k.Allow("a")
	if ok || wait != time.Second {
		t.Fatalf("5th: %v %v, want refused for 1 s", ok, wait)
	}
	if ok, _ := k.Allow("b"); !ok {
		t.Fatal("another key shares the bucket")
	}
	clk.add(500 * time.Millisecond)
	if ok, _ := k.Allow("a"); !ok {
		t.Fatal("no refill after half a second at 2/s")
	}
}

// Failures are taken after the fact (Take) and checked before the next request (Wait): the
// bucket refuses once it is empty, owes what it took beyond that, and refills at the rate.
func TestKeyedWaitAndTake(t *testing.T) {
	k, clk := newKeyedFake(20.0/60, 20) // 20 a minute
	if w := k.Wait("ip"); w != 0 {
		t.Fatalf("unknown key waits %v", w)
	}
	for range 20 {
		if w := k.Wait("ip"); w != 0 {
			t.Fatalf("refused within the burst: %v", w)
		}
		k.Take("ip")
	}
	if w := k.Wait("ip"); w != 3*time.Second {
		t.Fatalf("after 20 failures: wait %v, want 3 s (one token at 20/min)", w)
	}
	k.Take("ip") // a failure that was in flight: owed
	if w := k.Wait("ip"); w != 6*time.Second {
		t.Fatalf("in debt: wait %v, want 6 s", w)
	}
	clk.add(6 * time.Second)
	if w := k.Wait("ip"); w != 0 {
		t.Fatalf("after the wait: %v", w)
	}
	if w := k.Wait("other"); w != 0 {
		t.Fatal("another key is refused")
	}
	clk.add(2 * time.Minute)
	k.Wait("x")
	k.Take("x") // sweeps: "ip" has refilled
	if n := k.Len(); n != 1 {
		t.Fatalf("%d buckets after the sweep, want 1", n)
	}
}

func TestKeyedBounded(t *testing.T) {
	k, _ := newKeyedFake(1, 1)
	for i := range MaxKeys + 10 {
		k.Take(strconv.Itoa(i))
	}
	if n := k.Len(); n != MaxKeys {
		t.Fatalf("%d buckets, want at most %d", n, MaxKeys)
	}
}

func TestKeyedUnlimited(t *testing.T) {
	k, _ := newKeyedFake(0, 1)
	for range 1000 {
		k.Take("a")
		if ok, _ := k.Allow("a"); !ok || k.Wait("a") != 0 {
			t.Fatal("an unlimited limiter refused")
		}
	}
	if k.Len() != 0 {
		t.Fatal("an unlimited limiter keeps buckets")
	}
}
