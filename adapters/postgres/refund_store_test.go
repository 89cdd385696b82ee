package postgres_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/adapters/sandbox"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/ports"
)

// flakyRefunds is the sandbox's refunds with a call that fails: before the processor received
// it (nothing given back) or after (given back, the answer lost on the way).
type flakyRefunds struct {
	inner                 *sandbox.Processor
	mu                    sync.Mutex
	failBefore, failAfter int
	calls                 int
}

func (f *flakyRefunds) Refund(ctx context.Context, req ports.RefundRequest, now time.Time) (ports.RefundResult, error) {
	f.mu.Lock()
	f.calls++
	before, after := f.failBefore > 0, f.failAfter > 0
	if before {
		f.failBefore--
	} else if after {
		f.failAfter--
	}
	f.mu.Unlock()
	if before {
		return ports.RefundResult{}, errors.New("processor: connection refused")
	}
	res, err := f.inner.Refund(ctx, req, now)
	if after {
		return ports.RefundResult{}, errors.New("processor: connection reset")
	}
	return res, err
}

func (f *flakyRefunds) LookupRefund(ctx context.Context, scope core.Scope, key string, now time.Time) (ports.RefundResult, error) {
	return f.inner.LookupRefund(ctx, scope, key, now)
}

func refunderOn(t *testing.T, db *sqlx.DB, proc ports.Refunder, wall core.Clock) *payments.Refunder {
	t.Helper()
	rf, err := payments.NewRefunder(payments.RefunderDeps{
		UoW:     postgres.Bind(postgres.NewUnitOfWork(db), func(tx *postgres.Tx) payments.RefundTx { return tx }),
		Refunds: postgres.NewRefundStore(db), Processors: map[core.Environment]ports.Refunder{core.EnvTest: proc},
		Clocks: fixedClocks{payNow}, Wall: wall,
	})
	if err != nil {
		t.Fatal(err)
	}
	return rf
}

// A refund whose processor call failed stays pending, promised (a second refund cannot take
// its amount), and the sweep resolves it once the grace has passed: by lookup when the
// processor gave the money back, by refunding with the same key when it never received it.
// Four concurrent sweeps give the money back once and apply it once.
func TestARefundLeftPendingIsResolvedOnceByTheSweep(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name                  string
		failBefore, failAfter int
	}{{"the processor never received it", 1, 0}, {"the processor's answer was lost", 0, 1}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			db := pgtest.New(t)
			scope := pgtest.Merchant(t, db)
			svc := paymentsOn(db, fixedClocks{payNow})
			ctx := context.Background()
			p := mustPay(t, svc, createSession(t, svc, scope), visaUS).Payment()
			wall := &settableWall{t: time.Now()}
			proc := &flakyRefunds{inner: sandbox.NewWithJournal(postgres.NewSandboxJournal(db)), failBefore: c.failBefore, failAfter: c.failAfter}
			rf := refunderOn(t, db, proc, wall)
			amount := int64(2000)
			if _, err := rf.Refund(ctx, payments.RefundRequest{Scope: scope, PaymentID: p.ID(), Amount: &amount,
				Reason: payments.ReasonDuplicate}); err == nil {
				t.Fatal("the failed call answered no error")
			}
			if n := countRows(t, db, `SELECT count(*) FROM refunds WHERE payment_id = $1 AND status = 'pending'`, p.ID()); n != 1 {
				t.Fatalf("%d pending refunds", n)
			}
			// The pending 20.00 is promised: only 5.00 remains.
			over := int64(501)
			if _, err := rf.Refund(ctx, payments.RefundRequest{Scope: scope, PaymentID: p.ID(), Amount: &over,
				Reason: payments.ReasonDuplicate}); !errors.Is(err, payments.ErrRefundExceedsCaptured) {
				t.Fatalf("a refund above what the pending one leaves: %v", err)
			}
			if n, err := rf.ProcessDue(ctx, nil, payNow); err != nil || n != 0 {
				t.Fatalf("within the grace: %d %v", n, err)
			}
			wall.add(payments.RefundGrace + time.Second)
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() {
					if _, err := rf.ProcessDue(ctx, &scope, payNow); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			var got struct {
				Refunded int64  `db:"amount_refunded"`
				Status   string `db:"status"`
			}
			if err := db.Get(&got, `SELECT amount_refunded, status FROM payments WHERE id = $1`, p.ID()); err != nil {
				t.Fatal(err)
			}
			if got.Refunded != 2000 || got.Status != "partially_refunded" {
				t.Fatalf("payment after the sweep: %+v", got)
			}
			if n := countRows(t, db, `SELECT count(*) FROM refunds WHERE payment_id = $1 AND status = 'succeeded'`, p.ID()); n != 1 {
				t.Fatalf("%d succeeded refunds", n)
			}
			if n := countRows(t, db, `SELECT count(*) FROM sandbox_refunds WHERE merchant_id = $1`, scope.MerchantID); n != 1 {
				t.Fatalf("the processor gave money back %d times", n)
			}
			if n := len(eventsOf(t, db, scope, core.EventChargeRefunded)); n != 1 {
				t.Fatalf("%d charge.refunded", n)
			}
			if n := countRows(t, db, `SELECT count(*) FROM mail_outbox WHERE kind = 'refund_receipt' AND merchant_id = $1`, scope.MerchantID); n != 1 {
				t.Fatalf("%d refund e-mails", n)
			}
		})
	}
}

