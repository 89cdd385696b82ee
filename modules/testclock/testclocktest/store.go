// Package testclocktest is the contract suite of testclock.Store, run on every implementation
// (the Postgres store and the module's in-memory fake).
package testclocktest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/testclock"
)

// Harness is two processes' stores over one storage.
type Harness struct {
	// A and B are the stores of two processes.
	A, B testclock.Store
	// KillB ends process B at once, as a SIGKILL would: its advances stop running.
	KillB func()
	// Scope returns a test scope of a new merchant.
	Scope func() core.Scope
}

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// RunStore runs the contract on harnesses made by newHarness (one per case).
func RunStore(t *testing.T, newHarness func(t *testing.T) Harness) {
	ctx := context.Background()
	state := func(t *testing.T, st testclock.Store, sc core.Scope) testclock.State {
		t.Helper()
		s, err := st.State(ctx, sc)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	begin := func(t *testing.T, st testclock.Store, sc core.Scope, from *time.Time, to time.Time) bool {
		t.Helper()
		ok, err := st.Begin(ctx, sc, from, to)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	// pending is what st lists as pending of scope sc (the storage may be shared by cases).
	pending := func(t *testing.T, st testclock.Store, sc core.Scope) []testclock.Pending {
		t.Helper()
		all, err := st.Pending(ctx, 1000)
		if err != nil {
			t.Fatal(err)
		}
		var out []testclock.Pending
		for _, p := range all {
			if p.Scope == sc {
				out = append(out, p)
			}
		}
		return out
	}
	target := t0.Add(time.Hour)
	later := t0.Add(2 * time.Hour)

	t.Run("a new clock follows real time and has no advance", func(t *testing.T) {
		h := newHarness(t)
		sc := h.Scope()
		if f, err := h.A.FrozenTime(ctx, sc); err != nil || f != nil {
			t.Fatalf("frozen %v %v", f, err)
		}
		if s := state(t, h.A, sc); s.Frozen != nil || s.Advancing != nil {
			t.Fatalf("state %+v", s)
		}
		if p := pending(t, h.A, sc); len(p) != 0 {
			t.Fatalf("pending %v", p)
		}
	})

	t.Run("begin records the advance; the clock keeps its time until finish", func(t *testing.T) {
		h := newHarness(t)
		sc := h.Scope()
		if !begin(t, h.A, sc, nil, target) {
			t.Fatal("begin refused on a new clock")
		}
		if s := state(t, h.A, sc); s.Frozen != nil || s.Advancing == nil || !s.Advancing.To.Equal(target) || !s.Advancing.Running || !s.Advancing.Mine {
			t.Fatalf("A sees %+v %+v", s, s.Advancing)
		}
		if s := state(t, h.B, sc); s.Advancing == nil || !s.Advancing.Running || s.Advancing.Mine {
			t.Fatalf("B sees %+v %+v", s, s.Advancing)
		}
		if f, _ := h.A.FrozenTime(ctx, sc); f != nil {
			t.Fatalf("frozen during the advance: %v", f)
		}
		if ok, err := h.A.Finish(ctx, sc, target); err != nil || !ok {
			t.Fatalf("finish %v %v", ok, err)
		}
		s := state(t, h.B, sc)
		if s.Frozen == nil || !s.Frozen.Equal(target) || s.Advancing != nil {
			t.Fatalf("after finish %+v", s)
		}
		if ok, err := h.B.Finish(ctx, sc, target); err != nil || ok {
			t.Fatalf("a second finish: %v %v", ok, err)
		}
		// The next advance starts from the frozen time, and only from it.
		if begin(t, h.A, sc, nil, later) {
			t.Fatal("begin from real time on a frozen clock")
		}
		if !begin(t, h.A, sc, &target, later) {
			t.Fatal("begin from the frozen time refused")
		}
	})

	t.Run("a running advance is not taken by another process, whatever the target", func(t *testing.T) {
		h := newHarness(t)
		sc := h.Scope()
		begin(t, h.A, sc, nil, target)
		if begin(t, h.B, sc, nil, target) || begin(t, h.B, sc, nil, later) {
			t.Fatal("B took A's running advance")
		}
		if begin(t, h.A, sc, nil, later) {
			t.Fatal("a second target while advancing")
		}
		if !begin(t, h.A, sc, nil, target) {
			t.Fatal("the process running it is refused its own advance")
		}
		if p := pending(t, h.B, sc); len(p) != 0 {
			t.Fatalf("B lists a running advance as pending: %v", p)
		}
		if p := pending(t, h.A, sc); len(p) != 1 {
			t.Fatalf("A does not list its own advance: %v", p)
		}
	})

	t.Run("a released advance is pending and taken over only to its own target", func(t *testing.T) {
		h := newHarness(t)
		sc := h.Scope()
		begin(t, h.A, sc, nil, target)
		if err := h.A.Release(ctx, sc, target); err != nil {
			t.Fatal(err)
		}
		if s := state(t, h.B, sc); s.Advancing == nil || s.Advancing.Running {
			t.Fatalf("released: %+v %+v", s, s.Advancing)
		}
		if p := pending(t, h.B, sc); len(p) != 1 || !p[0].To.Equal(target) {
			t.Fatalf("pending %v", p)
		}
		if begin(t, h.B, sc, nil, later) {
			t.Fatal("another target took over")
		}
		if !begin(t, h.B, sc, nil, target) {
			t.Fatal("B could not take over")
		}
		if s := state(t, h.B, sc); !s.Advancing.Running || !s.Advancing.Mine {
			t.Fatalf("after take-over %+v", s.Advancing)
		}
		if err := h.A.Release(ctx, sc, target); err != nil {
			t.Fatal(err)
		}
		if s := state(t, h.A, sc); !s.Advancing.Running {
			t.Fatal("A released B's run")
		}
	})

	t.Run("the advance of a killed process is taken over at once", func(t *testing.T) {
		h := newHarness(t)
		sc := h.Scope()
		begin(t, h.B, sc, nil, target)
		if begin(t, h.A, sc, nil, target) {
			t.Fatal("taken while B lives")
		}
		h.KillB()
		if s := state(t, h.A, sc); s.Advancing == nil || s.Advancing.Running {
			t.Fatalf("after the kill: %+v", s.Advancing)
		}
		if p := pending(t, h.A, sc); len(p) != 1 {
			t.Fatalf("pending %v", p)
		}
		if !begin(t, h.A, sc, nil, target) {
			t.Fatal("not taken over")
		}
	})

	t.Run("of concurrent begins, one process wins", func(t *testing.T) {
		h := newHarness(t)
		sc := h.Scope()
		var wg sync.WaitGroup
		var mu sync.Mutex
		wins := map[int]int{}
		for i := range 16 {
			st := h.A
			if i%2 == 1 {
				st = h.B
			}
			wg.Go(func() {
				ok, err := st.Begin(ctx, sc, nil, target)
				if err != nil {
					t.Error(err)
				}
				if ok {
					mu.Lock()
					wins[i%2]++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if len(wins) != 1 {
			t.Fatalf("winners by process: %v", wins)
		}
	})

	t.Run("clocks are per scope", func(t *testing.T) {
		h := newHarness(t)
		a, b := h.Scope(), h.Scope()
		begin(t, h.A, a, nil, target)
		if ok, _ := h.A.Finish(ctx, a, target); !ok {
			t.Fatal("finish")
		}
		if s := state(t, h.A, b); s.Frozen != nil || s.Advancing != nil {
			t.Fatalf("other scope %+v", s)
		}
		if !begin(t, h.B, b, nil, later) {
			t.Fatal("other scope refused")
		}
	})
}
