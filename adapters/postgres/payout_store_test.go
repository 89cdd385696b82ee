package postgres_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/adapters/sandbox"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/ledger"
	"github.com/kassa-pay/kassa/modules/payouts"
	"github.com/kassa-pay/kassa/ports"
)

func payoutService(t *testing.T, e *ledgerEnv) *payouts.Service {
	t.Helper()
	s, err := payouts.NewService(payouts.Deps{
		UoW:   postgres.Bind(postgres.NewUnitOfWork(e.db), func(tx *postgres.Tx) payouts.Tx { return tx }),
		Store: postgres.NewPayoutStore(e.db), Ledger: postgres.NewLedgerStore(e.db),
		Rails:  map[core.Environment]ports.PayoutRail{core.EnvTest: sandbox.PayoutRail{}},
		Clocks: fixedClocks{payNow}, Wall: core.SystemClock{},
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Four payout runs at the same midnight, as four kassa serve processes would run them, make one
// payout per currency: the scope's payout mark is claimed by one of them (SKIP LOCKED), and the
// others find nothing due.
func TestPayoutRunsInSeveralProcessesMakeOnePayoutPerCurrency(t *testing.T) {
	t.Parallel()
	e := newLedgerEnv(t)
	ctx := context.Background()
	scope := pgtest.Merchant(t, e.db)
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	for i, cur := range []core.Currency{"EUR", "USD", "EUR"} {
		if err := e.uow.Do(ctx, func(ctx context.Context, tx ledger.Tx) error {
			_, err := ledger.PostPayment(ctx, tx, ledger.PaymentFacts{Scope: scope, PaymentID: "py_p" + string(rune('a'+i)), Currency: cur,
				Amount: 1000, Fee: 40, Succeeded: now, AvailableOn: now})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	po := payoutService(t, e)
	midnight := time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := po.ProcessDue(ctx, &scope, midnight); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	page, err := po.Payouts(ctx, scope, core.ListQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	got := map[core.Currency]int64{}
	for _, p := range page.Items {
		got[p.Currency()] += p.Amount()
		if !p.Created().Equal(midnight) || !p.Sent() {
			t.Fatalf("payout %+v", p.Snapshot())
		}
	}
	if len(page.Items) != 2 || got["EUR"] != 1920 || got["USD"] != 960 {
		t.Fatalf("payouts %v (%d)", got, len(page.Items))
	}
	checkLedger(t, e.db, scope, "payout runs")
	if n, err := po.ProcessDue(ctx, &scope, midnight.Add(24*time.Hour)); err != nil || n != 0 {
		t.Fatalf("the next night: %d %v", n, err)
	}
	if n, err := po.ProcessDue(ctx, &scope, midnight.Add(48*time.Hour)); err != nil || n != 2 {
		t.Fatalf("arrival: %d %v", n, err)
	}
	checkLedger(t, e.db, scope, "payouts paid")
	var inTransit int64
	if err := e.db.Get(&inTransit, `SELECT coalesce(sum(balance), 0) FROM ledger_balances WHERE merchant_id = $1 AND account = 'payouts'`,
		scope.MerchantID); err != nil || inTransit != 0 {
		t.Fatalf("in transit after arrival: %d %v", inTransit, err)
	}
}

// The ledger's invariants hold after every step of a random mix of payments, refunds,
// disputes, releases and daily payouts, and every payout's settled transactions sum to its
// amount.
func TestLedgerInvariantsWithPayouts(t *testing.T) {
	t.Parallel()
	e := newLedgerEnv(t)
	ctx := context.Background()
	scope := pgtest.Merchant(t, e.db)
	po := payoutService(t, e)
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	type pay struct {
		id       string
		cur      core.Currency
		amount   int64
		refunded int64
	}
	var pays []*pay
	seed := int64(0)
	next := func(n int64) int64 {
		seed = (seed*6364136223846793005 + 1442695040888963407) & (1<<62 - 1)
		return seed % n
	}
	for step := 0; step < 60; step++ {
		now = now.Add(time.Duration(next(20*3600)) * time.Second)
		err := e.uow.Do(ctx, func(ctx context.Context, tx ledger.Tx) error {
			switch k := next(10); {
			case k < 5 || len(pays) == 0:
				p := &pay{id: core.NewID("py_"), cur: []core.Currency{"EUR", "USD"}[next(2)], amount: 100 + next(20000)}
				avail := now.Add(48 * time.Hour)
				if next(3) == 0 {
					avail = now
				}
				pays = append(pays, p)
				_, err := ledger.PostPayment(ctx, tx, ledger.PaymentFacts{Scope: scope, PaymentID: p.id, Currency: p.cur,
					Amount: p.amount, Fee: p.amount / 40, Succeeded: now, AvailableOn: avail})
				return err
			case k < 8:
				p := pays[next(int64(len(pays)))]
				if p.refunded == p.amount {
					return nil
				}
				amt := 1 + next(p.amount-p.refunded)
				p.refunded += amt
				_, err := ledger.PostRefund(ctx, tx, ledger.RefundFacts{Scope: scope, RefundID: core.NewID("re_"), PaymentID: p.id,
					Currency: p.cur, Amount: amt, Created: now})
				return err
			default:
				p := pays[next(int64(len(pays)))]
				_, err := ledger.PostDispute(ctx, tx, ledger.DisputeFacts{Scope: scope, DisputeID: core.NewID("dp_"), PaymentID: p.id,
					Currency: p.cur, Amount: p.amount, Fee: 1500, At: now})
				return err
			}
		})
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		if _, err := e.rel.ProcessDue(ctx, &scope, now); err != nil {
			t.Fatal(err)
		}
		if _, err := po.ProcessDue(ctx, &scope, now); err != nil {
			t.Fatal(err)
		}
		checkLedger(t, e.db, scope, "step")
	}
	var bad []string
	if err := e.db.Select(&bad, `SELECT p.id FROM payouts p WHERE p.merchant_id = $1 AND p.amount <> (SELECT coalesce(sum(t.net), 0)
		FROM balance_transaction_payouts s JOIN balance_transactions t ON t.merchant_id = s.merchant_id
			AND t.environment = s.environment AND t.id = s.transaction_id
		WHERE s.merchant_id = p.merchant_id AND s.environment = p.environment AND s.payout_id = p.id)`, scope.MerchantID); err != nil {
		t.Fatal(err)
	}
	if len(bad) > 0 {
		t.Fatalf("payouts whose transactions do not sum to their amount: %v", bad)
	}
	var n int
	if err := e.db.Get(&n, `SELECT count(*) FROM payouts WHERE merchant_id = $1`, scope.MerchantID); err != nil || n == 0 {
		t.Fatalf("no payouts in the mix: %d %v", n, err)
	}
}

// failingRail refuses the first n sends, as a rail that cannot be reached would.
type failingRail struct {
	mu sync.Mutex
	n  int
}

func (r *failingRail) Send(ctx context.Context, req ports.PayoutRequest) (ports.PayoutResult, error) {
	r.mu.Lock()
	fail := r.n > 0
	r.n--
	r.mu.Unlock()
	if fail {
		return ports.PayoutResult{}, context.DeadlineExceeded
	}
	return sandbox.PayoutRail{}.Send(ctx, req)
}

// A payout whose rail call fails stays recorded (with its ledger posting) and unsent; the
// next pass sends it, and it is paid on its arrival date only once sent.
func TestAPayoutLeftUnsentIsSentByTheNextPass(t *testing.T) {
	t.Parallel()
	e := newLedgerEnv(t)
	ctx := context.Background()
	scope := pgtest.Merchant(t, e.db)
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	if err := e.uow.Do(ctx, func(ctx context.Context, tx ledger.Tx) error {
		_, err := ledger.PostPayment(ctx, tx, ledger.PaymentFacts{Scope: scope, PaymentID: "py_u", Currency: "EUR",
			Amount: 1000, Fee: 40, Succeeded: now, AvailableOn: now})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	rail := &failingRail{n: 2}
	po, err := payouts.NewService(payouts.Deps{
		UoW:   postgres.Bind(postgres.NewUnitOfWork(e.db), func(tx *postgres.Tx) payouts.Tx { return tx }),
		Store: postgres.NewPayoutStore(e.db), Ledger: postgres.NewLedgerStore(e.db),
		Rails: map[core.Environment]ports.PayoutRail{core.EnvTest: rail}, Clocks: fixedClocks{payNow}, Wall: core.SystemClock{},
	})
	if err != nil {
		t.Fatal(err)
	}
	midnight := time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC)
	if _, err := po.ProcessDue(ctx, &scope, midnight); err == nil {
		t.Fatal("the failed send was not reported")
	}
	page, err := po.Payouts(ctx, scope, core.ListQuery{})
	if err != nil || len(page.Items) != 1 || page.Items[0].Sent() {
		t.Fatalf("after a failed send: %v %v", page.Items, err)
	}
	checkLedger(t, e.db, scope, "recorded, unsent")
	// The unsent payout is due work of its scope (its run is done): a test clock advance sends
	// it, not only the background loop.
	if at, ok, err := po.NextDue(ctx, scope, midnight); err != nil || !ok || !at.Equal(midnight) {
		t.Fatalf("next due with a payout unsent: %v %v (%v), want %v", at, ok, err, midnight)
	}
	// Arrival does not pay an unsent payout.
	if _, err := po.ProcessDue(ctx, &scope, midnight.Add(72*time.Hour)); err != nil {
		t.Fatal(err)
	}
	p, err := po.Payout(ctx, scope, page.Items[0].ID())
	if err != nil || !p.Sent() || p.Status() != payouts.StatusPaid {
		t.Fatalf("the next pass: sent %v, %s (%v)", p.Sent(), p.Status(), err)
	}
	checkLedger(t, e.db, scope, "sent and paid")
}

// Four release sweeps at once release each pending transaction once.
func TestReleaseSweepsInSeveralProcessesReleaseOnce(t *testing.T) {
	t.Parallel()
	e := newLedgerEnv(t)
	ctx := context.Background()
	scope := pgtest.Merchant(t, e.db)
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	for i := range 250 {
		if err := e.uow.Do(ctx, func(ctx context.Context, tx ledger.Tx) error {
			_, err := ledger.PostPayment(ctx, tx, ledger.PaymentFacts{Scope: scope, PaymentID: core.NewID("py_"), Currency: "EUR",
				Amount: 1000, Fee: 40, Succeeded: now.Add(time.Duration(i) * time.Second), AvailableOn: now.Add(48 * time.Hour)})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := e.rel.ProcessDue(ctx, &scope, now.Add(72*time.Hour))
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			total += n
			mu.Unlock()
		}()
	}
	wg.Wait()
	if total != 250 {
		t.Fatalf("released %d, want 250", total)
	}
	checkLedger(t, e.db, scope, "concurrent releases")
	if b := balanceOf(t, e, scope, "EUR"); b.Available != 250*960 || b.Pending != 0 {
		t.Fatalf("balance %+v", b)
	}
}
