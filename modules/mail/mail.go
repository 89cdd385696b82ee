// Package mail is the mail queue: e-mail queued as a kind and a subject id (core.Mail) in the
// transaction of the change that causes it, and sent after commit by the Worker, which asks
// the composer registered for the kind (a ports.MailComposer of the module that owns the
// subject: payments composes receipts) to write the message from the subject as it is then.
// A slow or absent mail server thus never delays the change.
package mail

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// Job is one claimed mail: the attempt it is (1-based) and what to send.
type Job struct {
	ID      string
	Attempt int
	Mail    core.Mail
}

// Status is the state of a queued mail.
type Status string

const (
	Pending Status = "pending" // waiting for an attempt (Outcome.NextAttempt)
	Sent    Status = "sent"
	Dropped Status = "dropped" // permanent failure, or attempts exhausted
)

// Outcome is what one attempt ended in.
type Outcome struct {
	Status      Status
	NextAttempt time.Time // pending: when to try again
	Error       string    // the failure, without addresses or bodies
	At          time.Time
}

// Result is a claimed mail and the outcome of its attempt.
type Result struct {
	Job     *Job
	Outcome Outcome
}

// Store is the queue the worker drains. Mail is queued by the transaction of its cause; the
// worker claims it and records each attempt.
type Store interface {
	// ClaimMail takes up to limit pending mails due at now, oldest first, skipping rows others
	// hold (FOR UPDATE SKIP LOCKED), counts the attempt and reserves each until now+lease, so
	// no other worker takes it while it is sent.
	ClaimMail(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]*Job, error)
	// RecordMails stores the outcomes of claimed attempts, with one statement. Only the
	// attempt that claimed a mail last records: an attempt that outlived its lease (and was
	// claimed again) is ignored.
	RecordMails(ctx context.Context, rs []Result) error
	// NextMailDue returns the earliest next attempt among pending mails.
	NextMailDue(ctx context.Context) (time.Time, bool, error)
}

// Composers are the composers of the kinds of mail, one per kind, registered by the modules
// that own the subjects.
type Composers map[core.MailKind]ports.MailComposer

// composeAll writes the messages of jobs, one message or error per job, in order, each
// carrying its job's id as MailID: the mails
// of a kind whose composer is a ports.BatchMailComposer with one call, the others one by one.
// A kind without a composer is a permanent failure.
func (c Composers) composeAll(ctx context.Context, jobs []*Job) ([]ports.Message, []error) {
	msgs, errs := make([]ports.Message, len(jobs)), make([]error, len(jobs))
	var kinds []core.MailKind
	byKind := map[core.MailKind][]int{}
	for i, j := range jobs {
		k := j.Mail.Kind
		if _, ok := byKind[k]; !ok {
			kinds = append(kinds, k)
		}
		byKind[k] = append(byKind[k], i)
	}
	for _, k := range kinds {
		idx := byKind[k]
		comp, ok := c[k]
		if !ok {
			for _, i := range idx {
				errs[i] = ports.Permanent(fmt.Errorf("mail: no composer for kind %q", k))
			}
			continue
		}
		bc, ok := comp.(ports.BatchMailComposer)
		if !ok {
			for _, i := range idx {
				msgs[i], errs[i] = comp.ComposeMail(ctx, jobs[i].Mail)
			}
			continue
		}
		mails := make([]core.Mail, len(idx))
		for n, i := range idx {
			mails[n] = jobs[i].Mail
		}
		ms, es := bc.ComposeMails(ctx, mails)
		for n, i := range idx {
			if len(ms) != len(idx) || len(es) != len(idx) {
				errs[i] = fmt.Errorf("mail: the composer of %q answered %d messages for %d mails", k, len(ms), len(idx))
				continue
			}
			msgs[i], errs[i] = ms[n], es[n]
		}
	}
	for i, j := range jobs {
		msgs[i].MailID = j.ID // one delivery per queued mail where the mailer can keep it so
	}
	return msgs, errs
}

// Backoff is the wait after each failed attempt (transient errors); after the last one the
// mail is dropped. About a day and a half in all.
var Backoff = []time.Duration{
	30 * time.Second, 2 * time.Minute, 10 * time.Minute, 30 * time.Minute, 2 * time.Hour, 6 * time.Hour, 12 * time.Hour, 12 * time.Hour,
}

// Decide turns a failed attempt into its outcome: a permanent failure (ports.IsPermanent)
// drops the mail; a transient one waits Backoff[attempt-1] and is dropped after the last.
func Decide(attempt int, err error, now time.Time) Outcome {
	o := Outcome{At: now, Error: err.Error()}
	switch {
	case errors.Is(err, ports.ErrPermanent):
		o.Status = Dropped
	case attempt < 1 || attempt > len(Backoff):
		o.Status = Dropped
	default:
		o.Status = Pending
		o.NextAttempt = now.Add(Backoff[attempt-1])
	}
	return o
}
