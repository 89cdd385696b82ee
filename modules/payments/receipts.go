package payments

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// Receipt is what a payment receipt e-mail says (interface 3.2, issue 3: amount, merchant,
// reference, last four digits of the card or IBAN). Only those facts ever reach it.
type Receipt struct {
	Scope        core.Scope
	To           string // the payment's customer e-mail
	MerchantName string
	PaymentID    string
	Amount       int64
	Currency     core.Currency
	Reference    string
	CardBrand    string // cards: brand and last four
	CardLast4    string
	IBANLast4    string // SEPA Direct Debit: the account's last four
	// Date is when the payment succeeded, in the scope's time.
	Date time.Time
}

// ReceiptComposer renders a receipt as a message (the e-mail adapter's templates). An error
// that wraps ports.ErrPermanent drops the receipt.
type ReceiptComposer func(Receipt) (ports.Message, error)

// ReceiptJob is one claimed receipt: the attempt it is (1-based) and what to send.
type ReceiptJob struct {
	ID      string
	Attempt int
	Receipt Receipt
}

// ReceiptStatus is the state of a queued receipt.
type ReceiptStatus string

const (
	ReceiptPending ReceiptStatus = "pending" // waiting for an attempt (NextAttempt)
	ReceiptSent    ReceiptStatus = "sent"
	ReceiptDropped ReceiptStatus = "dropped" // permanent failure, or attempts exhausted
)

// ReceiptOutcome is what one attempt ended in.
type ReceiptOutcome struct {
	Status      ReceiptStatus
	NextAttempt time.Time // pending: when to try again
	Error       string    // the failure, without addresses or bodies
	At          time.Time
}

// ReceiptStore is the receipt outbox. Receipts are queued by the payment store (see DueStore)
// in the transaction that makes a payment succeed; the worker claims and records them.
type ReceiptStore interface {
	// ClaimReceipts takes up to limit pending receipts due at now, oldest first, skipping rows
	// others hold (FOR UPDATE SKIP LOCKED), counts the attempt and reserves each until
	// now+lease, so no other worker takes it while it is sent.
	ClaimReceipts(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]*ReceiptJob, error)
	// RecordReceipt stores the outcome of a claimed attempt.
	RecordReceipt(ctx context.Context, job *ReceiptJob, o ReceiptOutcome) error
	// NextReceiptDue returns the earliest next attempt among pending receipts.
	NextReceiptDue(ctx context.Context) (time.Time, bool, error)
}

// ReceiptBackoff is the wait after each failed attempt (transient errors); after the last
// one the receipt is dropped. About a day and a half in all.
var ReceiptBackoff = []time.Duration{
	30 * time.Second, 2 * time.Minute, 10 * time.Minute, 30 * time.Minute, 2 * time.Hour, 6 * time.Hour, 12 * time.Hour, 12 * time.Hour,
}

// DefaultReceiptSendTimeout bounds one receipt attempt (rendering and sending). It matches the
// SMTP adapter's own bound on a send (twice email.DefaultSMTPTimeout).
const DefaultReceiptSendTimeout = 30 * time.Second

// ReceiptWorkerOptions tune a ReceiptWorker; zero values take the defaults.
type ReceiptWorkerOptions struct {
	Batch int           // receipts per claim; default 20
	Lease time.Duration // reservation of a claimed receipt; default 2 min, at least 2 × SendTimeout
	// SendTimeout bounds one attempt; default DefaultReceiptSendTimeout. A claimed receipt is
	// only attempted while its lease still covers SendTimeout; the rest of the batch is left
	// to be claimed again when the lease ends.
	SendTimeout  time.Duration
	PollInterval time.Duration // longest sleep between rounds; default 2 s
	Log          *slog.Logger  // default slog.Default()
}

// ReceiptWorker sends queued receipts after commit, so a slow or absent mail server never
// delays a payment. Several workers, in one process or several, share the queue through SKIP
// LOCKED claims and leases; a receipt is sent at most once unless a worker dies between the
// mail server's acceptance and recording it (then it is retried when its lease ends).
type ReceiptWorker struct {
	store   ReceiptStore
	compose ReceiptComposer
	mailer  ports.Mailer
	clock   core.Clock
	o       ReceiptWorkerOptions
}

// NewReceiptWorker returns the worker.
func NewReceiptWorker(store ReceiptStore, compose ReceiptComposer, mailer ports.Mailer, clock core.Clock, o ReceiptWorkerOptions) *ReceiptWorker {
	if o.Batch <= 0 {
		o.Batch = 20
	}
	if o.SendTimeout <= 0 {
		o.SendTimeout = DefaultReceiptSendTimeout
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
	return &ReceiptWorker{store: store, compose: compose, mailer: mailer, clock: clock, o: o}
}

// Run works until ctx ends: a round, then a sleep until the next receipt is due or
// PollInterval, whichever is sooner.
func (w *ReceiptWorker) Run(ctx context.Context) error {
	for {
		wait := w.o.PollInterval
		if _, err := w.RunOnce(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			w.o.Log.Error("receipts: round failed", "error", err.Error())
		} else if at, ok, err := w.store.NextReceiptDue(ctx); err == nil && ok {
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

// RunOnce sends every receipt due now, batch after batch, and returns how many attempts it
// made. The attempts of a batch are sent one after another, so a slow mail server could keep
// the last ones past their lease, when another worker may claim and send them again. Before
// each attempt the round therefore stops when ctx is done or when the lease no longer covers
// SendTimeout; the receipts not attempted are claimed again once their lease ends.
func (w *ReceiptWorker) RunOnce(ctx context.Context) (int, error) {
	n := 0
	for {
		claimed := w.clock.Now()
		jobs, err := w.store.ClaimReceipts(ctx, claimed, w.o.Lease, w.o.Batch)
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
				w.o.Log.Warn("receipts: lease too short for the rest of the batch; left for a later claim",
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
func (w *ReceiptWorker) send(ctx context.Context, j *ReceiptJob) {
	ctx = context.WithoutCancel(ctx)
	actx, cancelAttempt := context.WithTimeout(ctx, w.o.SendTimeout)
	err := w.attempt(actx, j)
	cancelAttempt()
	now := w.clock.Now()
	o := ReceiptOutcome{Status: ReceiptSent, At: now}
	if err != nil {
		o = Decide(j.Attempt, err, now)
		w.o.Log.Warn("receipts: send failed", "receipt", j.ID, "payment", j.Receipt.PaymentID,
			"attempt", j.Attempt, "outcome", string(o.Status), "error", o.Error)
	}
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := w.store.RecordReceipt(rctx, j, o); err != nil {
		w.o.Log.Error("receipts: record outcome", "receipt", j.ID, "error", err.Error())
	}
}

func (w *ReceiptWorker) attempt(ctx context.Context, j *ReceiptJob) error {
	m, err := w.compose(j.Receipt)
	if err != nil {
		return err
	}
	return w.mailer.Send(ctx, m)
}

// Decide turns a failed attempt into its outcome: a permanent failure (ports.IsPermanent)
// drops the receipt; a transient one waits ReceiptBackoff[attempt-1] and is dropped after the
// last.
func Decide(attempt int, err error, now time.Time) ReceiptOutcome {
	o := ReceiptOutcome{At: now, Error: err.Error()}
	switch {
	case errors.Is(err, ports.ErrPermanent):
		o.Status = ReceiptDropped
	case attempt < 1 || attempt > len(ReceiptBackoff):
		o.Status = ReceiptDropped
	default:
		o.Status = ReceiptPending
		o.NextAttempt = now.Add(ReceiptBackoff[attempt-1])
	}
	return o
}
