package mail

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// DefaultSendTimeout bounds one attempt (rendering and sending). It matches the
// SMTP adapter's own bound on a send (twice email.DefaultSMTPTimeout).
const DefaultSendTimeout = 30 * time.Second

// WorkerOptions tune a Worker; zero values take the defaults.
type WorkerOptions struct {
	Batch int           // mails per claim; default 20
	Lease time.Duration // reservation of a claimed mail; default 2 min, at least 2 × SendTimeout
	// SendTimeout bounds one attempt; default DefaultSendTimeout. A claimed mail is
	// only attempted while its lease still covers SendTimeout; the rest of the batch is left
	// to be claimed again when the lease ends.
	SendTimeout  time.Duration
	PollInterval time.Duration // longest sleep between rounds; default 2 s
	Log          *slog.Logger  // default slog.Default()
}

// Worker sends queued mail after commit. Several workers, in one process or several, share
// the queue through SKIP LOCKED claims and leases. A worker that dies after delivering and
// before recording leaves its mails claimed; they are claimed again when the lease ends and
// delivered again, each with the same ports.Message.MailID (the queued mail's id). What that
// means depends on the mailer:
//
//   - The development mailbox lives in the database of the queue and keeps one message per
//     MailID: the second delivery keeps nothing new, so every mail is in the mailbox exactly
//     once, however the worker dies. (Its batch is kept by one statement and marked sent by
//     another, in separate transactions, and that is safe because of the key.)
//   - SMTP stays at-least-once: nothing in SMTP lets a client ask whether the server already
//     accepted a message, and the server's acceptance and our record cannot commit together,
//     so a worker that dies between them sends those mails again (a batch of one: each mail is
//     recorded as soon as the server accepts it). The repeated mail carries the same
//     Message-ID, derived from the MailID, by which mail systems that deduplicate drop it.
type Worker struct {
	store   Store
	compose Composers
	mailer  ports.Mailer
	clock   core.Clock
	o       WorkerOptions
}

