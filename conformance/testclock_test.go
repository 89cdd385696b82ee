package conformance

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/conformance/harness"
)

// clockPost posts a raw advance body with key.
func clockPost(t *testing.T, key, body string) Raw {
	t.Helper()
	return raw(t, "POST", "/v1/test_helpers/clock/advance", key, body, nil)
}

func TestClock(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "D12", "a new clock follows real time: frozen_time null, now ≈ real time", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		before := time.Now().Unix()
		c := clockGet(t, m.Test)
		after := time.Now().Unix()
		if c.Object != "test_clock" || c.FrozenTime != nil {
			t.Fatalf("clock = %+v, want object test_clock, frozen_time null", c)
		}
		if c.Now < before-2 || c.Now > after+2 {
			t.Fatalf("now = %d, want ≈ real time [%d, %d]", c.Now, before, after)
		}
		r := raw(t, "GET", "/v1/test_helpers/clock", m.TestKey, "", nil)
		if !jsonHasNull(t, r.Body, "frozen_time") {
			t.Fatalf("frozen_time is not null in %s", r.Body)
		}
	})

	harness.Rule(t, "D12", "advance by seconds moves the clock and freezes it", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		start := time.Now().Unix()
		c := clockAdvance(t, m.Test, 3600)
		if c.FrozenTime == nil || *c.FrozenTime != c.Now || c.Now < start+3600 || c.Now > time.Now().Unix()+3600+1 {
			t.Fatalf("after +3600: %+v (real start %d)", c, start)
		}
		time.Sleep(1100 * time.Millisecond)
		if g := clockGet(t, m.Test); g.Now != c.Now || g.FrozenTime == nil || *g.FrozenTime != c.Now {
			t.Fatalf("frozen clock moved: %+v then %+v", c, g)
		}
		c2 := clockAdvance(t, m.Test, 1)
		if c2.Now != c.Now+1 {
			t.Fatalf("+1 from %d gave %d", c.Now, c2.Now)
		}
		c3 := clockAdvance(t, m.Test, 63_072_000)
		if c3.Now != c2.Now+63_072_000 {
			t.Fatalf("+2 years from %d gave %d", c2.Now, c3.Now)
		}
	})

	harness.Rule(t, "D12", "advance to a later time sets the clock to it", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		now := clockFreeze(t, m.Test)
		to := now + 86400
		r := clockPost(t, m.TestKey, fmt.Sprintf(`{"to": %d}`, to))
		if r.Status != 200 {
			t.Fatalf("advance to: %d %s", r.Status, r.Body)
		}
		if c := clockGet(t, m.Test); c.Now != to || c.FrozenTime == nil || *c.FrozenTime != to {
			t.Fatalf("clock = %+v, want %d", c, to)
		}
		// At most two years ahead.
		if r := clockPost(t, m.TestKey, fmt.Sprintf(`{"to": %d}`, to+63_072_000)); r.Status != 200 {
			t.Fatalf("advance to +2 years: %d %s", r.Status, r.Body)
		}
	})

	harness.Rule(t, "D12", "advance to the past, to now or beyond two years gives 400 to_invalid", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		now := clockFreeze(t, m.Test)
		for _, to := range []int64{now - 1, now, 0, now + 63_072_001} {
			csWantErr(t, clockPost(t, m.TestKey, fmt.Sprintf(`{"to": %d}`, to)), 400, "invalid_request", "to_invalid", "to")
		}
		if c := clockGet(t, m.Test); c.Now != now {
			t.Fatalf("a refused advance moved the clock: %d → %d", now, c.Now)
		}
		// On a clock that follows real time, "now" is real time.
		m2 := newMerchant(t, true)
		csWantErr(t, clockPost(t, m2.TestKey, fmt.Sprintf(`{"to": %d}`, time.Now().Unix()-5)), 400, "invalid_request", "to_invalid", "to")
	})

	harness.Rule(t, "D12", "seconds and to together give 400 to_invalid", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		to := time.Now().Unix() + 3600
		csWantErr(t, clockPost(t, m.TestKey, fmt.Sprintf(`{"seconds": 60, "to": %d}`, to)), 400, "invalid_request", "to_invalid", "to")
		if c := clockGet(t, m.Test); c.FrozenTime != nil {
			t.Fatalf("a refused advance froze the clock: %+v", c)
		}
	})

	harness.Rule(t, "D12", "neither seconds nor to gives parameter_missing seconds", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		csWantErr(t, clockPost(t, m.TestKey, `{}`), 400, "invalid_request", "parameter_missing", "seconds")
		r := raw(t, "POST", "/v1/test_helpers/clock/advance", m.TestKey, "", map[string]string{"Content-Type": "application/json"})
		csWantErr(t, r, 400, "invalid_request", "parameter_missing", "seconds")
	})

	harness.Rule(t, "D12", "seconds outside 1..63,072,000 gives seconds_invalid", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		for _, s := range []string{"0", "-1", "63072001", "1.5", `"60"`} {
			csWantErr(t, clockPost(t, m.TestKey, `{"seconds": `+s+`}`), 400, "invalid_request", "seconds_invalid", "seconds")
		}
		if c := clockGet(t, m.Test); c.FrozenTime != nil {
			t.Fatalf("a refused advance froze the clock: %+v", c)
		}
	})

	harness.Rule(t, "D12", "an unknown advance field gives parameter_unknown", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		csWantErr(t, clockPost(t, m.TestKey, `{"seconds": 60, "days": 1}`), 400, "invalid_request", "parameter_unknown", "days")
	})

	harness.Rule(t, "D12", "a live key gets 403 permission_error/test_mode_only on GET and advance", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		g, err := m.Live.GetTestClockWithResponse(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, g, g.HTTPResponse, g.Body, 403, "permission_error", "test_mode_only", "")
		csWantErr(t, clockPost(t, m.LiveKey, `{"seconds": 60}`), 403, "permission_error", "test_mode_only", "")
		// Not onboarded either: still test_mode_only, not merchant_not_ready.
		n := newMerchant(t, false)
		csWantErr(t, clockPost(t, n.LiveKey, `{"seconds": 60}`), 403, "permission_error", "test_mode_only", "")
		// The live environment keeps real time: a live session created after the refused
		// advance is stamped now.
		s := csCreate(t, m.Live, sessionBody())
		if d := s.Created - time.Now().Unix(); d < -5 || d > 5 {
			t.Fatalf("live session created %d, real time %d", s.Created, time.Now().Unix())
		}
	})

	harness.Rule(t, "D12", "advancing a test clock does not touch the live environment of the same merchant", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		live := csCreate(t, m.Live, sessionBody())
		clockAdvance(t, m.Test, 2*86400)
		if g := csGet(t, m.Live, live.Id); g.Status != "open" {
			t.Fatalf("live session status = %s after a test clock advance, want open", g.Status)
		}
		s := csCreate(t, m.Live, sessionBody())
		if d := s.Created - time.Now().Unix(); d < -5 || d > 5 {
			t.Fatalf("live session created %d, real time %d", s.Created, time.Now().Unix())
		}
	})

	harness.Rule(t, "ISO", "one merchant's clock does not move another's", func(t *testing.T) {
		t.Parallel()
		a, b := newMerchant(t, true), newMerchant(t, true)
		sb := csCreate(t, b.Test, sessionBody())
		clockAdvance(t, a.Test, 10*86400)
		c := clockGet(t, b.Test)
		if c.FrozenTime != nil || c.Now > time.Now().Unix()+2 {
			t.Fatalf("merchant B's clock = %+v after A advanced", c)
		}
		if g := csGet(t, b.Test, sb.Id); g.Status != "open" {
			t.Fatalf("B's session status = %s after A advanced, want open", g.Status)
		}
		if evs := evtForSession(t, b.Test, csExpiredEvent, sb.Id); len(evs) != 0 {
			t.Fatalf("B has %d expired events", len(evs))
		}
	})
}
