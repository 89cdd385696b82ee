package testclock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/scheduler"
	"github.com/kassa-pay/kassa/ports"
)

var (
	realNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	scope   = core.Scope{MerchantID: "mer_clock", Env: core.EnvTest}
	live    = core.Scope{MerchantID: "mer_clock", Env: core.EnvLive}
	quiet   = slog.New(slog.NewTextHandler(io.Discard, nil))
)

// newService builds the clocks over a registry holding procs, in order.
func newService(t *testing.T, st Store, clock core.Clock, wait time.Duration, procs ...ports.DueProcessor) *Service {
	t.Helper()
	due := scheduler.NewRegistry()
	for i, p := range procs {
		due.Register(fmt.Sprintf("processor %d", i), p)
	}
	svc, err := NewService(st, clock, due, Options{Wait: wait, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Shutdown(context.Background()) })
	return svc
}

type recorder struct {
	mu    sync.Mutex
	calls []time.Time
	err   error
}

func (r *recorder) ProcessDue(_ context.Context, s *core.Scope, until time.Time) (int, error) {
	if s == nil || *s != scope {
		panic("advance must pass its scope")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, until)
	return 0, r.err
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.calls)
}

func newSvc(t *testing.T) (*Service, *memStore, *recorder) {
	st := newMemStore()
	rec := &recorder{}
	return newService(t, st, core.FixedClock{T: realNow}, time.Second, rec), st, rec
}

func p(v int64) *int64 { return &v }

func TestAdvanceRules(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		scope      core.Scope
		seconds    *int64
		to         *int64
		code       string
		param      string
		wantTarget time.Time
	}{
		{name: "live refused", scope: live, seconds: p(10), code: "test_mode_only"},
		{name: "neither", scope: scope, code: "parameter_missing", param: "seconds"},
		{name: "both", scope: scope, seconds: p(10), to: p(realNow.Unix() + 10), code: "to_invalid", param: "to"},
		{name: "seconds zero", scope: scope, seconds: p(0), code: "seconds_invalid", param: "seconds"},
		{name: "seconds negative", scope: scope, seconds: p(-5), code: "seconds_invalid", param: "seconds"},
		{name: "seconds above 2y", scope: scope, seconds: p(MaxAdvance + 1), code: "seconds_invalid", param: "seconds"},
		{name: "seconds 2y ok", scope: scope, seconds: p(MaxAdvance), wantTarget: realNow.Add(time.Duration(MaxAdvance) * time.Second)},
		{name: "seconds ok", scope: scope, seconds: p(3600), wantTarget: realNow.Add(time.Hour)},
		{name: "to now", scope: scope, to: p(realNow.Unix()), code: "to_invalid", param: "to"},
		{name: "to past", scope: scope, to: p(realNow.Unix() - 1), code: "to_invalid", param: "to"},
		{name: "to beyond 2y", scope: scope, to: p(realNow.Unix() + MaxAdvance + 1), code: "to_invalid", param: "to"},
		{name: "to ok", scope: scope, to: p(realNow.Unix() + 86400), wantTarget: realNow.Add(24 * time.Hour)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			svc, st, rec := newSvc(t)
			c, err := svc.Advance(context.Background(), tc.scope, tc.seconds, tc.to)
			if tc.code != "" {
				var ce *core.Error
				if !errors.As(err, &ce) || ce.Code != tc.code || ce.Param != tc.param {
					t.Fatalf("want %s (%s), got %v", tc.code, tc.param, err)
				}
				if rec.count() != 0 || len(st.w.rows) != 0 {
					t.Fatal("a refused advance had effects")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Status != StatusReady || c.AdvancingTo != nil || c.FrozenTime == nil || !c.FrozenTime.Equal(tc.wantTarget) || !c.Now.Equal(tc.wantTarget) {
				t.Fatalf("clock %+v, want ready at %v", c, tc.wantTarget)
			}
			if rec.count() != 1 || !rec.calls[0].Equal(tc.wantTarget) {
				t.Fatalf("processor calls %v", rec.calls)
			}
		})
	}
}

