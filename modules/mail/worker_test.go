package mail_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/mail"
	"github.com/kassa-pay/kassa/modules/mail/mailtest"
	"github.com/kassa-pay/kassa/ports"
)

const testKind core.MailKind = "test"

var testScope = core.Scope{MerchantID: "mer_r", Env: core.EnvTest}

// queue is the verified fake queue (mailtest.Queue, held to the Postgres queue's contract)
// with mails queued at t0 by name: mail "a" is subject py_a of testKind in testScope.
type queue struct {
	*mailtest.Queue
	ids map[string]string
}

func newQueue(names ...string) *queue {
	q := &queue{Queue: mailtest.NewQueue(), ids: map[string]string{}}
	for _, n := range names {
		q.add(n, core.Mail{Kind: testKind, Scope: testScope, SubjectID: "py_" + n, Created: t0})
	}
	return q
}

func (q *queue) add(name string, m core.Mail) {
	q.ids[name] = q.Enqueue(t0, m)[0]
}

// state is the mail name as the queue keeps it.
func (q *queue) state(t *testing.T, name string) mailtest.State {
	t.Helper()
	st, ok := q.StateOf(testScope, q.ids[name])
	if !ok {
		t.Fatalf("no mail %s", name)
	}
	return st
}

// untouched reports whether the mail name was claimed once and nothing was recorded for it:
// pending, no error, due when the lease of its claim at claimed ends.
func (q *queue) untouched(t *testing.T, name string, claimed time.Time, lease time.Duration) bool {
	st := q.state(t, name)
	return st.Status == mail.Pending && st.Attempts == 1 && st.LastError == "" && st.Next.Equal(claimed.Add(lease))
}

var t0 = time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)

// composerFunc adapts a function to ports.MailComposer.
type composerFunc func(core.Mail) (ports.Message, error)

func (f composerFunc) ComposeMail(_ context.Context, m core.Mail) (ports.Message, error) { return f(m) }

// mailerFunc adapts a function to ports.Mailer.
type mailerFunc func(ports.Message) error

func (f mailerFunc) Send(_ context.Context, m ports.Message) error { return f(m) }

