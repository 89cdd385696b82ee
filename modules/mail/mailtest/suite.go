package mailtest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/mail"
)

// Subject is one mail queue under test, fresh for each case (claims are not per merchant, so
// cases do not share a queue).
type Subject struct {
	Store mail.Store
	// Scope makes a merchant environment for the case.
	Scope func(t *testing.T) core.Scope
	// Enqueue queues mails, due at once, as a committed transaction of their cause would, and
	// returns their rows' ids in order.
	Enqueue func(t *testing.T, mails ...core.Mail) []string
	// State reads a queued mail.
	State func(t *testing.T, scope core.Scope, id string) State
	// Now is a time at which every mail queued so far is due, on the queue's clock.
	Now func() time.Time
}

// Run runs the suite; newSubject is called once per case, and cases run in parallel.
func Run(t *testing.T, newSubject func(t *testing.T) Subject) {
	cases := []struct {
		name string
		run  func(t *testing.T, s Subject)
	}{
		{"one mail per subject and kind", oncePerSubjectAndKind},
		{"due mails are claimed up to the limit, each once, counting the attempt", claimUpToLimit},
		{"a lease hides a claimed mail until it ends", leaseHides},
		{"only the attempt that claimed a mail last records", lastClaimRecords},
		{"pending waits for its next attempt, sent and dropped are final", outcomes},
		{"an unknown status records nothing", unknownStatus},
		{"concurrent claimers take each mail once", concurrentClaims},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, newSubject(t))
		})
	}
}

const (
	kindReceipt core.MailKind = "receipt"
	kindNotice  core.MailKind = "notice"
)

func mailOf(scope core.Scope, kind core.MailKind, subject string, created time.Time) core.Mail {
	return core.Mail{Kind: kind, Scope: scope, SubjectID: subject, Created: created.UTC().Truncate(time.Microsecond)}
}

