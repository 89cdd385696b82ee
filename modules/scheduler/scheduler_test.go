package scheduler

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
)

var (
	t0    = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	scope = core.Scope{MerchantID: "mer_sched", Env: core.EnvTest}
)

// calls records every ProcessDue call as scope-or-nil and until.
type calls struct {
	log    []string
	scopes []*core.Scope
	err    error
}

func (c *calls) ProcessDue(_ context.Context, s *core.Scope, until time.Time) (int, error) {
	c.scopes = append(c.scopes, s)
	c.log = append(c.log, until.Sub(t0).String())
	return 1, c.err
}

// nextAt is a processor with one piece of work at a fixed time.
type nextAt struct {
	calls
	at   time.Time
	done bool
}

func (n *nextAt) ProcessDue(ctx context.Context, s *core.Scope, until time.Time) (int, error) {
	if !n.at.After(until) {
		n.done = true
	}
	return n.calls.ProcessDue(ctx, s, until)
}

func (n *nextAt) NextDue(_ context.Context, _ core.Scope, until time.Time) (time.Time, bool, error) {
	if n.done || n.at.After(until) {
		return time.Time{}, false, nil
	}
	return n.at, true, nil
}

// A scoped run steps every processor through the moments a NextDuer names, then runs all up
// to the horizon; the first error stops it.
func TestRunScopeStepsInTimeOrder(t *testing.T) {
	t.Parallel()
	r := NewRegistry()
	plain := &calls{}
	stepped := &nextAt{at: t0.Add(time.Minute)}
	r.Register("plain", plain)
	r.Register("stepped", stepped)
	if err := r.RunScope(context.Background(), scope, t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got := plain.log; len(got) != 2 || got[0] != "1m0s" || got[1] != "1h0m0s" {
		t.Fatalf("plain ran at %v", got)
	}
	for _, s := range plain.scopes {
		if s == nil || *s != scope {
			t.Fatal("a scoped run passes its scope")
		}
	}
	failing := &calls{err: errors.New("boom")}
	after := &calls{}
	r2 := NewRegistry()
	r2.Register("failing", failing)
	r2.Register("after", after)
	if err := r2.RunScope(context.Background(), scope, t0); err == nil || len(after.log) != 0 {
		t.Fatalf("%v, later processor ran %d times", err, len(after.log))
	}
}

// A background round runs every processor over all scopes (nil), goes on after a failing
// one, and runs a periodic job at most once per its interval.
func TestLoopRound(t *testing.T) {
	t.Parallel()
	r := NewRegistry()
	failing := &calls{err: errors.New("boom")}
	after := &calls{}
	r.Register("failing", failing)
	r.Register("after", after)
	purges := 0
	l := &Loop{Registry: r, Interval: time.Second, Periodic: []Periodic{{Name: "purge", Every: time.Hour,
		Run: func(context.Context, time.Time) (int64, error) { purges++; return 0, nil }}}}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	last := make([]time.Time, 1)
	for _, at := range []time.Duration{0, time.Minute, time.Hour} {
		l.round(context.Background(), log, t0.Add(at), last)
	}
	if len(after.log) != 3 || after.scopes[0] != nil {
		t.Fatalf("after ran %v with scopes %v", after.log, after.scopes)
	}
	if purges != 2 {
		t.Fatalf("%d purges, want 2 (at 0 and after an hour)", purges)
	}
}

// timed is a NextDuer with work at fixed offsets from t0; it logs "name@offset" as it does it.
type timed struct {
	name  string
	due   []time.Duration
	log   *[]string
	calls int
}

func (s *timed) ProcessDue(_ context.Context, _ *core.Scope, until time.Time) (int, error) {
	s.calls++
	n := 0
	var left []time.Duration
	for _, d := range s.due {
		if !t0.Add(d).After(until) {
			*s.log = append(*s.log, s.name+"@"+d.String())
			n++
		} else {
			left = append(left, d)
		}
	}
	s.due = left
	return n, nil
}

func (s *timed) NextDue(_ context.Context, _ core.Scope, until time.Time) (time.Time, bool, error) {
	found := false
	var next time.Time
	for _, d := range s.due {
		if at := t0.Add(d); !at.After(until) && (!found || at.Before(next)) {
			next, found = at, true
		}
	}
	return next, found, nil
}

// Processors that tell their due times interleave in time order, registration order at a tie,
// in as many rounds as the order switches from one to the other: a run of work of one
// processor is done in one call, however long.
func TestRunScopeInterleavesByNextDue(t *testing.T) {
	t.Parallel()
	var log []string
	m := time.Minute
	a := &timed{name: "a", due: []time.Duration{1 * m, 2 * m, 3 * m, 5 * m, 9 * m}, log: &log}
	b := &timed{name: "b", due: []time.Duration{4 * m, 5 * m, 6 * m, 7 * m, 8 * m, 20 * m}, log: &log}
	r := NewRegistry()
	r.Register("a", a)
	r.Register("b", b)
	if err := r.RunScope(context.Background(), scope, t0.Add(10*m)); err != nil {
		t.Fatal(err)
	}
	want := "[a@1m0s a@2m0s a@3m0s b@4m0s a@5m0s b@5m0s b@6m0s b@7m0s b@8m0s a@9m0s]"
	if got := fmt.Sprint(log); got != want {
		t.Fatalf("order %s, want %s", got, want)
	}
	if a.calls != 3 || b.calls != 2 {
		t.Fatalf("a ran %d times, b %d; want 3 and 2 (one per run of its work)", a.calls, b.calls)
	}
	if len(b.due) != 1 {
		t.Fatal("work after the horizon ran")
	}
}

// asked is a NextDuer with nothing due that counts how often it is asked.
type asked struct{ n int }

func (a *asked) ProcessDue(context.Context, *core.Scope, time.Time) (int, error) { return 0, nil }
func (a *asked) NextDue(context.Context, core.Scope, time.Time) (time.Time, bool, error) {
	a.n++
	return time.Time{}, false, nil
}

// doing is a processor without NextDue that does work on its first does calls.
type doing struct{ does, calls int }

func (d *doing) ProcessDue(context.Context, *core.Scope, time.Time) (int, error) {
	d.calls++
	if d.calls <= d.does {
		return 1, nil
	}
	return 0, nil
}

// When no NextDuer has work, the processors without NextDue run up to the horizon; the
// NextDuers are asked again only if those did work (which may have made some for them).
func TestRunScopeAsksAgainOnlyAfterWorkAtTheEnd(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ does, asks, runs int }{{0, 1, 1}, {1, 2, 1}} {
		r := NewRegistry()
		nd, plain := &asked{}, &doing{does: c.does}
		r.Register("plain", plain)
		r.Register("next due", nd)
		if err := r.RunScope(context.Background(), scope, t0.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if nd.n != c.asks || plain.calls != c.runs {
			t.Errorf("a plain processor doing work %d times: next due asked %d times, plain run %d; want %d and %d",
				c.does, nd.n, plain.calls, c.asks, c.runs)
		}
	}
}
