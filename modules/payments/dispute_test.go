package payments

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// The dispute fee is 15.00 EUR at the rate locked with the payment's fee, half-up to the
// charge currency's minor unit.
func TestDisputeFeeFor(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		cur  string
		rate string
		want int64
	}{
		{"EUR", "1", 1500},
		{"USD", "1.1625", 1744},   // 1743.75 → 1744
		{"JPY", "162.59", 2439},   // 2438.85 → 2439
		{"GBP", "0.86535", 1298},  // 1298.025 → 1298
		{"SEK", "11.0333", 16550}, // 16549.95 → 16550
	} {
		f, err := DisputeFeeFor(core.Currency(c.cur), c.rate, fixtureDay)
		if err != nil || f.Amount != c.want || f.EUR != 1500 || f.Rate != c.rate {
			t.Errorf("%s at %s: %+v %v, want %d", c.cur, c.rate, f, err, c.want)
		}
	}
	if _, err := DisputeFeeFor("EUR", "1.1", fixtureDay); err == nil {
		t.Error("EUR at a rate other than 1 accepted")
	}
	if _, err := DisputeFeeFor("USD", "", fixtureDay); err == nil {
		t.Error("no rate accepted")
	}
}

func openTestDispute(t *testing.T) (*Payment, *Dispute) {
	t.Helper()
	p := mustPayment(t, func(n *NewPaymentParams) { n.Fee.Rate = "1.1625" })
	d, err := OpenDisputeOn(p, "fraudulent", t0)
	if err != nil {
		t.Fatal(err)
	}
	if d.Status() != DisputeNeedsResponse || !d.EvidenceDueBy().Equal(t0.Add(7*24*time.Hour)) || d.Fee().Amount != 1744 ||
		p.Status() != StatusDisputed {
		t.Fatalf("opened %+v, payment %s", d.Snapshot(), p.Status())
	}
	return p, d
}

func TestDisputeEvidenceAndOutcome(t *testing.T) {
	t.Parallel()
	t.Run("won with winning_evidence returns the payment to its state", func(t *testing.T) {
		p, d := openTestDispute(t)
		if due := d.DueAt(); due == nil || !due.Equal(d.EvidenceDueBy()) {
			t.Fatalf("due %v", due)
		}
		if moved, err := d.SaveEvidence("draft", false, t0.Add(time.Hour)); err != nil || moved || d.Status() != DisputeNeedsResponse {
			t.Fatalf("draft: %v %v %s", moved, err, d.Status())
		}
		at := t0.Add(2 * time.Hour)
		if moved, err := d.SaveEvidence("receipt winning_evidence", true, at); err != nil || !moved || d.Status() != DisputeUnderReview {
			t.Fatalf("submit: %v %v %s", moved, err, d.Status())
		}
		if due := d.DueAt(); due == nil || !due.Equal(at.Add(ReviewDelay)) {
			t.Fatalf("review due %v", due)
		}
		if SandboxOutcome(d) != DisputeWon {
			t.Fatal("winning evidence not won")
		}
		if err := d.Close(p, DisputeWon, at.Add(ReviewDelay)); err != nil || p.Status() != StatusSucceeded || d.DueAt() != nil || d.PastDue(at) {
			t.Fatalf("won: %v payment %s", err, p.Status())
		}
		if err := d.Close(p, DisputeLost, at); !errors.Is(err, ErrDisputeNotOpen) {
			t.Fatalf("closed twice: %v", err)
		}
		if _, err := d.SaveEvidence("more", true, at); !errors.Is(err, ErrDisputeNotAcceptingEvidence) {
			t.Fatalf("evidence on a closed dispute: %v", err)
		}
	})
	t.Run("other evidence is lost and the payment stays disputed", func(t *testing.T) {
		p, d := openTestDispute(t)
		if _, err := d.SaveEvidence("the goods were delivered", true, t0); err != nil {
			t.Fatal(err)
		}
		if SandboxOutcome(d) != DisputeLost {
			t.Fatal("other evidence won")
		}
		if err := d.Close(p, DisputeLost, t0.Add(ReviewDelay)); err != nil || p.Status() != StatusDisputed || !p.DisputeLost() || d.PastDue(t0) {
			t.Fatalf("lost: %v %s", err, p.Status())
		}
	})
	t.Run("no evidence by the deadline is lost, past due; late evidence is refused", func(t *testing.T) {
		p, d := openTestDispute(t)
		if !d.PastDue(d.EvidenceDueBy()) || d.PastDue(d.EvidenceDueBy().Add(-time.Second)) {
			t.Fatal("past_due at the deadline")
		}
		if _, err := d.SaveEvidence("late", true, d.EvidenceDueBy()); !errors.Is(err, ErrEvidenceWindowClosed) {
			t.Fatalf("evidence at the deadline: %v", err)
		}
		if SandboxOutcome(d) != DisputeLost {
			t.Fatal("no evidence won")
		}
		if err := d.Close(p, DisputeLost, d.EvidenceDueBy()); err != nil || !d.PastDue(time.Time{}) {
			t.Fatalf("lost late: %v %+v", err, d.Snapshot())
		}
	})
	t.Run("evidence is validated before the state", func(t *testing.T) {
		_, d := openTestDispute(t)
		if _, err := d.SaveEvidence(strings.Repeat("é", MaxEvidenceRunes+1), false, t0); !errors.Is(err, ErrEvidenceTooLong) {
			t.Fatalf("too long: %v", err)
		}
		if _, err := d.SaveEvidence(" \n", true, t0); !errors.Is(err, ErrEvidenceMissing) {
			t.Fatalf("empty submission: %v", err)
		}
		if _, err := d.SaveEvidence(strings.Repeat("é", MaxEvidenceRunes), false, t0); err != nil {
			t.Fatalf("at the limit: %v", err)
		}
		if back := RestoreDispute(d.Snapshot()); back.Evidence() != d.Evidence() || back.Changed() {
			t.Fatal("snapshot round trip")
		}
	})
}