// NewWorker returns the worker; compose has the composer of every kind of mail queued.
func NewWorker(store Store, compose Composers, mailer ports.Mailer, clock core.Clock, o WorkerOptions) *Worker {
	if o.Batch <= 0 {
		o.Batch = 20
	}
	if o.SendTimeout <= 0 {
		o.SendTimeout = DefaultSendTimeout
	}
	if o.Lease <= 0 {
		o.Lease = 2 * time.Minute
	}
	o.Lease = max(o.Lease, 2*o.SendTimeout) // room for at least one attempt per claim
	if o.PollInterval <= 0 {
		o.PollInterval = 2 * time.Second
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	return &Worker{store: store, compose: compose, mailer: mailer, clock: clock, o: o}
}

// Run works until ctx ends: a round, then a sleep until the next mail is due or
// PollInterval, whichever is sooner.
func (w *Worker) Run(ctx context.Context) error {
	for {
		wait := w.o.PollInterval
		if _, err := w.RunOnce(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			w.o.Log.Error("mail: round failed", "error", err.Error())
		} else if at, ok, err := w.store.NextMailDue(ctx); err == nil && ok {
			if d := at.Sub(w.clock.Now()); d < wait {
				wait = max(d, 100*time.Millisecond)
			}
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}

// RunOnce sends every mail due now, batch after batch, and returns how many attempts it
// made. A claimed batch is one attempt of each of its mails: their messages are composed
// together (one read per kind whose composer is a ports.BatchMailComposer), delivered together
// when the mailer is a ports.BatchMailer (the development mailbox: one statement), and their
// outcomes recorded together (one statement). A batch attempt starts only while the lease
// still covers SendTimeout, and is bounded by it, so it ends within the lease.
//
// A mailer that sends one message at a time (SMTP) gets the composed messages one after
// another, each attempt bounded by SendTimeout and recorded as soon as it ends (with the
// outcomes decided before it, such as a receipt that could not be composed), so that a sent
// mail is marked sent well within its lease. A slow mail server could keep the last ones past
// their lease, when another worker may claim and send them again; before each send the round
// therefore stops when ctx is done or when the lease no longer covers SendTimeout, and the
// mails not attempted are claimed again once their lease ends.
func (w *Worker) RunOnce(ctx context.Context) (int, error) {
	n := 0
	for {
		claimed := w.clock.Now()
		jobs, err := w.store.ClaimMail(ctx, claimed, w.o.Lease, w.o.Batch)
		if err != nil {
			return n, err
		}
		// The last moment an attempt may start and still end within the lease.
		lastStart := claimed.Add(w.o.Lease - w.o.SendTimeout)
		made, more := w.sendBatch(ctx, jobs, lastStart)
		n += made
		if !more {
			return n, ctx.Err()
		}
		if len(jobs) < w.o.Batch || ctx.Err() != nil {
			return n, ctx.Err()
		}
	}
}

// sendBatch attempts the claimed jobs and records their outcomes; it returns the attempts
// made and whether the round may go on (false when ctx is done or the lease ran short). Once
// an attempt has started it no longer listens to ctx's cancellation, so that a started
// attempt is finished and recorded rather than left to its lease.
func (w *Worker) sendBatch(ctx context.Context, jobs []*Job, lastStart time.Time) (int, bool) {
	if len(jobs) == 0 {
		return 0, true
	}
	if ctx.Err() != nil || !w.leaseCovers(lastStart, len(jobs)) {
		return 0, false
	}
	detached := context.WithoutCancel(ctx)
	actx, cancelAttempt := context.WithTimeout(detached, w.o.SendTimeout)
	msgs, errs := w.compose.composeAll(actx, jobs)
	if bm, ok := w.mailer.(ports.BatchMailer); ok {
		deliverAll(actx, bm, msgs, errs)
		cancelAttempt()
		now := w.clock.Now()
		rs := make([]Result, len(jobs))
		for i, j := range jobs {
			rs[i] = w.result(j, errs[i], now)
		}
		w.record(detached, rs)
		return len(jobs), true
	}
	cancelAttempt()
	n := 0
	var rs []Result // decided, not recorded yet
	defer func() { w.record(detached, rs) }()
	for i, j := range jobs {
		if errs[i] != nil { // not composed: nothing to send
			rs = append(rs, w.result(j, errs[i], w.clock.Now()))
			n++
			continue
		}
		if ctx.Err() != nil || !w.leaseCovers(lastStart, len(jobs)-i) {
			return n, false
		}
		sctx, cancelSend := context.WithTimeout(detached, w.o.SendTimeout)
		err := w.mailer.Send(sctx, msgs[i])
		cancelSend()
		rs = append(rs, w.result(j, err, w.clock.Now()))
		n++
		w.record(detached, rs)
		rs = nil
	}
	return n, true
}

// leaseCovers reports whether an attempt may start now and end within the lease; when it may
// not, the left mails wait for a later claim.
func (w *Worker) leaseCovers(lastStart time.Time, left int) bool {
	if w.clock.Now().After(lastStart) {
		w.o.Log.Warn("mail: lease too short for the rest of the batch; left for a later claim",
			"left", left, "lease", w.o.Lease.String())
		return false
	}
	return true
}

// result is the outcome of job's attempt, which failed with err (nil: sent), at now. A
// failure is logged with the mail's id, kind and subject, never its address or body.
func (w *Worker) result(j *Job, err error, now time.Time) Result {
	o := Outcome{Status: Sent, At: now}
	if err != nil {
		o = Decide(j.Attempt, err, now)
		w.o.Log.Warn("mail: send failed", "mail", j.ID, "kind", string(j.Mail.Kind), "subject", j.Mail.SubjectID,
			"attempt", j.Attempt, "outcome", string(o.Status), "error", o.Error)
	}
	return Result{Job: j, Outcome: o}
}

// record stores outcomes with one statement.
func (w *Worker) record(ctx context.Context, rs []Result) {
	if len(rs) == 0 {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := w.store.RecordMails(rctx, rs); err != nil {
		ids := make([]string, len(rs))
		for i, r := range rs {
			ids[i] = r.Job.ID
		}
		w.o.Log.Error("mail: record outcomes", "mails", ids, "error", err.Error())
	}
}

// deliverAll sends the composed messages (errs[i] == nil) with one call of m and sets each
// one's error.
func deliverAll(ctx context.Context, m ports.BatchMailer, msgs []ports.Message, errs []error) {
	var idx []int
	var batch []ports.Message
	for i, err := range errs {
		if err == nil {
			idx = append(idx, i)
			batch = append(batch, msgs[i])
		}
	}
	if len(batch) == 0 {
		return
	}
	sent := m.SendBatch(ctx, batch)
	for k, i := range idx {
		if len(sent) != len(batch) {
			errs[i] = fmt.Errorf("mail: the mailer answered %d outcomes for %d messages", len(sent), len(batch))
			continue
		}
		errs[i] = sent[k]
	}
}
