package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/mail"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/modules/scheduler"
	"github.com/kassa-pay/kassa/ports"
)

// clonePayments adds n succeeded card payments of scope, copies of the paid session's payment
// (with an invoice id instead of a session), each with its receipt queued and due now. It
// returns their ids.
func clonePayments(t *testing.T, db *sqlx.DB, scope core.Scope, sessionID string, n int) []string {
	t.Helper()
	var cols []string
	if err := db.Select(&cols, `SELECT column_name FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = 'payments'
			AND column_name NOT IN ('id', 'seq', 'session_id', 'invoice_id', 'payable_kind', 'payable_key')
			AND is_generated = 'NEVER' ORDER BY ordinal_position`); err != nil {
		t.Fatal(err)
	}
	prefix := "py_c" + strings.ToLower(core.RandomBase62(6)) + "_"
	list := strings.Join(cols, ", ")
	if _, err := db.Exec(`INSERT INTO payments (id, session_id, invoice_id, payable_kind, payable_key, `+list+`)
		SELECT $4 || g, NULL, 'in_' || $4 || g, 'invoice', 'in_' || $4 || g, `+list+` FROM payments, generate_series(1, $5) g
		WHERE merchant_id = $1 AND environment = $2 AND session_id = $3`,
		scope.MerchantID, string(scope.Env), sessionID, prefix, n); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO mail_outbox (merchant_id, environment, id, kind, subject_id, next_attempt_at, created)
		SELECT $1, $2, 'mob_' || id, 'receipt', id, date_trunc('second', now()) - interval '1 second', created
		FROM payments WHERE merchant_id = $1 AND environment = $2 AND id LIKE $3 || '%'`,
		scope.MerchantID, string(scope.Env), prefix); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s%d", prefix, i+1)
	}
	return ids
}

// One statement records the outcomes of a batch: sent, retried, dropped with its error (cut
// to valid UTF-8 without NUL bytes), and a stale attempt that records nothing.
func TestMailOutboxRecordsABatchInOneStatement(t *testing.T) {
	t.Parallel()
	db, log := countedDB(t)
	scope := pgtest.Merchant(t, db)
	svc := paymentsOn(db, fixedClocks{payNow})
	paid := mustPay(t, svc, createSession(t, svc, scope), visaUS)
	clonePayments(t, db, scope, paid.ID(), 3)
	st := postgres.NewMailOutboxStore(db)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second).Add(time.Second)
	jobs, err := st.ClaimMail(ctx, now, time.Minute, 10)
	if err != nil || len(jobs) != 4 {
		t.Fatalf("%d %v", len(jobs), err)
	}
	stale := *jobs[3]
	stale.Attempt = 0                            // an attempt that lost its claim
	longErr := strings.Repeat("é", 300) + "\x00" // 600 bytes: cut inside a character
	before := log.Count()
	if err := st.RecordMails(ctx, []mail.Result{
		{Job: jobs[0], Outcome: mail.Outcome{Status: mail.Sent, At: now}},
		{Job: jobs[1], Outcome: mail.Outcome{Status: mail.Pending, At: now, NextAttempt: now.Add(time.Hour), Error: "451 busy"}},
		{Job: jobs[2], Outcome: mail.Outcome{Status: mail.Dropped, At: now, Error: longErr}},
		{Job: &stale, Outcome: mail.Outcome{Status: mail.Sent, At: now}},
	}); err != nil {
		t.Fatal(err)
	}
	if sent := log.Since(before); len(sent) != 1 {
		t.Fatalf("%d statements: %q", len(sent), sent)
	}
	type row struct {
		Status    string     `db:"status"`
		Next      time.Time  `db:"next_attempt_at"`
		LastError *string    `db:"last_error"`
		Completed *time.Time `db:"completed_at"`
	}
	get := func(j *mail.Job) row {
		var r row
		if err := db.Get(&r, `SELECT status, next_attempt_at, last_error, completed_at FROM mail_outbox
			WHERE merchant_id = $1 AND environment = $2 AND id = $3`, scope.MerchantID, string(scope.Env), j.ID); err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := get(jobs[0]); r.Status != "sent" || r.LastError != nil || r.Completed == nil || !r.Completed.Equal(now) {
		t.Errorf("sent: %+v", r)
	}
	if r := get(jobs[1]); r.Status != "pending" || !r.Next.Equal(now.Add(time.Hour)) || r.LastError == nil || *r.LastError != "451 busy" || r.Completed != nil {
		t.Errorf("retried: %+v", r)
	}
	if r := get(jobs[2]); r.Status != "dropped" || r.LastError == nil || *r.LastError != strings.Repeat("é", 250) || r.Completed == nil {
		t.Errorf("dropped: %+v", r)
	}
	if r := get(jobs[3]); r.Status != "pending" || !r.Next.Equal(now.Add(time.Minute)) || r.Completed != nil {
		t.Errorf("a stale attempt recorded: %+v", r)
	}
}

// The mailbox keeps a batch with one statement, each message dated with its scope's clock
// (read once per scope); an invalid message fails alone, and so does one the database refuses.
func TestMailboxSendBatch(t *testing.T) {
	t.Parallel()
	db, log := countedDB(t)
	reads := map[core.Scope]int{}
	clocks := clocksFunc(func(sc core.Scope) time.Time {
		reads[sc]++
		if sc.Env == core.EnvLive {
			return mailboxNow.Add(time.Hour)
		}
		return mailboxNow
	})
	mb, err := postgres.NewMailboxStore(db, clocks, "Kassa <receipts@kassa.example>")
	if err != nil {
		t.Fatal(err)
	}
	a, b := pgtest.Merchant(t, db), pgtest.Merchant(t, db)
	live := core.Scope{MerchantID: a.MerchantID, Env: core.EnvLive}
	bad := mailMsg(a, 9)
	bad.To = "not an address"
	ms := []ports.Message{mailMsg(a, 1), mailMsg(b, 2), bad, mailMsg(a, 3), mailMsg(live, 4)}
	ctx := context.Background()
	before := log.Count()
	errs := mb.SendBatch(ctx, ms)
	if sent := log.Since(before); len(sent) != 1 {
		t.Fatalf("%d statements: %q", len(sent), sent)
	}
	for i, err := range errs {
		if (i == 2) != (err != nil) || (i == 2 && !ports.IsPermanent(err)) {
			t.Errorf("message %d: %v", i, err)
		}
	}
	if reads[a] != 1 || reads[b] != 1 || reads[live] != 1 {
		t.Errorf("clock reads %v; want one per scope", reads)
	}
	for _, c := range []struct {
		scope core.Scope
		to    []string
		at    time.Time
	}{{a, []string{"buyer3@example.com", "buyer1@example.com"}, mailboxNow}, {b, []string{"buyer2@example.com"}, mailboxNow},
		{live, []string{"buyer4@example.com"}, mailboxNow.Add(time.Hour)}} {
		page, err := mb.ListMailbox(ctx, c.scope, core.ListQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Items) != len(c.to) {
			t.Fatalf("%v: %d messages", c.scope, len(page.Items))
		}
		for i, m := range page.Items {
			if m.To != c.to[i] || !m.Created.Equal(c.at) || m.From != "Kassa <receipts@kassa.example>" || m.HTML == "" {
				t.Errorf("%v: %+v", c.scope, m)
			}
		}
	}
	// A NUL byte: the database refuses the message; the others of its batch are kept.
	nul := mailMsg(b, 5)
	nul.Text = "a\x00b"
	errs = mb.SendBatch(ctx, []ports.Message{mailMsg(b, 6), nul, mailMsg(b, 7)})
	if errs[0] != nil || errs[1] == nil || errs[2] != nil {
		t.Fatalf("errors %v", errs)
	}
	if page, _ := mb.ListMailbox(ctx, b, core.ListQuery{}); len(page.Items) != 3 {
		t.Fatalf("%d messages of b", len(page.Items))
	}
}

// clocksFunc adapts a function to ports.Clocks.
type clocksFunc func(core.Scope) time.Time

func (f clocksFunc) Now(_ context.Context, sc core.Scope) (time.Time, error) { return f(sc), nil }

// The receipt source reads the payments of several scopes with one statement; a payment that
// does not exist (or not in that scope) is absent.
func TestReceiptSourceReadsABatch(t *testing.T) {
	t.Parallel()
	db, log := countedDB(t)
	svc := paymentsOn(db, fixedClocks{payNow})
	a, b := pgtest.Merchant(t, db), pgtest.Merchant(t, db)
	pa := mustPay(t, svc, createSession(t, svc, a), visaUS)
	pb := mustPay(t, svc, createSession(t, svc, b), visaDE)
	ida := clonePayments(t, db, a, pa.ID(), 2)
	idb := clonePayments(t, db, b, pb.ID(), 1)
	keys := []payments.ReceiptKey{{Scope: a, PaymentID: ida[0]}, {Scope: b, PaymentID: idb[0]}, {Scope: a, PaymentID: ida[1]},
		{Scope: b, PaymentID: ida[0]}, {Scope: a, PaymentID: "py_gone"}}
	before := log.Count()
	got, err := postgres.NewReceiptSource(db).ReceiptRecords(context.Background(), keys)
	if err != nil {
		t.Fatal(err)
	}
	if sent := log.Since(before); len(sent) != 1 {
		t.Fatalf("%d statements: %q", len(sent), sent)
	}
	if len(got) != 3 {
		t.Fatalf("%d records: %v", len(got), got)
	}
	for _, k := range keys[:3] {
		f, ok := got[k]
		if !ok || f.Record.Payment.ID() != k.PaymentID || f.Record.Payment.Scope() != k.Scope || f.MerchantName != "Test merchant" ||
			f.Record.Payment.Card() == nil {
			t.Errorf("%v: %+v", k, f)
		}
	}
	if got[keys[1]].Record.Payment.Card().Last4 != "0008" {
		t.Errorf("b's card: %+v", got[keys[1]].Record.Payment.Card())
	}
}

// hideBatch hides the batch interfaces of a composer and a mailer, so that the worker takes
// the mails one at a time (compose, send and record each), as it did before batches.
type (
	oneComposer struct{ c ports.MailComposer }
	oneMailer   struct{ m ports.Mailer }
)

func (o oneComposer) ComposeMail(ctx context.Context, m core.Mail) (ports.Message, error) {
	return o.c.ComposeMail(ctx, m)
}
func (o oneMailer) Send(ctx context.Context, m ports.Message) error { return o.m.Send(ctx, m) }

// The mail worker's statements per receipt and its throughput, one mail at a time against a
// batch at a time, on the development mailbox with the real test clock (a test scope's clock
// is read from the database): 500 receipts each, every one kept once in the mailbox and
// recorded sent.
func TestMailWorkerBatchStatementsAndThroughput(t *testing.T) {
	t.Parallel()
	const n = 500
	db, log := countedDB(t)
	svc := paymentsOn(db, fixedClocks{payNow})
	clocks := newClocks(t, db, core.SystemClock{}, scheduler.NewRegistry())
	mb, err := postgres.NewMailboxStore(db, clocks, "Kassa <receipts@kassa.example>")
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	run := func(name string, batch bool) (perReceipt float64, perSecond float64) {
		scope := pgtest.Merchant(t, db)
		paid := mustPay(t, svc, createSession(t, svc, scope), visaUS)
		// The paid session's own receipt is sent first, so that only the clones are measured.
		composers := receiptComposers(t, db, renderForTest)
		var mailer ports.Mailer = mb
		if !batch {
			composers = mail.Composers{payments.MailReceipt: oneComposer{composers[payments.MailReceipt]}}
			mailer = oneMailer{mb}
		}
		w := mail.NewWorker(postgres.NewMailOutboxStore(db), composers, mailer, core.SystemClock{}, mail.WorkerOptions{Log: quiet})
		if _, err := w.RunOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		ids := clonePayments(t, db, scope, paid.ID(), n)
		before := log.Count()
		start := time.Now()
		made, err := w.RunOnce(context.Background())
		elapsed := time.Since(start)
		if err != nil || made != n {
			t.Fatalf("%s: %d attempts, %v", name, made, err)
		}
		stmts := len(log.Since(before))
		if c := countRows(t, db, `SELECT count(DISTINCT headers->>'X-Kassa-Payment') FROM mailbox_messages
			WHERE merchant_id = $1 AND environment = $2 AND headers->>'X-Kassa-Payment' = ANY($3)`,
			scope.MerchantID, string(scope.Env), ids); c != n {
			t.Fatalf("%s: %d receipts in the mailbox", name, c)
		}
		if c := countRows(t, db, `SELECT count(*) FROM mailbox_messages WHERE merchant_id = $1 AND environment = $2`,
			scope.MerchantID, string(scope.Env)); c != n+1 {
			t.Fatalf("%s: %d messages in the mailbox, want %d", name, c, n+1)
		}
		if c := countRows(t, db, `SELECT count(*) FROM mail_outbox WHERE merchant_id = $1 AND environment = $2
			AND status = 'sent' AND attempts = 1`, scope.MerchantID, string(scope.Env)); c != n+1 {
			t.Fatalf("%s: %d receipts recorded sent", name, c)
		}
		perReceipt, perSecond = float64(stmts)/n, n/elapsed.Seconds()
		t.Logf("%-13s %d receipts: %d statements (%.2f per receipt), %s, %.0f receipts/s", name, n, stmts, perReceipt, elapsed.Round(time.Millisecond), perSecond)
		return perReceipt, perSecond
	}
	oneStmts, oneRate := run("one at a time", false)
	batchStmts, batchRate := run("batched", true)
	t.Logf("statements per receipt %.2f → %.2f; throughput ×%.1f", oneStmts, batchStmts, batchRate/oneRate)
	// A batch of 20: claim, read the payments, the test clock, insert, record.
	if batchStmts > 0.3 {
		t.Errorf("%.2f statements per receipt batched; want at most 0.3", batchStmts)
	}
}

// Several workers drain one outbox into the development mailbox, a batch at a time: every
// receipt is kept exactly once and recorded sent.
func TestMailboxWorkersKeepEachReceiptOnce(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	svc := paymentsOn(db, fixedClocks{payNow})
	scope := pgtest.Merchant(t, db)
	paid := mustPay(t, svc, createSession(t, svc, scope), visaUS)
	const n = 60
	clonePayments(t, db, scope, paid.ID(), n)
	mb, err := postgres.NewMailboxStore(db, scopeClocks{mailboxNow}, "Kassa <receipts@kassa.example>")
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	var wg sync.WaitGroup
	for range 4 {
		w := mail.NewWorker(postgres.NewMailOutboxStore(db), receiptComposers(t, db, renderForTest), mb, core.SystemClock{},
			mail.WorkerOptions{Batch: 7, Log: quiet})
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := w.RunOnce(context.Background()); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if c := countRows(t, db, `SELECT count(*) FROM (SELECT headers->>'X-Kassa-Payment' FROM mailbox_messages
		WHERE merchant_id = $1 AND environment = $2 GROUP BY 1 HAVING count(*) = 1) once`, scope.MerchantID, string(scope.Env)); c != n+1 {
		t.Fatalf("%d receipts kept once, want %d", c, n+1)
	}
	if c := countRows(t, db, `SELECT count(*) FROM mailbox_messages WHERE merchant_id = $1 AND environment = $2`,
		scope.MerchantID, string(scope.Env)); c != n+1 {
		t.Fatalf("%d messages", c)
	}
	if c := countRows(t, db, `SELECT count(*) FROM mail_outbox WHERE status = 'sent' AND attempts = 1 AND completed_at IS NOT NULL`); c != n+1 {
		t.Fatalf("%d sent rows", c)
	}
}

// diesBeforeRecording is a mail queue whose worker dies after delivering and before recording:
// RecordMails records nothing, as when the process is killed between the mailbox's insert and
// the "sent" mark.
type diesBeforeRecording struct{ mail.Store }

func (diesBeforeRecording) RecordMails(context.Context, []mail.Result) error {
	return errors.New("killed before recording")
}

// Regression (receipts mailed again after a SIGKILL): a worker that dies between the
// development mailbox's insert and marking the batch sent leaves the batch claimed; when the
// lease ends the batch is claimed and delivered again. Keyed by the queued mail's id, the
// mailbox keeps every receipt once, and the second round marks them sent.
func TestMailboxKeepsABatchOnceWhenTheWorkerDiesBeforeRecording(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	svc := paymentsOn(db, fixedClocks{payNow})
	scope := pgtest.Merchant(t, db)
	paid := mustPay(t, svc, createSession(t, svc, scope), visaUS)
	const n = 25
	clonePayments(t, db, scope, paid.ID(), n)
	mb, err := postgres.NewMailboxStore(db, scopeClocks{mailboxNow}, "Kassa <receipts@kassa.example>")
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	clock := &movableClock{t: time.Now().UTC().Add(time.Second)} // moved only between the rounds
	opts := mail.WorkerOptions{Batch: 10, SendTimeout: time.Second, Lease: 2 * time.Second, Log: quiet}
	queue := postgres.NewMailOutboxStore(db)

	dying := mail.NewWorker(diesBeforeRecording{queue}, receiptComposers(t, db, renderForTest), mb, clock, opts)
	if made, _ := dying.RunOnce(context.Background()); made != n+1 {
		t.Fatalf("the dying worker attempted %d mails, want %d", made, n+1)
	}
	messages := func() int {
		return countRows(t, db, `SELECT count(*) FROM mailbox_messages WHERE merchant_id = $1 AND environment = $2`,
			scope.MerchantID, string(scope.Env))
	}
	if c := messages(); c != n+1 {
		t.Fatalf("%d messages after the first delivery, want %d", c, n+1)
	}

	// The lease ends; another worker claims the whole batch again and delivers it.
	clock.t = clock.t.Add(3 * time.Second)
	w := mail.NewWorker(queue, receiptComposers(t, db, renderForTest), mb, clock, opts)
	if made, err := w.RunOnce(context.Background()); err != nil || made != n+1 {
		t.Fatalf("the second worker attempted %d mails (%v), want %d", made, err, n+1)
	}
	if c := messages(); c != n+1 {
		t.Fatalf("%d messages after the batch was delivered again, want %d (each receipt once)", c, n+1)
	}
	if c := countRows(t, db, `SELECT count(*) FROM mail_outbox WHERE merchant_id = $1 AND environment = $2
		AND status = 'sent' AND attempts = 2`, scope.MerchantID, string(scope.Env)); c != n+1 {
		t.Fatalf("%d mails recorded sent on their second attempt, want %d", c, n+1)
	}
	if c := countRows(t, db, `SELECT count(*) FROM mailbox_messages m JOIN mail_outbox o
		ON o.merchant_id = m.merchant_id AND o.environment = m.environment AND o.id = m.mail_id
		WHERE m.merchant_id = $1 AND m.environment = $2`, scope.MerchantID, string(scope.Env)); c != n+1 {
		t.Fatalf("%d messages name their queued mail, want %d", c, n+1)
	}
}
