package payments

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// memReceipts is an in-memory ReceiptStore: jobs are handed out once and outcomes kept.
type memReceipts struct {
	mu       sync.Mutex
	jobs     []*ReceiptJob
	outcomes map[string]ReceiptOutcome
}

func (m *memReceipts) ClaimReceipts(_ context.Context, _ time.Time, _ time.Duration, limit int) ([]*ReceiptJob, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := min(limit, len(m.jobs))
	out := m.jobs[:n]
	m.jobs = m.jobs[n:]
	return out, nil
}

func (m *memReceipts) RecordReceipt(_ context.Context, j *ReceiptJob, o ReceiptOutcome) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.outcomes[j.ID] = o
	return nil
}

func (m *memReceipts) NextReceiptDue(context.Context) (time.Time, bool, error) {
	return time.Time{}, false, nil
}

// mailerFunc adapts a function to ports.Mailer.
type mailerFunc func(ports.Message) error

func (f mailerFunc) Send(_ context.Context, m ports.Message) error { return f(m) }

func TestReceiptWorkerRecordsOutcomes(t *testing.T) {
	t.Parallel()
	scope := core.Scope{MerchantID: "mer_r", Env: core.EnvTest}
	job := func(id, to string) *ReceiptJob {
		return &ReceiptJob{ID: id, Attempt: 1, Receipt: Receipt{Scope: scope, To: to, MerchantName: "Shop", PaymentID: "py_" + id,
			Amount: 1999, Currency: "EUR", Date: dueT0}}
	}
	store := &memReceipts{outcomes: map[string]ReceiptOutcome{}, jobs: []*ReceiptJob{
		job("ok", "a@example.com"), job("busy", "b@example.com"), job("refused", "c@example.com"), job("unrenderable", "d@example.com"),
	}}
	var sent []string
	mailer := mailerFunc(func(m ports.Message) error {
		switch m.To {
		case "b@example.com":
			return errors.New("451 mailbox busy")
		case "c@example.com":
			return ports.Permanent(errors.New("550 no such user"))
		}
		sent = append(sent, m.Headers["X-Payment"])
		return nil
	})
	compose := func(r Receipt) (ports.Message, error) {
		if r.To == "d@example.com" {
			return ports.Message{}, ports.Permanent(errors.New("cannot render"))
		}
		return ports.Message{Scope: r.Scope, To: r.To, Subject: "Receipt", Text: "x", Headers: map[string]string{"X-Payment": r.PaymentID}}, nil
	}
	w := NewReceiptWorker(store, compose, mailer, core.FixedClock{T: dueT0}, ReceiptWorkerOptions{Batch: 3,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	n, err := w.RunOnce(context.Background())
	if err != nil || n != 4 {
		t.Fatalf("%d %v", n, err)
	}
	if len(sent) != 1 || sent[0] != "py_ok" {
		t.Fatalf("sent %v", sent)
	}
	want := map[string]ReceiptStatus{"ok": ReceiptSent, "busy": ReceiptPending, "refused": ReceiptDropped, "unrenderable": ReceiptDropped}
	for id, st := range want {
		if got := store.outcomes[id]; got.Status != st {
			t.Errorf("%s: %+v, want %s", id, got, st)
		}
	}
	if o := store.outcomes["busy"]; !o.NextAttempt.Equal(dueT0.Add(ReceiptBackoff[0])) {
		t.Errorf("retry at %s", o.NextAttempt)
	}
}

// stepClock is a clock the test moves forward.
type stepClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *stepClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func receiptJobs(ids ...string) []*ReceiptJob {
	scope := core.Scope{MerchantID: "mer_r", Env: core.EnvTest}
	jobs := make([]*ReceiptJob, len(ids))
	for i, id := range ids {
		jobs[i] = &ReceiptJob{ID: id, Attempt: 1, Receipt: Receipt{Scope: scope, To: id + "@example.com", MerchantName: "Shop",
			PaymentID: "py_" + id, Amount: 1999, Currency: "EUR", Date: dueT0}}
	}
	return jobs
}

func composeForTest(r Receipt) (ports.Message, error) {
	return ports.Message{Scope: r.Scope, To: r.To, Subject: "Receipt", Text: "x", Headers: map[string]string{"X-Payment": r.PaymentID}}, nil
}

// A batch stops before an attempt its lease can no longer cover: with a 2-minute lease, a
// 30-second send timeout and sends of 40 s, the attempts at 0, 40 and 80 s fit (the last ends
// by 110 s); the one at 120 s would end after the lease and is left for a later claim.
func TestReceiptWorkerStopsWhenLeaseCannotCoverASend(t *testing.T) {
	t.Parallel()
	store := &memReceipts{outcomes: map[string]ReceiptOutcome{}, jobs: receiptJobs("a", "b", "c", "d", "e")}
	clock := &stepClock{t: dueT0}
	var sent []string
	mailer := mailerFunc(func(m ports.Message) error {
		sent = append(sent, m.Headers["X-Payment"])
		clock.advance(40 * time.Second)
		return nil
	})
	w := NewReceiptWorker(store, composeForTest, mailer, clock, ReceiptWorkerOptions{Batch: 5, Lease: 2 * time.Minute,
		SendTimeout: 30 * time.Second, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	n, err := w.RunOnce(context.Background())
	if err != nil || n != 3 {
		t.Fatalf("%d %v", n, err)
	}
	if len(sent) != 3 || sent[0] != "py_a" || sent[1] != "py_b" || sent[2] != "py_c" {
		t.Fatalf("sent %v", sent)
	}
	for _, id := range []string{"d", "e"} {
		if o, ok := store.outcomes[id]; ok {
			t.Errorf("%s recorded %+v; want it left to its lease", id, o)
		}
	}
	for _, id := range []string{"a", "b", "c"} {
		if store.outcomes[id].Status != ReceiptSent {
			t.Errorf("%s: %+v", id, store.outcomes[id])
		}
	}
}

// Cancelling ctx stops the batch: the attempt under way is finished and recorded, no further
// one is started.
func TestReceiptWorkerStopsBatchOnCancel(t *testing.T) {
	t.Parallel()
	store := &memReceipts{outcomes: map[string]ReceiptOutcome{}, jobs: receiptJobs("a", "b", "c")}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var sent []string
	mailer := mailerFunc(func(m ports.Message) error {
		sent = append(sent, m.Headers["X-Payment"])
		cancel()
		return nil
	})
	w := NewReceiptWorker(store, composeForTest, mailer, core.FixedClock{T: dueT0}, ReceiptWorkerOptions{Batch: 3,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	n, err := w.RunOnce(ctx)
	if !errors.Is(err, context.Canceled) || n != 1 {
		t.Fatalf("%d %v", n, err)
	}
	if len(sent) != 1 || sent[0] != "py_a" {
		t.Fatalf("sent %v", sent)
	}
	if store.outcomes["a"].Status != ReceiptSent {
		t.Errorf("a: %+v", store.outcomes["a"])
	}
	if len(store.outcomes) != 1 {
		t.Errorf("outcomes %v", store.outcomes)
	}
}
