package mail

import (
	"context"
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
// the queue through SKIP LOCKED claims and leases; a mail is sent at most once unless a worker
// dies between the mail server's acceptance and recording it (then it is retried when its
// lease ends).
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
// made. The attempts of a batch are sent one after another, so a slow mail server could keep
// the last ones past their lease, when another worker may claim and send them again. Before
// each attempt the round therefore stops when ctx is done or when the lease no longer covers
// SendTimeout; the mails not attempted are claimed again once their lease ends.
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
		for i, j := range jobs {
			if ctx.Err() != nil {
				return n, ctx.Err()
			}
			if w.clock.Now().After(lastStart) {
				w.o.Log.Warn("mail: lease too short for the rest of the batch; left for a later claim",
					"left", len(jobs)-i, "lease", w.o.Lease.String())
				return n, nil
			}
			w.send(ctx, j)
			n++
		}
		if len(jobs) < w.o.Batch || ctx.Err() != nil {
			return n, ctx.Err()
		}
	}
}

// send makes one attempt, bounded by SendTimeout, and records it. It detaches from ctx's
// cancellation, so a started attempt is finished and recorded rather than left to its lease.
func (w *Worker) send(ctx context.Context, j *Job) {
	ctx = context.WithoutCancel(ctx)
	actx, cancelAttempt := context.WithTimeout(ctx, w.o.SendTimeout)
	err := w.attempt(actx, j)
	cancelAttempt()
	now := w.clock.Now()
	o := Outcome{Status: Sent, At: now}
	if err != nil {
		o = Decide(j.Attempt, err, now)
		w.o.Log.Warn("mail: send failed", "mail", j.ID, "kind", string(j.Mail.Kind), "subject", j.Mail.SubjectID,
			"attempt", j.Attempt, "outcome", string(o.Status), "error", o.Error)
	}
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := w.store.RecordMail(rctx, j, o); err != nil {
		w.o.Log.Error("mail: record outcome", "mail", j.ID, "error", err.Error())
	}
}

func (w *Worker) attempt(ctx context.Context, j *Job) error {
	m, err := w.compose.compose(ctx, j.Mail)
	if err != nil {
		return err
	}
	return w.mailer.Send(ctx, m)
}
