package checkout

import (
	"testing"

	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/ports"
)

// A session reports exactly the parts its transitions changed since it was loaded, so that a
// repository writes those and nothing else (SessionRepository.Save); a refused transition and
// a no-op report nothing.
func TestSessionReportsWhatChanged(t *testing.T) {
	t.Parallel()
	svc, _, _ := newTestService(t)
	base := mustCreate(t, svc, testScope).Snapshot()
	load := func() *Session {
		s := RehydrateSession(base)
		if s.Changes() != 0 {
			t.Fatalf("a loaded session reports changes %b", s.Changes())
		}
		return s
	}
	for _, tc := range []struct {
		name   string
		change func(s *Session)
		want   Changes
	}{
		{"nothing", func(*Session) {}, 0},
		{"no pending charge to clear", func(s *Session) { s.clearPending() }, 0},
		{"no charge in flight to stop", func(s *Session) { s.stopCharging() }, 0},
		{"expire", func(s *Session) { _ = s.Expire() }, ChangedStatus},
		{"cancel", func(s *Session) { _ = s.Cancel(t0) }, ChangedStatus},
		{"cancel refused (due)", func(s *Session) { _ = s.Cancel(t0.Add(Lifetime)) }, 0},
		{"attempt in flight", func(s *Session) { s.startCharging(payments.AttemptKey(s.ID(), s.nextAttempt())) }, ChangedBuyer},
		{"decline", func(s *Session) { s.recordDecline() }, ChangedBuyer},
		{"pending", func(s *Session) {
			s.setPending(PendingCharge{ProcessorRef: "ref", Method: ports.MethodCard})
		}, ChangedBuyer},
		{"complete", func(s *Session) {
			s.startCharging("k")
			if err := s.complete(testPayment(t, s), t0); err != nil {
				t.Fatal(err)
			}
		}, ChangedStatus | ChangedBuyer},
	} {
		s := load()
		tc.change(s)
		if got := s.Changes(); got != tc.want {
			t.Errorf("%s: changes %b, want %b", tc.name, got, tc.want)
		}
		if tc.want != 0 && !s.Changes().Has(tc.want) {
			t.Errorf("%s: Has", tc.name)
		}
	}
	// A refused transition on a complete session changes nothing.
	done := RehydrateSession(base)
	done.startCharging("k")
	if err := done.complete(testPayment(t, done), t0); err != nil {
		t.Fatal(err)
	}
	again := RehydrateSession(done.Snapshot())
	if err := again.Expire(); err == nil || again.Changes() != 0 {
		t.Fatalf("expire of a complete session: %v, changes %b", err, again.Changes())
	}
}
