package testclock

import (
	"context"
	"errors"
	"fmt"
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
)

type memStore struct {
	mu     sync.Mutex
	frozen map[core.Scope]time.Time
	claims map[core.Scope]string
}

func (m *memStore) FrozenTime(_ context.Context, s core.Scope) (*time.Time, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t, ok := m.frozen[s]; ok {
		return &t, nil
	}
	return nil, nil
}

func (m *memStore) ClaimAdvance(_ context.Context, s core.Scope, token string, _ time.Duration) (*time.Time, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.claims == nil {
		m.claims = map[core.Scope]string{}
	}
	if m.claims[s] != "" {
		return nil, false, nil
	}
	m.claims[s] = token
	if t, ok := m.frozen[s]; ok {
		return &t, true, nil
	}
	return nil, true, nil
}

func (m *memStore) FinishAdvance(_ context.Context, s core.Scope, token string, target time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.claims[s] != token {
		return false, nil
	}
	delete(m.claims, s)
	m.frozen[s] = target
	return true, nil
}

func (m *memStore) ReleaseAdvance(_ context.Context, s core.Scope, token string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.claims[s] == token {
		delete(m.claims, s)
	}
	return nil
}

// newService builds the clocks over a registry holding procs, in order.
func newService(st Store, clock core.Clock, procs ...ports.DueProcessor) *Service {
	due := scheduler.NewRegistry()
	for i, p := range procs {
		due.Register(fmt.Sprintf("processor %d", i), p)
	}
	return NewService(st, clock, due)
}

type recorder struct {
	calls []time.Time
	err   error
}

func (r *recorder) ProcessDue(_ context.Context, s *core.Scope, until time.Time) (int, error) {
	if s == nil || *s != scope {
		panic("advance must pass its scope")
	}
	r.calls = append(r.calls, until)
	return 0, r.err
}

func newSvc() (*Service, *memStore, *recorder) {
	st := &memStore{frozen: map[core.Scope]time.Time{}}
	rec := &recorder{}
	return newService(st, core.FixedClock{T: realNow}, rec), st, rec
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
			svc, st, rec := newSvc()
			c, err := svc.Advance(context.Background(), tc.scope, tc.seconds, tc.to)
			if tc.code != "" {
				var ce *core.Error
				if !errors.As(err, &ce) || ce.Code != tc.code || ce.Param != tc.param {
					t.Fatalf("want %s (%s), got %v", tc.code, tc.param, err)
				}
				if len(rec.calls) != 0 || len(st.frozen) != 0 {
					t.Fatal("a refused advance had effects")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.FrozenTime == nil || !c.FrozenTime.Equal(tc.wantTarget) || !c.Now.Equal(tc.wantTarget) {
				t.Fatalf("clock %+v, want %v", c, tc.wantTarget)
			}
			if len(rec.calls) != 1 || !rec.calls[0].Equal(tc.wantTarget) {
				t.Fatalf("processor calls %v", rec.calls)
			}
		})
	}
}

func TestClockFreezesAfterAdvance(t *testing.T) {
	t.Parallel()
	svc, _, rec := newSvc()
	ctx := context.Background()
	c, err := svc.Get(ctx, scope)
	if err != nil || c.FrozenTime != nil || !c.Now.Equal(realNow) {
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
	if len(rec.calls) != 2 {
		t.Fatalf("calls %v", rec.calls)
	}
}

func TestAdvanceProcessorFailureLeavesClock(t *testing.T) {
	t.Parallel()
	st := &memStore{frozen: map[core.Scope]time.Time{}}
	rec, extra := &recorder{}, &recorder{}
	svc := newService(st, core.FixedClock{T: realNow}, rec, extra)
	rec.err = errors.New("boom")
	if _, err := svc.Advance(context.Background(), scope, p(60), nil); err == nil {
		t.Fatal("want error")
	}
	if len(st.frozen) != 0 || len(st.claims) != 0 || len(extra.calls) != 0 {
		t.Fatal("clock moved or later processor ran after a failure")
	}
	rec.err = nil
	if _, err := svc.Advance(context.Background(), scope, p(60), nil); err != nil {
		t.Fatal(err)
	}
	if len(extra.calls) != 1 {
		t.Fatal("added processor not run")
	}
}

// A reading carried by the request (taken with the API key) answers Now without the store;
// a reading of another scope is ignored.
func TestNowUsesTheRequestsClockReading(t *testing.T) {
	svc, st, _ := newSvc()
	stored := realNow.Add(48 * time.Hour)
	st.frozen[scope] = stored
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

// schedule is a processor with work at fixed times; it logs "name@offset" as it does it.
// With next set it also implements NextDuer.
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

type steppedSchedule struct{ *schedule }

func (s steppedSchedule) NextDue(_ context.Context, _ core.Scope, until time.Time) (time.Time, bool, error) {
	var next time.Time
	found := false
	for _, d := range s.due {
		if at := realNow.Add(d); !at.After(until) && (!found || at.Before(next)) {
			next, found = at, true
		}
	}
	return next, found, nil
}

// Work of several processors runs in time order when one of them tells its due times, and
// processors without NextDue still run (at the next moment, or at the end).
func TestAdvanceRunsProcessorsInTimeOrder(t *testing.T) {
	t.Parallel()
	var log []string
	plain := &schedule{name: "expiry", due: []time.Duration{time.Minute, 3 * time.Minute, time.Hour}, log: &log}
	stepped := steppedSchedule{&schedule{name: "settle", due: []time.Duration{2 * time.Minute, 3 * time.Minute, 5 * time.Minute, 2 * time.Hour}, log: &log}}
	st := &memStore{frozen: map[core.Scope]time.Time{scope: realNow}}
	svc := newService(st, core.FixedClock{T: realNow}, plain, stepped)
	if _, err := svc.Advance(context.Background(), scope, p(int64(90*60)), nil); err != nil {
		t.Fatal(err)
	}
	want := []string{"expiry@1m0s", "settle@2m0s", "expiry@3m0s", "settle@3m0s", "settle@5m0s", "expiry@1h0m0s"}
	if len(log) != len(want) {
		t.Fatalf("log %v, want %v", log, want)
	}
	for i := range want {
		if log[i] != want[i] {
			t.Fatalf("log %v, want %v", log, want)
		}
	}
	if len(stepped.due) != 1 {
		t.Fatalf("work after the target ran: %v left", stepped.due)
	}
}
