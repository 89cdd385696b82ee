package scheduler

import (
	"context"
	"errors"
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
