package testclock

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/ports"
)

// fakePhases is ports.KeyPhases of one keyed request.
type fakePhases struct{ point string }

func (f *fakePhases) Key() ports.IdempotencyKey { return ports.IdempotencyKey{} }
func (f *fakePhases) Point() string             { return f.point }
func (f *fakePhases) Reach(_ context.Context, point string) error {
	f.point = point
	return nil
}

// A keyed advance fixes its target once, as its recovery point: a retry (the same key at that
// point) never computes it again, so an advance by seconds moves the clock once; and a retry
// that finds the clock at its target answers it without running any due work.
func TestAKeyedAdvanceFixesItsTargetOnce(t *testing.T) {
	t.Parallel()
	svc, st, rec := newSvc()
	ph := &fakePhases{}
	ctx := ports.WithKeyPhases(context.Background(), ph)
	c, err := svc.Advance(ctx, scope, p(3600), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := realNow.Add(time.Hour)
	if !c.Now.Equal(want) || ph.point != "target "+itoa(want.Unix()) || len(rec.calls) != 1 {
		t.Fatalf("first: clock %v, point %q, runs %v", c.Now, ph.point, rec.calls)
	}
	// The retry after a crash that lost the answer: the clock is at the target already.
	c, err = svc.Advance(ctx, scope, p(3600), nil)
	if err != nil || !c.Now.Equal(want) || len(rec.calls) != 1 {
		t.Fatalf("retry: clock %v (want %v), runs %v, %v", c.Now, want, rec.calls, err)
	}
	// A retry after a crash before the clock moved runs the advance to the fixed target,
	// not by another hour from wherever the clock is.
	st.mu.Lock()
	st.frozen[scope] = realNow.Add(30 * time.Minute)
	st.mu.Unlock()
	c, err = svc.Advance(ctx, scope, p(3600), nil)
	if err != nil || !c.Now.Equal(want) || len(rec.calls) != 2 || !rec.calls[1].Equal(want) {
		t.Fatalf("resumed: clock %v (want %v), runs %v, %v", c.Now, want, rec.calls, err)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