func TestWorkerRecordsOutcomes(t *testing.T) {
	t.Parallel()
	addr := map[string]string{"ok": "a@example.com", "busy": "b@example.com", "refused": "c@example.com", "unrenderable": "d@example.com"}
	store := newQueue("ok", "busy", "refused", "unrenderable")
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
	compose := mail.Composers{testKind: composerFunc(func(m core.Mail) (ports.Message, error) {
		to := addr[strings.TrimPrefix(m.SubjectID, "py_")]
		if to == "d@example.com" {
			return ports.Message{}, ports.Permanent(errors.New("cannot render"))
		}
		return ports.Message{Scope: m.Scope, To: to, Subject: "Receipt", Text: "x", Headers: map[string]string{"X-Payment": m.SubjectID}}, nil
	})}
	w := mail.NewWorker(store, compose, mailer, core.FixedClock{T: t0}, mail.WorkerOptions{Batch: 3,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	n, err := w.RunOnce(context.Background())
	if err != nil || n != 4 {
		t.Fatalf("%d %v", n, err)
	}
	if len(sent) != 1 || sent[0] != "py_ok" {
		t.Fatalf("sent %v", sent)
	}
	want := map[string]mail.Status{"ok": mail.Sent, "busy": mail.Pending, "refused": mail.Dropped, "unrenderable": mail.Dropped}
	for id, st := range want {
		if got := store.state(t, id); got.Status != st {
			t.Errorf("%s: %+v, want %s", id, got, st)
		}
	}
	if o := store.state(t, "busy"); !o.Next.Equal(t0.Add(mail.Backoff[0])) || o.LastError != "451 mailbox busy" {
		t.Errorf("retry %+v", o)
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

var composeForTest = mail.Composers{testKind: composerFunc(func(m core.Mail) (ports.Message, error) {
	return ports.Message{Scope: m.Scope, To: m.SubjectID + "@example.com", Subject: "Receipt", Text: "x",
		Headers: map[string]string{"X-Payment": m.SubjectID}}, nil
})}

// A batch stops before an attempt its lease can no longer cover: with a 2-minute lease, a
// 30-second send timeout and sends of 40 s, the attempts at 0, 40 and 80 s fit (the last ends
// by 110 s); the one at 120 s would end after the lease and is left for a later claim.
func TestWorkerStopsWhenLeaseCannotCoverASend(t *testing.T) {
	t.Parallel()
	store := newQueue("a", "b", "c", "d", "e")
	clock := &stepClock{t: t0}
	var sent []string
	mailer := mailerFunc(func(m ports.Message) error {
		sent = append(sent, m.Headers["X-Payment"])
		clock.advance(40 * time.Second)
		return nil
	})
	w := mail.NewWorker(store, composeForTest, mailer, clock, mail.WorkerOptions{Batch: 5, Lease: 2 * time.Minute,
		SendTimeout: 30 * time.Second, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	n, err := w.RunOnce(context.Background())
	if err != nil || n != 3 {
		t.Fatalf("%d %v", n, err)
	}
	if len(sent) != 3 || sent[0] != "py_a" || sent[1] != "py_b" || sent[2] != "py_c" {
		t.Fatalf("sent %v", sent)
	}
	for _, id := range []string{"d", "e"} {
		if !store.untouched(t, id, t0, 2*time.Minute) {
			t.Errorf("%s recorded %+v; want it left to its lease", id, store.state(t, id))
		}
	}
	for _, id := range []string{"a", "b", "c"} {
		if store.state(t, id).Status != mail.Sent {
			t.Errorf("%s: %+v", id, store.state(t, id))
		}
	}
}

// Cancelling ctx stops the batch: the attempt under way is finished and recorded, no further
// one is started.
func TestWorkerStopsBatchOnCancel(t *testing.T) {
	t.Parallel()
	store := newQueue("a", "b", "c")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var sent []string
	mailer := mailerFunc(func(m ports.Message) error {
		sent = append(sent, m.Headers["X-Payment"])
		cancel()
		return nil
	})
	w := mail.NewWorker(store, composeForTest, mailer, core.FixedClock{T: t0}, mail.WorkerOptions{Batch: 3,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	n, err := w.RunOnce(ctx)
	if !errors.Is(err, context.Canceled) || n != 1 {
		t.Fatalf("%d %v", n, err)
	}
	if len(sent) != 1 || sent[0] != "py_a" {
		t.Fatalf("sent %v", sent)
	}
	if store.state(t, "a").Status != mail.Sent {
		t.Errorf("a: %+v", store.state(t, "a"))
	}
	for _, id := range []string{"b", "c"} {
		if !store.untouched(t, id, t0, 2*time.Minute) {
			t.Errorf("%s: %+v, want it left to its lease", id, store.state(t, id))
		}
	}
}

func TestDecide(t *testing.T) {
	t.Parallel()
	transient := errors.New("451 try later")
	if o := mail.Decide(1, transient, t0); o.Status != mail.Pending || !o.NextAttempt.Equal(t0.Add(mail.Backoff[0])) {
		t.Errorf("first transient failure: %+v", o)
	}
	if o := mail.Decide(len(mail.Backoff), transient, t0); o.Status != mail.Pending {
		t.Errorf("last retry: %+v", o)
	}
	if o := mail.Decide(len(mail.Backoff)+1, transient, t0); o.Status != mail.Dropped {
		t.Errorf("attempts exhausted: %+v", o)
	}
	if o := mail.Decide(1, ports.Permanent(errors.New("550")), t0); o.Status != mail.Dropped || o.Error == "" {
		t.Errorf("permanent: %+v", o)
	}
}

// A mail of a kind no module registered a composer for is dropped, never retried.
func TestWorkerDropsMailOfAnUnknownKind(t *testing.T) {
	t.Parallel()
	store := newQueue()
	store.add("x", core.Mail{Kind: "newsletter", Scope: testScope, SubjectID: "sub_1", Created: t0})
	mailer := mailerFunc(func(ports.Message) error { t.Error("sent"); return nil })
	w := mail.NewWorker(store, composeForTest, mailer, core.FixedClock{T: t0}, mail.WorkerOptions{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if n, err := w.RunOnce(context.Background()); err != nil || n != 1 {
		t.Fatalf("%d %v", n, err)
	}
	if o := store.state(t, "x"); o.Status != mail.Dropped || !strings.Contains(o.LastError, "newsletter") {
		t.Fatalf("outcome %+v", o)
	}
}

// batchMailer is a ports.BatchMailer that fails the messages to refused@ permanently and
// counts its calls.
type batchMailer struct {
	calls int
	sent  []string
	at    func() // called on each SendBatch
}

func (b *batchMailer) Send(ctx context.Context, m ports.Message) error {
	return b.SendBatch(ctx, []ports.Message{m})[0]
}

func (b *batchMailer) SendBatch(_ context.Context, ms []ports.Message) []error {
	b.calls++
	if b.at != nil {
		b.at()
	}
	errs := make([]error, len(ms))
	for i, m := range ms {
		if m.To == "refused@example.com" {
			errs[i] = ports.Permanent(errors.New("invalid recipient"))
			continue
		}
		b.sent = append(b.sent, m.Headers["X-Payment"])
	}
	return errs
}

// batchComposer is a ports.BatchMailComposer counting its calls; "py_gone" is gone and
// "py_down" cannot be read now.
type batchComposer struct{ calls int }

func (c *batchComposer) ComposeMail(ctx context.Context, m core.Mail) (ports.Message, error) {
	ms, es := c.ComposeMails(ctx, []core.Mail{m})
	return ms[0], es[0]
}

func (c *batchComposer) ComposeMails(_ context.Context, mails []core.Mail) ([]ports.Message, []error) {
	c.calls++
	ms, es := make([]ports.Message, len(mails)), make([]error, len(mails))
	for i, m := range mails {
		switch m.SubjectID {
		case "py_gone":
			es[i] = ports.Permanent(errors.New("payment not found"))
		case "py_down":
			es[i] = errors.New("connection reset")
		case "py_refused":
			ms[i] = ports.Message{Scope: m.Scope, To: "refused@example.com", Subject: "Receipt", Text: "x"}
		default:
			ms[i] = ports.Message{Scope: m.Scope, To: m.SubjectID + "@example.com", Subject: "Receipt", Text: "x",
				Headers: map[string]string{"X-Payment": m.SubjectID}}
		}
	}
	return ms, es
}

// A claimed batch is composed with one call of a batch composer, delivered with one call of a
// batch mailer and recorded with one call of the store; each mail keeps its own outcome, and a
// mail of a kind without a composer is dropped.
func TestWorkerSendsABatchTogether(t *testing.T) {
	t.Parallel()
	store := newQueue("a", "gone", "b", "down", "refused", "c")
	store.add("x", core.Mail{Kind: "newsletter", Scope: testScope, SubjectID: "sub_1", Created: t0})
	comp := &batchComposer{}
	mailer := &batchMailer{}
	w := mail.NewWorker(store, mail.Composers{testKind: comp}, mailer, core.FixedClock{T: t0}, mail.WorkerOptions{Batch: 10,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	n, err := w.RunOnce(context.Background())
	if err != nil || n != 7 {
		t.Fatalf("%d %v", n, err)
	}
	if comp.calls != 1 || mailer.calls != 1 || store.RecordCalls() != 1 {
		t.Fatalf("%d compose, %d send, %d record calls; want one of each", comp.calls, mailer.calls, store.RecordCalls())
	}
	if strings.Join(mailer.sent, " ") != "py_a py_b py_c" {
		t.Fatalf("sent %v", mailer.sent)
	}
	want := map[string]mail.Status{"a": mail.Sent, "b": mail.Sent, "c": mail.Sent, "gone": mail.Dropped, "down": mail.Pending, "refused": mail.Dropped, "x": mail.Dropped}
	for id, st := range want {
		if got := store.state(t, id); got.Status != st || got.Attempts != 1 {
			t.Errorf("%s: %+v, want %s", id, got, st)
		}
	}
	if o := store.state(t, "down"); !o.Next.Equal(t0.Add(mail.Backoff[0])) {
		t.Errorf("retry at %s", o.Next)
	}
}

// A batch whose lease no longer covers SendTimeout when it would start is left whole for a
// later claim: nothing composed, sent or recorded.
func TestWorkerLeavesABatchTheLeaseCannotCover(t *testing.T) {
	t.Parallel()
	store := newQueue("a", "b")
	clock := &stepClock{t: t0}
	comp := &batchComposer{}
	mailer := &batchMailer{}
	// The claim takes long (a busy database): the attempt would start 100 s after it, with
	// a 2-minute lease and a 30-second send timeout.
	w := mail.NewWorker(claimTakes{store, clock, 100 * time.Second}, mail.Composers{testKind: comp}, mailer, clock,
		mail.WorkerOptions{Batch: 5, Lease: 2 * time.Minute, SendTimeout: 30 * time.Second, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	n, err := w.RunOnce(context.Background())
	if err != nil || n != 0 {
		t.Fatalf("%d %v", n, err)
	}
	if comp.calls != 0 || mailer.calls != 0 || store.RecordCalls() != 0 {
		t.Fatalf("%d compose, %d send, %d record calls; want none", comp.calls, mailer.calls, store.RecordCalls())
	}
}

// claimTakes is a Store whose claims take d of the clock.
type claimTakes struct {
	*queue
	clock *stepClock
	d     time.Duration
}

func (c claimTakes) ClaimMail(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]*mail.Job, error) {
	c.clock.advance(c.d)
	return c.queue.ClaimMail(ctx, now, lease, limit)
}

// A batch under way when ctx is cancelled is finished and recorded; no further batch is
// claimed.
func TestWorkerFinishesABatchOnCancel(t *testing.T) {
	t.Parallel()
	store := newQueue("a", "b", "c")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mailer := &batchMailer{at: cancel}
	w := mail.NewWorker(store, mail.Composers{testKind: &batchComposer{}}, mailer, core.FixedClock{T: t0}, mail.WorkerOptions{Batch: 2,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	n, err := w.RunOnce(ctx)
	if !errors.Is(err, context.Canceled) || n != 2 {
		t.Fatalf("%d %v", n, err)
	}
	if store.state(t, "a").Status != mail.Sent || store.state(t, "b").Status != mail.Sent {
		t.Fatalf("a %+v, b %+v", store.state(t, "a"), store.state(t, "b"))
	}
	if c := store.state(t, "c"); c.Status != mail.Pending || c.Attempts != 0 {
		t.Fatalf("c %+v; want it left unclaimed", c)
	}
}

// With a mailer that sends one message at a time, the batch is still composed with one call,
// and each attempt is recorded as soon as it ends, together with the outcomes decided before
// it (a mail that could not be composed).
func TestWorkerRecordsEachSendOfASingleMailer(t *testing.T) {
	t.Parallel()
	store := newQueue("gone", "a", "b", "down")
	comp := &batchComposer{}
	var recordsAtSend []int
	mailer := mailerFunc(func(m ports.Message) error {
		recordsAtSend = append(recordsAtSend, store.RecordCalls())
		return nil
	})
	w := mail.NewWorker(store, mail.Composers{testKind: comp}, mailer, core.FixedClock{T: t0}, mail.WorkerOptions{Batch: 10,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	n, err := w.RunOnce(context.Background())
	if err != nil || n != 4 {
		t.Fatalf("%d %v", n, err)
	}
	if comp.calls != 1 {
		t.Fatalf("%d compose calls", comp.calls)
	}
	// gone+a, b, then down at the end.
	if len(recordsAtSend) != 2 || recordsAtSend[0] != 0 || recordsAtSend[1] != 1 || store.RecordCalls() != 3 {
		t.Fatalf("records before each send %v, %d in all", recordsAtSend, store.RecordCalls())
	}
	want := map[string]mail.Status{"a": mail.Sent, "b": mail.Sent, "gone": mail.Dropped, "down": mail.Pending}
	for id, st := range want {
		if got := store.state(t, id); got.Status != st {
			t.Errorf("%s: %+v, want %s", id, got, st)
		}
	}
}

// Every delivered message carries its queued mail's id, so that a mail delivered again after a
// worker died before recording it is recognised (the mailbox keeps it once, SMTP repeats the
// Message-ID).
func TestWorkerDeliversWithTheMailID(t *testing.T) {
	t.Parallel()
	store := newQueue("1", "2")
	got := map[string]string{}
	mailer := mailerFunc(func(m ports.Message) error { got[m.Subject] = m.MailID; return nil })
	compose := mail.Composers{testKind: composerFunc(func(m core.Mail) (ports.Message, error) {
		return ports.Message{Scope: m.Scope, To: "a@example.com", Subject: m.SubjectID, Text: "x"}, nil
	})}
	w := mail.NewWorker(store, compose, mailer, core.FixedClock{T: t0}, mail.WorkerOptions{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if _, err := w.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got["py_1"] != store.ids["1"] || got["py_2"] != store.ids["2"] || got["py_1"] == got["py_2"] {
		t.Fatalf("mail ids delivered: %v", got)
	}
}