// The refunds of one merchant and environment are invisible to another: the list, a lookup,
// and the sweep confined to a scope.
func TestRefundStoreIsolation(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	other := pgtest.Merchant(t, db)
	svc := paymentsOn(db, fixedClocks{payNow})
	ctx := context.Background()
	p := mustPay(t, svc, createSession(t, svc, scope), visaUS).Payment()
	rf := refunderOn(t, db, sandbox.NewWithJournal(postgres.NewSandboxJournal(db)), core.SystemClock{})
	r, err := rf.Refund(ctx, payments.RefundRequest{Scope: scope, PaymentID: p.ID(), Reason: payments.ReasonRequestedByCustomer})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status() != payments.RefundSucceeded || r.Amount() != 2500 {
		t.Fatalf("refund %s %d", r.Status(), r.Amount())
	}
	store := postgres.NewRefundStore(db)
	live := core.Scope{MerchantID: scope.MerchantID, Env: core.EnvLive}
	for _, s := range []core.Scope{other, live} {
		if _, err := store.Get(ctx, s, r.ID()); !errors.Is(err, payments.ErrRefundUnknown) {
			t.Fatalf("%v reads the refund: %v", s, err)
		}
		page, err := store.List(ctx, s, core.ListQuery{Limit: 10}, "")
		if err != nil || len(page.Items) != 0 {
			t.Fatalf("%v lists %d refunds: %v", s, len(page.Items), err)
		}
		if _, err := rf.Refund(ctx, payments.RefundRequest{Scope: s, PaymentID: p.ID(), Reason: payments.ReasonDuplicate}); err == nil ||
			!errors.Is(err, core.NotFound("payment", "id", p.ID())) {
			t.Fatalf("%v refunds the payment: %v", s, err)
		}
	}
}

// A payment of an environment no processor can refund in (live, without a live adapter) is
// refused with processor_unavailable, and nothing is recorded.
func TestARefundWithoutAProcessorRecordsNothing(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	live := core.Scope{MerchantID: scope.MerchantID, Env: core.EnvLive}
	svc := paymentsOn(db, fixedClocks{payNow}, core.EnvLive) // the sandbox stands in for a live processor's charge
	ctx := context.Background()
	p := mustPay(t, svc, createSession(t, svc, live), visaUS).Payment()
	rf := refunderOn(t, db, sandbox.NewWithJournal(postgres.NewSandboxJournal(db)), core.SystemClock{}) // refunds the test environment only
	_, err := rf.Refund(ctx, payments.RefundRequest{Scope: live, PaymentID: p.ID(), Reason: payments.ReasonDuplicate})
	if !errors.Is(err, payments.ErrRefundProcessorUnavailable) {
		t.Fatalf("refund in live: %v", err)
	}
	if n := countRows(t, db, `SELECT count(*) FROM refunds WHERE payment_id = $1`, p.ID()); n != 0 {
		t.Fatalf("%d refunds recorded", n)
	}
}
