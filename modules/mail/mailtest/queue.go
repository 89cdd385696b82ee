// Package mailtest is the behaviour every mail queue (mail.Store) shows, written once and run
// against each implementation: adapters/postgres runs it on a database, the mail module's
// tests on Queue, the in-memory fake it verifies. It is imported by tests only.
package mailtest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/mail"
)

// Queue is an in-memory mail queue (mail.Store) that behaves as the Postgres one, checked by
// Run: mails queued once per subject and kind, claimed oldest due first under a lease, each
// claim counting an attempt, outcomes recorded only by the attempt that claimed a mail last.
type Queue struct {
	mu      sync.Mutex
	rows    []*row
	seq     int
	records int
}

type row struct {
	id        string
	mail      core.Mail
	status    mail.Status
	attempts  int
	next      time.Time
	lastError string
}

var _ mail.Store = (*Queue)(nil)

// NewQueue returns an empty queue.
func NewQueue() *Queue { return &Queue{} }

// Enqueue queues mails due at at, as the transaction of their cause does; a mail of a subject
// that already has one of its kind is not queued again. It returns the ids of the queued rows
// (the existing row's id for a mail that was already queued).
func (q *Queue) Enqueue(at time.Time, mails ...core.Mail) []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	ids := make([]string, len(mails))
	for i, m := range mails {
		if r := q.find(func(r *row) bool {
			return r.mail.Scope == m.Scope && r.mail.SubjectID == m.SubjectID && r.mail.Kind == m.Kind
		}); r != nil {
			ids[i] = r.id
			continue
		}
		q.seq++
		r := &row{id: fmt.Sprintf("mob_fake%06d", q.seq), mail: m, status: mail.Pending, next: at.Truncate(time.Second)}
		q.rows = append(q.rows, r)
		ids[i] = r.id
	}
	return ids
}

func (q *Queue) find(match func(*row) bool) *row {
	for _, r := range q.rows {
		if match(r) {
			return r
		}
	}
	return nil
}

// ClaimMail claims up to limit due mails (see mail.Store).
func (q *Queue) ClaimMail(_ context.Context, now time.Time, lease time.Duration, limit int) ([]*mail.Job, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var due []*row
	for _, r := range q.rows {
		if r.status == mail.Pending && !r.next.After(now) {
			due = append(due, r)
		}
	}
	slices.SortStableFunc(due, func(a, b *row) int { return a.next.Compare(b.next) })
	if len(due) > limit {
		due = due[:limit]
	}
	jobs := make([]*mail.Job, len(due))
	for i, r := range due {
		r.attempts++
		r.next = now.Add(lease)
		jobs[i] = &mail.Job{ID: r.id, Attempt: r.attempts, Mail: r.mail}
	}
	slices.SortFunc(jobs, func(a, b *mail.Job) int {
		if c := a.Mail.Created.Compare(b.Mail.Created); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return jobs, nil
}

// RecordMails stores the outcomes of claimed attempts (see mail.Store).
func (q *Queue) RecordMails(_ context.Context, rs []mail.Result) error {
	for _, r := range rs {
		switch r.Outcome.Status {
		case mail.Pending, mail.Sent, mail.Dropped:
		default:
			return fmt.Errorf("mail queue: record: unknown status %q", r.Outcome.Status)
		}
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.records++
	for _, res := range rs {
		r := q.find(func(r *row) bool { return r.id == res.Job.ID && r.mail.Scope == res.Job.Mail.Scope })
		if r == nil || r.attempts != res.Job.Attempt || r.status != mail.Pending {
			continue // an attempt that lost its claim, or a mail already finished
		}
		o := res.Outcome
		r.status, r.lastError = o.Status, o.Error
		if o.Status == mail.Pending {
			r.next = o.NextAttempt
		}
	}
	return nil
}

// NextMailDue returns the earliest next attempt among pending mails.
func (q *Queue) NextMailDue(context.Context) (time.Time, bool, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var at time.Time
	found := false
	for _, r := range q.rows {
		if r.status == mail.Pending && (!found || r.next.Before(at)) {
			at, found = r.next, true
		}
	}
	return at, found, nil
}

// State is a queued mail as the queue keeps it. Next is when it is due: its next attempt, or
// the end of the lease of its last claim.
type State struct {
	Status    mail.Status
	Attempts  int
	LastError string
	Next      time.Time
}

// StateOf returns the state of the mail id of scope (ok false when there is none).
func (q *Queue) StateOf(scope core.Scope, id string) (State, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	r := q.find(func(r *row) bool { return r.id == id && r.mail.Scope == scope })
	if r == nil {
		return State{}, false
	}
	return State{Status: r.status, Attempts: r.attempts, LastError: r.lastError, Next: r.next}, true
}

// RecordCalls is how many times RecordMails was called.
func (q *Queue) RecordCalls() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.records
}