func claim(t *testing.T, s Subject, now time.Time, lease time.Duration, limit int) []*mail.Job {
	t.Helper()
	jobs, err := s.Store.ClaimMail(context.Background(), now, lease, limit)
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

func record(t *testing.T, s Subject, rs ...mail.Result) {
	t.Helper()
	if err := s.Store.RecordMails(context.Background(), rs); err != nil {
		t.Fatal(err)
	}
}

func ids(jobs []*mail.Job) []string {
	out := make([]string, len(jobs))
	for i, j := range jobs {
		out[i] = j.ID
	}
	return out
}

func oncePerSubjectAndKind(t *testing.T, s Subject) {
	scope := s.Scope(t)
	at := time.Now()
	first := s.Enqueue(t, mailOf(scope, kindReceipt, "py_1", at))
	again := s.Enqueue(t, mailOf(scope, kindReceipt, "py_1", at), mailOf(scope, kindNotice, "py_1", at))
	if again[0] != first[0] || again[1] == first[0] {
		t.Fatalf("queued %v, then %v: want the receipt once and the notice on its own", first, again)
	}
	jobs := claim(t, s, s.Now(), time.Minute, 10)
	if len(jobs) != 2 {
		t.Fatalf("claimed %v, want the receipt and the notice", ids(jobs))
	}
	for _, j := range jobs {
		if j.Mail.Scope != scope || j.Mail.SubjectID != "py_1" || j.Attempt != 1 {
			t.Errorf("job %+v", j)
		}
	}
}

func claimUpToLimit(t *testing.T, s Subject) {
	scope := s.Scope(t)
	at := time.Now()
	s.Enqueue(t, mailOf(scope, kindReceipt, "py_a", at), mailOf(scope, kindReceipt, "py_b", at.Add(time.Millisecond)),
		mailOf(scope, kindReceipt, "py_c", at.Add(2*time.Millisecond)))
	now := s.Now()
	first := claim(t, s, now, time.Minute, 2)
	second := claim(t, s, now, time.Minute, 2)
	third := claim(t, s, now, time.Minute, 2)
	if len(first) != 2 || len(second) != 1 || len(third) != 0 {
		t.Fatalf("claims of 2: %v, %v, %v; want 2, 1, 0", ids(first), ids(second), ids(third))
	}
	if !first[0].Mail.Created.Before(first[1].Mail.Created) {
		t.Errorf("a claim is not oldest first: %s, %s", first[0].Mail.Created, first[1].Mail.Created)
	}
	seen := map[string]bool{}
	for _, j := range append(first, second...) {
		if seen[j.Mail.SubjectID] || j.Attempt != 1 {
			t.Errorf("job %+v (seen %v)", j, seen)
		}
		seen[j.Mail.SubjectID] = true
		if st := s.State(t, scope, j.ID); st.Status != mail.Pending || st.Attempts != 1 {
			t.Errorf("%s after its claim: %+v", j.ID, st)
		}
	}
}

func leaseHides(t *testing.T, s Subject) {
	scope := s.Scope(t)
	s.Enqueue(t, mailOf(scope, kindReceipt, "py_l", time.Now()))
	now := s.Now()
	jobs := claim(t, s, now, time.Minute, 10)
	if len(jobs) != 1 {
		t.Fatalf("claimed %v", ids(jobs))
	}
	if during := claim(t, s, now.Add(30*time.Second), time.Minute, 10); len(during) != 0 {
		t.Fatalf("claimed %v during the lease", ids(during))
	}
	if at, ok, err := s.Store.NextMailDue(context.Background()); err != nil || !ok || !at.Equal(now.Add(time.Minute)) {
		t.Fatalf("next due %s %v %v, want the end of the lease %s", at, ok, err, now.Add(time.Minute))
	}
	after := claim(t, s, now.Add(time.Minute), time.Minute, 10)
	if len(after) != 1 || after[0].ID != jobs[0].ID || after[0].Attempt != 2 {
		t.Fatalf("after the lease: %+v, want %s again as attempt 2", after, jobs[0].ID)
	}
}

func lastClaimRecords(t *testing.T, s Subject) {
	scope := s.Scope(t)
	s.Enqueue(t, mailOf(scope, kindReceipt, "py_s", time.Now()))
	now := s.Now()
	first := claim(t, s, now, time.Second, 1)
	second := claim(t, s, now.Add(2*time.Second), time.Minute, 1)
	if len(first) != 1 || len(second) != 1 || second[0].Attempt != 2 {
		t.Fatalf("claims %+v, %+v", first, second)
	}
	at := now.Add(3 * time.Second)
	record(t, s, mail.Result{Job: first[0], Outcome: mail.Outcome{Status: mail.Sent, At: at}})
	if st := s.State(t, scope, first[0].ID); st.Status != mail.Pending || st.Attempts != 2 {
		t.Fatalf("a stale attempt recorded: %+v", st)
	}
	record(t, s, mail.Result{Job: second[0], Outcome: mail.Outcome{Status: mail.Sent, At: at}})
	if st := s.State(t, scope, first[0].ID); st.Status != mail.Sent {
		t.Fatalf("the last claim's outcome was not kept: %+v", st)
	}
	// Recording again (a retried statement) changes nothing, and a sent mail is never claimed.
	record(t, s, mail.Result{Job: second[0], Outcome: mail.Outcome{Status: mail.Dropped, At: at, Error: "late"}})
	if st := s.State(t, scope, first[0].ID); st.Status != mail.Sent || st.LastError != "" {
		t.Fatalf("a finished mail changed: %+v", st)
	}
	if later := claim(t, s, now.Add(time.Hour), time.Minute, 10); len(later) != 0 {
		t.Fatalf("a sent mail was claimed: %v", ids(later))
	}
}

func outcomes(t *testing.T, s Subject) {
	scope := s.Scope(t)
	at := time.Now()
	s.Enqueue(t, mailOf(scope, kindReceipt, "py_p", at), mailOf(scope, kindReceipt, "py_s", at), mailOf(scope, kindReceipt, "py_d", at))
	now := s.Now()
	jobs := claim(t, s, now, time.Minute, 10)
	if len(jobs) != 3 {
		t.Fatalf("claimed %v", ids(jobs))
	}
	by := map[string]*mail.Job{}
	for _, j := range jobs {
		by[j.Mail.SubjectID] = j
	}
	retry := now.Add(10 * time.Minute)
	record(t, s,
		mail.Result{Job: by["py_p"], Outcome: mail.Outcome{Status: mail.Pending, NextAttempt: retry, Error: "451 busy", At: now}},
		mail.Result{Job: by["py_s"], Outcome: mail.Outcome{Status: mail.Sent, At: now}},
		mail.Result{Job: by["py_d"], Outcome: mail.Outcome{Status: mail.Dropped, Error: "550 no such user", At: now}})
	for subject, want := range map[string]State{
		"py_p": {Status: mail.Pending, Attempts: 1, LastError: "451 busy", Next: retry},
		"py_s": {Status: mail.Sent, Attempts: 1},
		"py_d": {Status: mail.Dropped, Attempts: 1, LastError: "550 no such user"},
	} {
		got := s.State(t, scope, by[subject].ID)
		if want.Status != mail.Pending {
			got.Next = time.Time{} // a finished mail is never due again, whatever its time says
		}
		if got.Status != want.Status || got.Attempts != want.Attempts || got.LastError != want.LastError || !got.Next.Equal(want.Next) {
			t.Errorf("%s: %+v, want %+v", subject, got, want)
		}
	}
	if at, ok, err := s.Store.NextMailDue(context.Background()); err != nil || !ok || !at.Equal(retry) {
		t.Fatalf("next due %s %v %v, want the retry %s", at, ok, err, retry)
	}
	if early := claim(t, s, retry.Add(-time.Second), time.Minute, 10); len(early) != 0 {
		t.Fatalf("claimed %v before the retry", ids(early))
	}
	again := claim(t, s, retry, time.Minute, 10)
	if len(again) != 1 || again[0].ID != by["py_p"].ID || again[0].Attempt != 2 {
		t.Fatalf("at the retry: %+v", again)
	}
	record(t, s, mail.Result{Job: again[0], Outcome: mail.Outcome{Status: mail.Sent, At: retry}})
	if _, ok, err := s.Store.NextMailDue(context.Background()); err != nil || ok {
		t.Fatalf("a queue with nothing pending has a next due (%v, %v)", ok, err)
	}
}

func unknownStatus(t *testing.T, s Subject) {
	scope := s.Scope(t)
	s.Enqueue(t, mailOf(scope, kindReceipt, "py_u", time.Now()), mailOf(scope, kindReceipt, "py_v", time.Now()))
	jobs := claim(t, s, s.Now(), time.Minute, 10)
	if len(jobs) != 2 {
		t.Fatalf("claimed %v", ids(jobs))
	}
	err := s.Store.RecordMails(context.Background(), []mail.Result{
		{Job: jobs[0], Outcome: mail.Outcome{Status: mail.Sent, At: s.Now()}},
		{Job: jobs[1], Outcome: mail.Outcome{Status: "bogus", At: s.Now()}},
	})
	if err == nil {
		t.Fatal("an unknown status was recorded")
	}
	for _, j := range jobs {
		if st := s.State(t, scope, j.ID); st.Status != mail.Pending {
			t.Errorf("%s: %+v after a refused record, want it untouched", j.ID, st)
		}
	}
}

func concurrentClaims(t *testing.T, s Subject) {
	scope := s.Scope(t)
	const n, workers = 40, 8
	mails := make([]core.Mail, n)
	at := time.Now()
	for i := range mails {
		mails[i] = mailOf(scope, kindReceipt, fmt.Sprintf("py_%02d", i), at.Add(time.Duration(i)*time.Millisecond))
	}
	s.Enqueue(t, mails...)
	now := s.Now()
	var mu sync.Mutex
	got := map[string]int{}
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				jobs, err := s.Store.ClaimMail(context.Background(), now, time.Minute, 3)
				if err != nil {
					t.Error(err)
					return
				}
				if len(jobs) == 0 {
					return
				}
				mu.Lock()
				for _, j := range jobs {
					got[j.ID]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(got) != n {
		t.Fatalf("%d mails claimed, want %d", len(got), n)
	}
	for id, c := range got {
		if c != 1 {
			t.Errorf("%s claimed %d times", id, c)
		}
	}
}
