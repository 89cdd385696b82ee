package billing_test

import (
	"errors"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/billing"
)

func TestPausedPeriodEndPassesWithoutARenewal(t *testing.T) {
	start := time.Date(2027, 1, 31, 9, 0, 0, 0, time.UTC)
	end := time.Date(2027, 2, 28, 9, 0, 0, 0, time.UTC)
	s := active(start, end)
	if ch, err := s.Pause(nil, start.Add(time.Hour)); err != nil || !ch.Updated {
		t.Fatalf("pause %+v %v", ch, err)
	}
	if s.Status() != billing.StatusActive || s.Paused() == nil {
		t.Fatalf("paused: %s %+v", s.Status(), s.Paused())
	}
	if s.RenewalDue(end) {
		t.Fatal("a paused subscription renews")
	}
	ch, _, err := s.ProcessDue(end)
	snap := s.Snapshot()
	if err != nil || !ch.Updated || !snap.PeriodStart.Equal(end) || !snap.PeriodEnd.Equal(time.Date(2027, 3, 31, 9, 0, 0, 0, time.UTC)) ||
		!snap.Anchor.Equal(start) || snap.LatestInvoice != nil {
		t.Fatalf("period end while paused: %+v %v %+v", ch, err, snap)
	}
	// Resumed mid-period: the current period's end is the next renewal.
	if _, err := s.Resume(end.AddDate(0, 0, 10)); err != nil || s.Paused() != nil {
		t.Fatalf("resume %v", err)
	}
	if at, ok := s.DueAt(); !ok || !at.Equal(snap.PeriodEnd) || !s.RenewalDue(snap.PeriodEnd) {
		t.Fatalf("due after resume %v %v", at, ok)
	}
}

func TestPauseResumesAtResumesAndSkipsMissedPeriods(t *testing.T) {
	start := time.Date(2027, 1, 10, 9, 0, 0, 0, time.UTC)
	end := start.AddDate(0, 1, 0)
	s := active(start, end)
	resume := start.AddDate(0, 2, 5)
	if _, err := s.Pause(&resume, start); err != nil {
		t.Fatal(err)
	}
	// Two period ends pass, then the resumption.
	for i := 0; i < 3; i++ {
		at, ok := s.DueAt()
		if !ok {
			t.Fatal("nothing due")
		}
		if _, _, err := s.ProcessDue(at); err != nil {
			t.Fatal(err)
		}
	}
	snap := s.Snapshot()
	if s.Paused() != nil || !snap.PeriodStart.Equal(start.AddDate(0, 2, 0)) || !snap.PeriodEnd.Equal(start.AddDate(0, 3, 0)) {
		t.Fatalf("after the resumption %+v", snap)
	}
}

func TestPauseRefusals(t *testing.T) {
	start := time.Date(2027, 1, 10, 9, 0, 0, 0, time.UTC)
	s := active(start, start.AddDate(0, 1, 0))
	past := start.Add(-time.Second)
	var ce *core.Error
	if _, err := s.Pause(&past, start); !errors.As(err, &ce) || ce.Param != "resumes_at" {
		t.Fatalf("past resumes_at: %v", err)
	}
	if _, err := s.Resume(start); !errors.Is(err, billing.ErrNotPaused) {
		t.Fatalf("resume unpaused: %v", err)
	}
	snap := s.Snapshot()
	snap.Status = billing.StatusIncomplete
	if _, err := billing.RehydrateSubscription(snap).Pause(nil, start); !errors.Is(err, billing.ErrNotPausable) {
		t.Fatalf("incomplete: %v", err)
	}
	if _, err := s.Cancel(false, start); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Pause(nil, start); !errors.Is(err, billing.ErrSubscriptionEnded) {
		t.Fatalf("canceled: %v", err)
	}
}