func TestClockFreezesAfterAdvance(t *testing.T) {
	t.Parallel()
	svc, _, rec := newSvc(t)
	ctx := context.Background()
	c, err := svc.Get(ctx, scope)
	if err != nil || c.FrozenTime != nil || !c.Now.Equal(realNow) || c.Status != StatusReady {
		t.Fatalf("initial %+v %v", c, err)
	}
	if _, err := svc.Get(ctx, live); !errors.Is(err, core.ErrTestModeOnly) {
		t.Fatalf("live get: %v", err)
	}
	if _, err := svc.Advance(ctx, scope, p(60), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Advance(ctx, scope, nil, p(realNow.Unix()+120)); err != nil {
		t.Fatal(err)
	}
	now, _ := svc.Now(ctx, scope)
	if !now.Equal(realNow.Add(2 * time.Minute)) {
		t.Fatalf("now %v", now)
	}
	if ln, _ := svc.Now(ctx, live); !ln.Equal(realNow) {
		t.Fatalf("live now %v", ln)
	}
	// `to` is checked against the frozen time, not the real one.
	if _, err := svc.Advance(ctx, scope, nil, p(realNow.Unix()+100)); !errors.Is(err, core.InvalidField("to", "")) {
		t.Fatalf("to before frozen time: %v", err)
	}
	if rec.count() != 2 {
		t.Fatalf("calls %v", rec.calls)
	}
}

// A failure of the due work is returned; the clock keeps its time, the advance stays
// recorded and not running, and the next advance to the same time takes it over and ends it.
func TestAdvanceFailureIsResumedByTheNextAdvance(t *testing.T) {
	t.Parallel()
	st := newMemStore()
	rec, extra := &recorder{}, &recorder{}
	svc := newService(t, st, core.FixedClock{T: realNow}, time.Second, rec, extra)
	rec.err = errors.New("boom")
	if _, err := svc.Advance(context.Background(), scope, p(60), nil); err == nil {
		t.Fatal("want error")
	}
	c, _ := svc.Get(context.Background(), scope)
	if c.FrozenTime != nil || c.Status != StatusAdvancing || !c.AdvancingTo.Equal(realNow.Add(time.Minute)) || extra.count() != 0 {
		t.Fatalf("after a failure: %+v, later processor ran %d", c, extra.count())
	}
	if _, err := svc.Advance(context.Background(), scope, p(120), nil); !errors.Is(err, ErrClockAdvancing) {
		t.Fatalf("another target while advancing: %v", err)
	}
	rec.mu.Lock()
	rec.err = nil
	rec.mu.Unlock()
	c, err := svc.Advance(context.Background(), scope, p(60), nil)
	if err != nil || c.Status != StatusReady || !c.Now.Equal(realNow.Add(time.Minute)) {
		t.Fatalf("resumed: %+v %v", c, err)
	}
	if extra.count() != 1 {
		t.Fatal("added processor not run")
	}
}

// gate is a processor that blocks until released, counting its runs.
type gate struct {
	mu      sync.Mutex
	release chan struct{}
	runs    int
	started chan struct{}
}

func newGate() *gate { return &gate{release: make(chan struct{}), started: make(chan struct{}, 16)} }

func (g *gate) ProcessDue(ctx context.Context, _ *core.Scope, _ time.Time) (int, error) {
	g.mu.Lock()
	g.runs++
	g.mu.Unlock()
	g.started <- struct{}{}
	select {
	case <-g.release:
		return 1, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// An advance that is not done within Wait answers the clock advancing, with its target; GET
// shows it advancing until the work is done, then ready at the target. Meanwhile an advance
// to another time answers ErrClockAdvancing at once, and one to the same time joins it.
func TestASlowAdvanceIsObservableUntilDone(t *testing.T) {
	t.Parallel()
	st := newMemStore()
	g := newGate()
	svc := newService(t, st, core.FixedClock{T: realNow}, 50*time.Millisecond, g)
	ctx := context.Background()
	target := realNow.Add(time.Hour)
	c, err := svc.Advance(ctx, scope, p(3600), nil)
	if err != nil || c.Status != StatusAdvancing || c.AdvancingTo == nil || !c.AdvancingTo.Equal(target) || c.FrozenTime != nil {
		t.Fatalf("slow advance: %+v %v", c, err)
	}
	if g, _ := svc.Get(ctx, scope); g.Status != StatusAdvancing || !g.Now.Equal(realNow) {
		t.Fatalf("GET while advancing: %+v", g)
	}
	start := time.Now()
	if _, err := svc.Advance(ctx, scope, p(60), nil); !errors.Is(err, ErrClockAdvancing) || time.Since(start) > 40*time.Millisecond {
		t.Fatalf("another target: %v after %v", err, time.Since(start))
	}
	if c, err := svc.Advance(ctx, scope, nil, p(target.Unix())); err != nil || c.Status != StatusAdvancing {
		t.Fatalf("same target: %+v %v", c, err)
	}
	close(g.release)
	// GET shows it advancing until the work is done, then ready at the target (the join above
	// may also be the one that sees it finish: either way the work runs once).
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err = svc.Get(ctx, scope)
		if err != nil {
			t.Fatal(err)
		}
		if c.Status == StatusReady || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if c.Status != StatusReady || !c.Now.Equal(target) {
		t.Fatalf("after the work: %+v", c)
	}
	if g.runs != 1 {
		t.Fatalf("the work ran %d times", g.runs)
	}
}

// The advance of a process that died is taken over at once by the next advance to the same
// time, in another process, which runs the work to its end.
func TestAKilledProcesssAdvanceIsTakenOver(t *testing.T) {
	t.Parallel()
	a, b, killB := NewFakeStores()
	stuck := newGate()
	first := newService(t, b, core.FixedClock{T: realNow}, 20*time.Millisecond, stuck)
	if c, _ := first.Advance(context.Background(), scope, p(3600), nil); c.Status != StatusAdvancing {
		t.Fatalf("first: %+v", c)
	}
	killB()
	rec := &recorder{}
	second := newService(t, a, core.FixedClock{T: realNow}, time.Second, rec)
	c, err := second.Advance(context.Background(), scope, p(3600), nil)
	if err != nil || c.Status != StatusReady || !c.Now.Equal(realNow.Add(time.Hour)) || rec.count() != 1 {
		t.Fatalf("taken over: %+v %v, %d runs", c, err, rec.count())
	}
	close(stuck.release) // the dead process's run ends without changing anything
}

// Shutdown stops an advance at its next batch and gives it up, recorded; the resumer of another
// process takes it over and ends it.
func TestShutdownPausesAndAnotherProcessResumes(t *testing.T) {
	t.Parallel()
	a, b, _ := NewFakeStores()
	stuck := newGate()
	first := newService(t, b, core.FixedClock{T: realNow}, 20*time.Millisecond, stuck)
	if c, _ := first.Advance(context.Background(), scope, p(3600), nil); c.Status != StatusAdvancing {
		t.Fatalf("first: %+v", c)
	}
	if err := first.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st, _ := b.State(context.Background(), scope); st.Advancing == nil || st.Advancing.Running {
		t.Fatalf("after shutdown: %+v", st.Advancing)
	}
	rec := &recorder{}
	second := newService(t, a, core.FixedClock{T: realNow}, time.Second, rec)
	if n, err := second.ResumePending(context.Background(), realNow); err != nil || n != 1 {
		t.Fatalf("resumed %d %v", n, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, _ := second.Get(context.Background(), scope)
		if c.Status == StatusReady {
			if !c.Now.Equal(realNow.Add(time.Hour)) || rec.count() != 1 {
				t.Fatalf("resumed clock %+v, %d runs", c, rec.count())
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the resumed advance never finished")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A reading carried by the request (taken with the API key) answers Now without the store;
// a reading of another scope is ignored.
func TestNowUsesTheRequestsClockReading(t *testing.T) {
	svc, st, _ := newSvc(t)
	stored := realNow.Add(48 * time.Hour)
	st.w.rows[scope] = &memRow{frozen: &stored}
	carried := realNow.Add(time.Hour)

	got, err := svc.Now(core.WithClockReading(context.Background(), scope, &carried), scope)
	if err != nil || !got.Equal(carried) {
		t.Fatalf("Now with a frozen reading = %v, %v; want %v", got, err, carried)
	}
	got, _ = svc.Now(core.WithClockReading(context.Background(), scope, nil), scope)
	if !got.Equal(realNow) {
		t.Fatalf("Now with a real-time reading = %v; want %v", got, realNow)
	}
	other := core.Scope{MerchantID: "mer_other", Env: core.EnvTest}
	got, _ = svc.Now(core.WithClockReading(context.Background(), other, &carried), scope)
	if !got.Equal(stored) {
		t.Fatalf("a reading of another scope must be ignored: got %v, want the stored %v", got, stored)
	}
}

// schedule is a processor with work at fixed times, which it tells (NextDuer); it logs
// "name@offset" as it does it.
type schedule struct {
	name string
	due  []time.Duration // offsets from realNow, pending
	log  *[]string
}

func (s *schedule) ProcessDue(_ context.Context, _ *core.Scope, until time.Time) (int, error) {
	n := 0
	var left []time.Duration
	for _, d := range s.due {
		if !realNow.Add(d).After(until) {
			*s.log = append(*s.log, s.name+"@"+d.String())
			n++
		} else {
			left = append(left, d)
		}
	}
	s.due = left
	return n, nil
}

func (s *schedule) NextDue(_ context.Context, _ core.Scope, until time.Time) (time.Time, bool, error) {
	var next time.Time
	found := false
	for _, d := range s.due {
		if at := realNow.Add(d); !at.After(until) && (!found || at.Before(next)) {
			next, found = at, true
		}
	}
	return next, found, nil
}

// Work of several processors runs in time order (registration order at a tie), and nothing
// after the target runs.
func TestAdvanceRunsProcessorsInTimeOrder(t *testing.T) {
	t.Parallel()
	var log []string
	expiry := &schedule{name: "expiry", due: []time.Duration{time.Minute, 3 * time.Minute, time.Hour}, log: &log}
	settle := &schedule{name: "settle", due: []time.Duration{2 * time.Minute, 3 * time.Minute, 5 * time.Minute, 2 * time.Hour}, log: &log}
	st := newMemStore()
	frozen := realNow
	st.w.rows[scope] = &memRow{frozen: &frozen}
	svc := newService(t, st, core.FixedClock{T: realNow}, time.Second, expiry, settle)
	if _, err := svc.Advance(context.Background(), scope, p(int64(90*60)), nil); err != nil {
		t.Fatal(err)
	}
	want := []string{"expiry@1m0s", "settle@2m0s", "expiry@3m0s", "settle@3m0s", "settle@5m0s", "expiry@1h0m0s"}
	if fmt.Sprint(log) != fmt.Sprint(want) {
		t.Fatalf("log %v, want %v", log, want)
	}
	if len(settle.due) != 1 {
		t.Fatalf("work after the target ran: %v left", settle.due)
	}
}
