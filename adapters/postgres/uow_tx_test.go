package postgres_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/checkout"
	"github.com/kassa-pay/kassa/modules/payments"
)

// failingTx is the unit of work's transaction with a failure injected: armed, the save of a
// session that completes fails, after the payment of the same unit of work was inserted (it
// checks that it was: the payment goes first).
type failingTx struct {
	*postgres.Tx
	armed    *atomic.Bool
	inserted bool
	t        *testing.T
}

func (f *failingTx) Payments() payments.PaymentRepository {
	return failingPayments{PaymentRepository: f.Tx.Payments(), f: f}
}
func (f *failingTx) Sessions() checkout.SessionRepository { return failingSessions{f} }

// failingPayments notes the insert; the due sweep's methods are the transaction's own.
type failingPayments struct {
	payments.PaymentRepository
	f *failingTx
}

func (p failingPayments) Insert(ctx context.Context, rec *payments.Record) error {
	if err := p.f.Tx.Payments().Insert(ctx, rec); err != nil {
		return err
	}
	p.f.inserted = true
	return nil
}

type failingSessions struct{ f *failingTx }

func (s failingSessions) Lock(ctx context.Context, scope core.Scope, id string) (*checkout.Session, error) {
	return s.f.Tx.Sessions().Lock(ctx, scope, id)
}

func (s failingSessions) ClaimDue(ctx context.Context, scope *core.Scope, until time.Time, limit int) ([]*checkout.Session, error) {
	return s.f.Tx.Sessions().ClaimDue(ctx, scope, until, limit)
}

func (s failingSessions) Insert(ctx context.Context, sess *checkout.Session) error {
	return s.f.Tx.Sessions().Insert(ctx, sess)
}

var errInjected = errors.New("injected: the session update failed")

func (s failingSessions) Save(ctx context.Context, sess *checkout.Session) error {
	if sess.Status() == checkout.StatusComplete && s.f.armed.CompareAndSwap(true, false) {
		if !s.f.inserted {
			s.f.t.Error("the session completes before its payment was inserted")
		}
		return errInjected
	}
	return s.f.Tx.Sessions().Save(ctx, sess)
}

// The second transaction of a charge writes two aggregates, an event batch and a mail in one
// unit of work. A failure after the payment insert and before the session update rolls all of
// it back together: no payment, no event, no receipt, the session still open with its attempt
// in flight, the attempt pending. The charge-attempt sweep then applies the outcome once.
func TestAFailureBetweenPaymentAndSessionRollsBackBoth(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	armed := new(atomic.Bool)
	uow := postgres.Bind(postgres.NewUnitOfWork(db), func(tx *postgres.Tx) checkout.Tx {
		return &failingTx{Tx: tx, armed: armed, t: t}
	})
	wall := &settableWall{t: time.Now()}
	svc, ch := chargeOn(db, uow, fixedClocks{payNow}, wall, sandboxes(db))
	ctx := context.Background()
	s := createSession(t, svc, scope)

	armed.Store(true)
	if _, err := pay(ctx, svc, s, visaDE); !errors.Is(err, errInjected) {
		t.Fatalf("want the injected failure, got %v", err)
	}
	if armed.Load() {
		t.Fatal("the failure was never injected")
	}
	nothing := map[string]string{
		"payments":    `SELECT count(*) FROM payments WHERE merchant_id = $1`,
		"events":      `SELECT count(*) FROM events WHERE merchant_id = $1`,
		"mail_outbox": `SELECT count(*) FROM mail_outbox WHERE merchant_id = $1`,
	}
	for table, q := range nothing {
		if c := countRows(t, db, q, scope.MerchantID); c != 0 {
			t.Errorf("%d rows in %s after a rolled-back outcome", c, table)
		}
	}
	var st struct {
		Status   string  `db:"status"`
		Charging *string `db:"charging_attempt"`
	}
	if err := db.Get(&st, `SELECT status, charging_attempt FROM checkout_sessions WHERE id = $1`, s.ID()); err != nil ||
		st.Status != "open" || st.Charging == nil || *st.Charging != s.ID()+":1" {
		t.Fatalf("session %+v %v", st, err)
	}
	if c := countRows(t, db, `SELECT count(*) FROM charge_attempts WHERE reference = $1 AND status = 'pending'`, s.ID()); c != 1 {
		t.Fatalf("%d pending attempts", c)
	}

	wall.add(payments.AttemptGrace + time.Second)
	sw, err := payments.NewAttemptSweeper(ch)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []int{1, 0} {
		if n, err := sw.ProcessDue(ctx, &scope, payNow); err != nil || n != want {
			t.Fatalf("sweep %d: resolved %d (%v), want %d", i+1, n, err, want)
		}
	}
	once := map[string]string{
		"payments":                   `SELECT count(*) FROM payments WHERE merchant_id = $1`,
		"payment_intent.succeeded":   `SELECT count(*) FROM events WHERE merchant_id = $1 AND type = 'payment_intent.succeeded'`,
		"checkout.session.completed": `SELECT count(*) FROM events WHERE merchant_id = $1 AND type = 'checkout.session.completed'`,
		"receipt":                    `SELECT count(*) FROM mail_outbox WHERE merchant_id = $1 AND kind = 'receipt'`,
		"applied attempt":            `SELECT count(*) FROM charge_attempts WHERE merchant_id = $1 AND status = 'applied'`,
	}
	for what, q := range once {
		if c := countRows(t, db, q, scope.MerchantID); c != 1 {
			t.Errorf("%d × %s after the sweep, want 1", c, what)
		}
	}
	got, err := svc.Get(ctx, scope, s.ID())
	if err != nil || got.Status() != checkout.StatusComplete || got.Buyer().Charging != "" || got.Payment() == nil {
		t.Fatalf("session %v %v", got, err)
	}
}

// A typed unit of work called with the ctx of another unit of work's fn joins that
// transaction, and what both wrote commits or rolls back together.
func TestBoundUnitOfWorkJoinsTheEnclosingTransaction(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	u := postgres.NewUnitOfWork(db)
	bound := postgres.Bind(u, func(tx *postgres.Tx) payments.Tx { return tx })
	mail := core.Mail{Kind: payments.MailReceipt, Scope: scope, SubjectID: "py_joined", Created: payNow}
	outer := errors.New("outer fails")
	err := u.Do(context.Background(), func(ctx context.Context) error {
		if err := bound.Do(ctx, func(ctx context.Context, tx payments.Tx) error {
			return tx.Mail().Enqueue(ctx, mail)
		}); err != nil {
			return err
		}
		return outer
	})
	if !errors.Is(err, outer) {
		t.Fatal(err)
	}
	if c := mailRows(t, db, scope); c != 0 {
		t.Fatalf("%d mails after the outer unit of work rolled back", c)
	}
	if err := u.Do(context.Background(), func(ctx context.Context) error {
		return bound.Do(ctx, func(ctx context.Context, tx payments.Tx) error {
			// Queued twice: a subject has one mail of a kind.
			return tx.Mail().Enqueue(ctx, mail, mail)
		})
	}); err != nil {
		t.Fatal(err)
	}
	if c := mailRows(t, db, scope); c != 1 {
		t.Fatalf("%d mails after the commit, want 1", c)
	}
}

func mailRows(t *testing.T, db *sqlx.DB, scope core.Scope) int {
	t.Helper()
	return countRows(t, db, `SELECT count(*) FROM mail_outbox WHERE merchant_id = $1 AND environment = $2`,
		scope.MerchantID, string(scope.Env))
}
