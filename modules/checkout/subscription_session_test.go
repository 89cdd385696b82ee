package checkout

import (
	"errors"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
)

func TestCompleteSubscription(t *testing.T) {
	now := time.Date(2026, 1, 31, 12, 0, 0, 0, time.UTC)
	sub := "sub_" + core.RandomBase62(24)
	open := func() *Session {
		return RehydrateSession(SessionSnapshot{ID: "cs_x", Mode: ModeSubscription, Status: StatusOpen, Subscription: &sub,
			Created: now, ExpiresAt: now.Add(time.Hour)})
	}
	s := open()
	if err := s.completeSubscription(now); err != nil || s.Status() != StatusComplete || !s.Changes().Has(ChangedStatus) {
		t.Fatalf("open session: %v, %s", err, s.Status())
	}
	if err := s.completeSubscription(now); !errors.Is(err, ErrSessionAlreadyCompleted) {
		t.Fatalf("complete twice: %v", err)
	}
	// Lapsed while its first payment was made: it completes all the same.
	if err := open().completeSubscription(now.Add(2 * time.Hour)); err != nil {
		t.Fatalf("lapsed open session: %v", err)
	}
	none := RehydrateSession(SessionSnapshot{ID: "cs_y", Mode: ModeSubscription, Status: StatusOpen})
	if err := none.completeSubscription(now); err == nil {
		t.Fatal("a session without a subscription completed")
	}
	expired := RehydrateSession(SessionSnapshot{ID: "cs_z", Mode: ModeSubscription, Status: StatusExpired, Subscription: &sub})
	if err := expired.completeSubscription(now); !errors.Is(err, ErrSessionExpired) {
		t.Fatalf("expired session: %v", err)
	}
}
