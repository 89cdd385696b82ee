package postgres_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/mail"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/ports"
)

// countingMailer counts messages per X-Kassa-Payment header.
type countingMailer struct {
	mu   sync.Mutex
	sent map[string]int
}

func (m *countingMailer) Send(_ context.Context, msg ports.Message) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sent[msg.Headers["X-Kassa-Payment"]]++
	return nil
}

func renderForTest(r payments.Receipt) (ports.Message, error) {
	return ports.Message{Scope: r.Scope, To: r.To, Subject: "Receipt", Text: r.MerchantName,
		Headers: map[string]string{"X-Kassa-Payment": r.PaymentID}}, nil
}

// receiptComposers are the composers of a worker that sends receipts.
func receiptComposers(t *testing.T, db *sqlx.DB, render payments.ReceiptRenderer) mail.Composers {
	t.Helper()
	c, err := payments.NewReceiptComposer(postgres.NewReceiptSource(db), render)
	if err != nil {
		t.Fatal(err)
	}
	return mail.Composers{payments.MailReceipt: c}
}

// Several workers drain one outbox: every receipt is sent exactly once, with its facts.
func TestMailOutboxWorkersSendEachReceiptOnce(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	f := newDueFixture(t, db)
	scope := pgtest.Merchant(t, db)
	const n = 12
	var ids []string
	for range n {
		ids = append(ids, f.pay(t, scope, "4242424242424242").Payment().ID())
	}
	mailer := &countingMailer{sent: map[string]int{}}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	var wg sync.WaitGroup
	for range 4 {
		w := mail.NewWorker(postgres.NewMailOutboxStore(db), receiptComposers(t, db, renderForTest), mailer, core.SystemClock{},
			mail.WorkerOptions{Batch: 2, Log: quiet})
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := w.RunOnce(context.Background()); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for _, id := range ids {
		if mailer.sent[id] != 1 {
			t.Errorf("payment %s: %d receipts", id, mailer.sent[id])
		}
	}
	if c := countRows(t, db, `SELECT count(*) FROM mail_outbox WHERE status = 'sent' AND attempts = 1 AND completed_at IS NOT NULL`); c != n {
		t.Fatalf("%d sent rows", c)
	}
}

// A claimed mail is reserved for its lease; a stale attempt cannot record over a newer one.
// The receipt of a payment is queued with it as a kind and a subject, and composed from the
// payment when it is sent.
func TestMailOutboxLease(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	f := newDueFixture(t, db)
	scope := pgtest.Merchant(t, db)
	paid := f.pay(t, scope, "4242424242424242")
	st := postgres.NewMailOutboxStore(db)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second).Add(time.Second)
	jobs, err := st.ClaimMail(ctx, now, time.Minute, 10)
	if err != nil || len(jobs) != 1 {
		t.Fatalf("%d %v", len(jobs), err)
	}
	if m := jobs[0].Mail; m != (core.Mail{Kind: payments.MailReceipt, Scope: scope, SubjectID: paid.Payment().ID(), Created: payNow}) {
		t.Fatalf("mail %+v", m)
	}
	var r payments.Receipt
	if _, err := receiptComposers(t, db, func(got payments.Receipt) (ports.Message, error) {
		r = got
		return renderForTest(got)
	})[payments.MailReceipt].ComposeMail(ctx, jobs[0].Mail); err != nil {
		t.Fatal(err)
	}
	if r.To != "grace@example.com" || r.MerchantName != "Test merchant" || r.PaymentID != paid.Payment().ID() ||
		r.Amount != 2500 || r.Currency != "EUR" || r.CardBrand != "visa" || r.CardLast4 != "4242" || r.IBANLast4 != "" ||
		!r.Date.Equal(payNow) || r.Scope != scope || jobs[0].Attempt != 1 {
		t.Fatalf("receipt %+v", jobs[0])
	}
	if again, _ := st.ClaimMail(ctx, now.Add(30*time.Second), time.Minute, 10); len(again) != 0 {
		t.Fatal("claimed within its lease")
	}
	if at, ok, err := st.NextMailDue(ctx); err != nil || !ok || !at.Equal(now.Add(time.Minute)) {
		t.Fatalf("next due %s %v %v", at, ok, err)
	}
	// The lease ends: the receipt is claimed again as attempt 2; attempt 1 can no longer record.
	second, err := st.ClaimMail(ctx, now.Add(2*time.Minute), time.Minute, 10)
	if err != nil || len(second) != 1 || second[0].Attempt != 2 {
		t.Fatalf("%v %v", second, err)
	}
	if err := st.RecordMails(ctx, []mail.Result{{Job: jobs[0], Outcome: mail.Outcome{Status: mail.Sent, At: now}}}); err != nil {
		t.Fatal(err)
	}
	if c := countRows(t, db, `SELECT count(*) FROM mail_outbox WHERE status = 'pending'`); c != 1 {
		t.Fatal("a stale attempt recorded its outcome")
	}
	if err := st.RecordMails(ctx, []mail.Result{{Job: second[0], Outcome: mail.Outcome{Status: mail.Sent, At: now}}}); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := st.NextMailDue(ctx); ok {
		t.Fatal("nothing should be pending")
	}
}
