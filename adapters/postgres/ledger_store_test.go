package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/ledger"
	"github.com/kassa-pay/kassa/ports"
)

type ledgerEnv struct {
	db  *sqlx.DB
	uow ports.UnitOfWorkOf[ledger.Tx]
	svc *ledger.Service
	rel *ledger.Releaser
}

func newLedgerEnv(t *testing.T) *ledgerEnv {
	t.Helper()
	db := pgtest.New(t)
	uow := postgres.Bind(postgres.NewUnitOfWork(db), func(tx *postgres.Tx) ledger.Tx { return tx })
	store := postgres.NewLedgerStore(db)
	svc, err := ledger.NewService(store)
	if err != nil {
		t.Fatal(err)
	}
	rel, err := ledger.NewReleaser(uow, store)
	if err != nil {
		t.Fatal(err)
	}
	return &ledgerEnv{db: db, uow: uow, svc: svc, rel: rel}
}

// checkLedger checks the invariants of scope's ledger: every currency's accounts sum to zero;
// every balance equals the sum of its postings; available and pending equal the sum of the
// nets of the available and pending transactions; no account below zero that may not be.
func checkLedger(t *testing.T, db *sqlx.DB, scope core.Scope, step string) {
	t.Helper()
	var bad []string
	for _, q := range []struct{ what, sql string }{
		{"a currency whose accounts do not sum to zero", `SELECT currency FROM ledger_balances WHERE merchant_id = $1 AND environment = $2
			GROUP BY currency HAVING sum(balance) <> 0`},
		{"a balance that is not the sum of its postings", `SELECT b.currency || '/' || b.account FROM ledger_balances b
			WHERE b.merchant_id = $1 AND b.environment = $2 AND b.balance <> coalesce((SELECT sum(CASE WHEN p.destination = b.account
				THEN p.amount ELSE -p.amount END) FROM ledger_postings p WHERE p.merchant_id = b.merchant_id
				AND p.environment = b.environment AND p.currency = b.currency AND b.account IN (p.source, p.destination)), 0)`},
		{"an available or pending balance that is not the sum of its transactions", `SELECT b.currency || '/' || b.account
			FROM ledger_balances b WHERE b.merchant_id = $1 AND b.environment = $2 AND b.account IN ('available', 'pending')
			AND b.balance <> coalesce((SELECT sum(t.net) FROM balance_transactions t WHERE t.merchant_id = b.merchant_id
				AND t.environment = b.environment AND t.currency = b.currency
				AND (b.account = 'pending') = EXISTS (SELECT 1 FROM ledger_releases r WHERE r.merchant_id = t.merchant_id
					AND r.environment = t.environment AND r.transaction_id = t.id)), 0)`},
		{"a balance below zero", `SELECT currency || '/' || account FROM ledger_balances WHERE merchant_id = $1 AND environment = $2
			AND balance < 0 AND account NOT IN ('world', 'available')`},
		{"a transaction whose postings do not net to its net", `SELECT t.id FROM balance_transactions t
			WHERE t.merchant_id = $1 AND t.environment = $2 AND t.net <> coalesce((SELECT sum(CASE
				WHEN p.destination IN ('pending', 'available') THEN p.amount WHEN p.source IN ('pending', 'available') THEN -p.amount ELSE 0 END)
				FROM ledger_postings p WHERE p.merchant_id = t.merchant_id AND p.environment = t.environment
				AND p.transaction_id = t.id AND p.kind = 'post'), 0)`},
	} {
		var got []string
		if err := db.Select(&got, q.sql, scope.MerchantID, string(scope.Env)); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		for _, g := range got {
			bad = append(bad, q.what+": "+g)
		}
	}
	if len(bad) > 0 {
		t.Fatalf("after %s: %v", step, bad)
	}
}

func balanceOf(t *testing.T, e *ledgerEnv, scope core.Scope, cur core.Currency) ledger.Balance {
	t.Helper()
	bs, err := e.svc.Balances(context.Background(), scope)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bs {
		if b.Currency == cur {
			return b
		}
	}
	return ledger.Balance{Currency: cur}
}

// A card payment credits the pending balance net of its fee; two days later (on the sweep) it
// is available; a refund and its fee reversal debit and credit the available balance at once;
// a dispute debits the amount and the dispute fee, and winning it gives both back.
func TestLedgerBalancesAfterEachKindOfMovement(t *testing.T) {
	t.Parallel()
	e := newLedgerEnv(t)
	ctx := context.Background()
	scope := pgtest.Merchant(t, e.db)
	t0 := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	do := func(step string, fn func(ctx context.Context, tx ledger.Tx) error) {
		t.Helper()
		if err := e.uow.Do(ctx, fn); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		checkLedger(t, e.db, scope, step)
	}
	want := func(step string, avail, pending int64) {
		t.Helper()
		if b := balanceOf(t, e, scope, "EUR"); b.Available != avail || b.Pending != pending {
			t.Fatalf("after %s: available %d pending %d, want %d %d", step, b.Available, b.Pending, avail, pending)
		}
	}
	do("payment", func(ctx context.Context, tx ledger.Tx) error {
		_, err := ledger.PostPayment(ctx, tx, ledger.PaymentFacts{Scope: scope, PaymentID: "py_1", Currency: "EUR",
			Amount: 10000, Fee: 205, Succeeded: t0, AvailableOn: t0.Add(48 * time.Hour)})
		return err
	})
	want("payment", 0, 9795)
	if n, err := e.rel.ProcessDue(ctx, &scope, t0.Add(48*time.Hour-time.Second)); err != nil || n != 0 {
		t.Fatalf("released early: %d %v", n, err)
	}
	if n, err := e.rel.ProcessDue(ctx, &scope, t0.Add(48*time.Hour)); err != nil || n != 1 {
		t.Fatalf("release: %d %v", n, err)
	}
	checkLedger(t, e.db, scope, "release")
	want("release", 9795, 0)
	do("refund", func(ctx context.Context, tx ledger.Tx) error {
		_, err := ledger.PostRefund(ctx, tx, ledger.RefundFacts{Scope: scope, RefundID: "re_1", PaymentID: "py_1", Currency: "EUR",
			Amount: 5000, FeeReversed: 90, Created: t0.Add(72 * time.Hour)})
		return err
	})
	want("refund", 9795-5000+90, 0)
	d := ledger.DisputeFacts{Scope: scope, DisputeID: "dp_1", PaymentID: "py_1", Currency: "EUR", Amount: 5000, Fee: 1500, At: t0.Add(96 * time.Hour)}
	do("dispute", func(ctx context.Context, tx ledger.Tx) error { _, err := ledger.PostDispute(ctx, tx, d); return err })
	want("dispute", 4885-5000-1500, 0) // the available balance may go negative
	d.At = d.At.Add(24 * time.Hour)
	do("dispute won", func(ctx context.Context, tx ledger.Tx) error {
		_, err := ledger.PostDisputeReversal(ctx, tx, d)
		return err
	})
	want("dispute won", 4885, 0)

	page, err := e.svc.Transactions(ctx, scope, core.ListQuery{Limit: 100}, ledger.Filter{PaymentID: "py_1"})
	if err != nil {
		t.Fatal(err)
	}
	var types []ledger.Type
	for _, x := range page.Items {
		types = append(types, x.Type())
	}
	wantTypes := []ledger.Type{ledger.TypeDisputeReversal, ledger.TypeDisputeFee, ledger.TypeDispute, ledger.TypeFeeReversal, ledger.TypeRefund, ledger.TypePayment}
	if len(types) != len(wantTypes) {
		t.Fatalf("types %v, want %v", types, wantTypes)
	}
	for i := range types {
		if types[i] != wantTypes[i] {
			t.Fatalf("types %v, want %v", types, wantTypes)
		}
	}
	// A movement posts once.
	err = e.uow.Do(ctx, func(ctx context.Context, tx ledger.Tx) error {
		_, err := ledger.PostPayment(ctx, tx, ledger.PaymentFacts{Scope: scope, PaymentID: "py_1", Currency: "EUR",
			Amount: 10000, Fee: 205, Succeeded: t0, AvailableOn: t0})
		return err
	})
	if !errors.Is(err, ledger.ErrTransactionExists) {
		t.Fatalf("second post of py_1: %v", err)
	}
	checkLedger(t, e.db, scope, "refused second post")
}

// A movement that would take an account below zero that may not go there is refused with
// balance_insufficient, and nothing is written: the balance is never clamped.
func TestLedgerRefusesANegativeFeesBalance(t *testing.T) {
	t.Parallel()
	e := newLedgerEnv(t)
	ctx := context.Background()
	scope := pgtest.Merchant(t, e.db)
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	err := e.uow.Do(ctx, func(ctx context.Context, tx ledger.Tx) error {
		_, err := ledger.PostRefund(ctx, tx, ledger.RefundFacts{Scope: scope, RefundID: "re_x", PaymentID: "py_x", Currency: "EUR",
			Amount: 100, FeeReversed: 30, Created: now})
		return err
	})
	if !errors.Is(err, ledger.ErrBalanceNegative) {
		t.Fatalf("fee reversal above the fees: %v", err)
	}
	var n int
	if err := e.db.Get(&n, `SELECT count(*) FROM balance_transactions WHERE merchant_id = $1`, scope.MerchantID); err != nil || n != 0 {
		t.Fatalf("written: %d %v", n, err)
	}
	checkLedger(t, e.db, scope, "refusal")
}

// Balances, transactions and their cursors belong to one merchant environment: another
// merchant, or the live environment, sees none of them, and a foreign id is not found.
func TestLedgerTenantAndEnvironmentIsolation(t *testing.T) {
	t.Parallel()
	e := newLedgerEnv(t)
	ctx := context.Background()
	a, b := pgtest.Merchant(t, e.db), pgtest.Merchant(t, e.db)
	live := core.Scope{MerchantID: a.MerchantID, Env: core.EnvLive}
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	var id string
	if err := e.uow.Do(ctx, func(ctx context.Context, tx ledger.Tx) error {
		x, err := ledger.PostPayment(ctx, tx, ledger.PaymentFacts{Scope: a, PaymentID: "py_a", Currency: "EUR",
			Amount: 1000, Fee: 43, Succeeded: now, AvailableOn: now.Add(48 * time.Hour)})
		if x != nil {
			id = x.ID()
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []core.Scope{b, live} {
		if bs, err := e.svc.Balances(ctx, s); err != nil || len(bs) != 0 {
			t.Fatalf("%v balances: %v %v", s, bs, err)
		}
		if p, err := e.svc.Transactions(ctx, s, core.ListQuery{}, ledger.Filter{}); err != nil || len(p.Items) != 0 {
			t.Fatalf("%v transactions: %v %v", s, p.Items, err)
		}
		if _, err := e.svc.Transaction(ctx, s, id); !errors.Is(err, ledger.ErrTransactionNotFound) {
			t.Fatalf("%v foreign id: %v", s, err)
		}
		if _, err := e.svc.Transactions(ctx, s, core.ListQuery{StartingAfter: id}, ledger.Filter{}); err == nil {
			t.Fatalf("%v foreign cursor accepted", s)
		}
		if n, err := e.rel.ProcessDue(ctx, &s, now.Add(72*time.Hour)); err != nil || n != 0 {
			t.Fatalf("%v released another scope's funds: %d %v", s, n, err)
		}
	}
	if got, err := e.svc.Transaction(ctx, a, id); err != nil || got.Status() != ledger.StatusPending || got.Net() != 957 {
		t.Fatalf("own transaction: %+v %v", got, err)
	}
}

// Twenty payments posted at the same moment to one merchant lose no update: the balance rows
// are locked (in sorted order) and changed once per unit of work.
func TestLedgerConcurrentPostingsLoseNoUpdate(t *testing.T) {
	t.Parallel()
	e := newLedgerEnv(t)
	ctx := context.Background()
	scope := pgtest.Merchant(t, e.db)
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- e.uow.Do(ctx, func(ctx context.Context, tx ledger.Tx) error {
				cur := core.Currency("EUR")
				if i%2 == 1 {
					cur = "USD"
				}
				_, err := ledger.PostPayment(ctx, tx, ledger.PaymentFacts{Scope: scope, PaymentID: "py_c" + string(rune('a'+i)), Currency: cur,
					Amount: 1000, Fee: 100, Succeeded: now, AvailableOn: now})
				return err
			})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	checkLedger(t, e.db, scope, "concurrent payments")
	for _, c := range []core.Currency{"EUR", "USD"} {
		if b := balanceOf(t, e, scope, c); b.Available != 9000 {
			t.Fatalf("%s available %d, want 9000", c, b.Available)
		}
	}
}

// The ledger's invariants hold after every step of a random mix of payments (pending and
// available at once, in three currencies), refunds with fee reversals, disputes with their fee,
// dispute reversals and releases: every currency sums to zero across accounts, and each
// balance equals the sum of its transactions.
func TestLedgerInvariantsUnderARandomMix(t *testing.T) {
	t.Parallel()
	e := newLedgerEnv(t)
	ctx := context.Background()
	scope := pgtest.Merchant(t, e.db)
	rng := rand.New(rand.NewSource(17))
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	type pay struct {
		id                  string
		cur                 core.Currency
		amount, fee         int64
		refunded, feeBack   int64
		disputed, disputeWn bool
		dispute             ledger.DisputeFacts
	}
	var pays []*pay
	curs := []core.Currency{"EUR", "JPY", "USD"}
	for step := 0; step < 120; step++ {
		now = now.Add(time.Duration(rng.Intn(36*3600)) * time.Second)
		var what string
		err := e.uow.Do(ctx, func(ctx context.Context, tx ledger.Tx) error {
			switch k := rng.Intn(10); {
			case k < 4 || len(pays) == 0:
				p := &pay{id: core.NewID("py_"), cur: curs[rng.Intn(3)], amount: int64(100 + rng.Intn(50000))}
				p.fee = p.amount * 3 / 100
				avail := now.Add(48 * time.Hour)
				if rng.Intn(5) == 0 {
					avail = now
				}
				what = "payment " + p.id
				if _, err := ledger.PostPayment(ctx, tx, ledger.PaymentFacts{Scope: scope, PaymentID: p.id, Currency: p.cur,
					Amount: p.amount, Fee: p.fee, Succeeded: now, AvailableOn: avail}); err != nil {
					return err
				}
				pays = append(pays, p)
			case k < 7:
				p := pays[rng.Intn(len(pays))]
				left := p.amount - p.refunded
				if left == 0 || p.disputed {
					what = "nothing"
					return nil
				}
				amt := 1 + rng.Int63n(left)
				back := p.fee*(p.refunded+amt)/p.amount - p.feeBack
				what = "refund of " + p.id
				if _, err := ledger.PostRefund(ctx, tx, ledger.RefundFacts{Scope: scope, RefundID: core.NewID("re_"), PaymentID: p.id,
					Currency: p.cur, Amount: amt, FeeReversed: back, Created: now}); err != nil {
					return err
				}
				p.refunded, p.feeBack = p.refunded+amt, p.feeBack+back
			case k < 9:
				p := pays[rng.Intn(len(pays))]
				if p.disputed || p.refunded == p.amount {
					what = "nothing"
					return nil
				}
				rate := map[core.Currency]string{"EUR": "1", "JPY": "162.51", "USD": "1.1625"}[p.cur]
				fee, err := ledger.DisputeFee(p.cur, rate)
				if err != nil {
					return err
				}
				p.dispute = ledger.DisputeFacts{Scope: scope, DisputeID: core.NewID("dp_"), PaymentID: p.id, Currency: p.cur,
					Amount: p.amount - p.refunded, Fee: fee, At: now}
				what = "dispute of " + p.id
				if _, err := ledger.PostDispute(ctx, tx, p.dispute); err != nil {
					return err
				}
				p.disputed = true
			default:
				for _, p := range pays {
					if p.disputed && !p.disputeWn {
						d := p.dispute
						d.At = now
						what = "dispute won " + p.id
						if _, err := ledger.PostDisputeReversal(ctx, tx, d); err != nil {
							return err
						}
						p.disputeWn = true
						return nil
					}
				}
				what = "nothing"
			}
			return nil
		})
		if err != nil {
			t.Fatalf("step %d (%s): %v", step, what, err)
		}
		checkLedger(t, e.db, scope, what)
		if _, err := e.rel.ProcessDue(ctx, &scope, now); err != nil {
			t.Fatal(err)
		}
		checkLedger(t, e.db, scope, "release at step")
	}
	if _, err := e.rel.ProcessDue(ctx, nil, now.Add(72*time.Hour)); err != nil {
		t.Fatal(err)
	}
	checkLedger(t, e.db, scope, "the last release")
	for _, c := range curs {
		if b := balanceOf(t, e, scope, c); b.Pending != 0 {
			t.Fatalf("%s pending %d after every release", c, b.Pending)
		}
	}
}

// PostPayments posts a batch of payments (ChargeMany's outcomes) as PostPayment posts each,
// in statements that do not grow with the batch: one journal per scope and instant.
func TestLedgerPostPaymentsInOneJournal(t *testing.T) {
	t.Parallel()
	db, log := countedDB(t)
	uow := postgres.Bind(postgres.NewUnitOfWork(db), func(tx *postgres.Tx) ledger.Tx { return tx })
	store := postgres.NewLedgerStore(db)
	svc, err := ledger.NewService(store)
	if err != nil {
		t.Fatal(err)
	}
	e := &ledgerEnv{db: db, uow: uow, svc: svc}
	ctx := context.Background()
	a, b := pgtest.Merchant(t, db), pgtest.Merchant(t, db)
	t0 := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	facts := func(scope core.Scope, prefix string, n int, at time.Time) []ledger.PaymentFacts {
		out := make([]ledger.PaymentFacts, n)
		for i := range out {
			out[i] = ledger.PaymentFacts{Scope: scope, PaymentID: fmt.Sprintf("py_%s%d", prefix, i), Currency: "EUR", Amount: 1000,
				Fee: 45, Succeeded: at, AvailableOn: at.Add(48 * time.Hour)}
		}
		return out
	}
	post := func(fs []ledger.PaymentFacts) int {
		t.Helper()
		before := log.Count()
		if err := uow.Do(ctx, func(ctx context.Context, tx ledger.Tx) error {
			ts, err := ledger.PostPayments(ctx, tx, fs)
			if err == nil && len(ts) != len(fs) {
				err = fmt.Errorf("%d transactions for %d payments", len(ts), len(fs))
			}
			for i := range ts {
				if err == nil && (ts[i].Snapshot().SourceID != fs[i].PaymentID || ts[i].Snapshot().Net != 955) {
					err = fmt.Errorf("transaction %d: %+v", i, ts[i].Snapshot())
				}
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return len(log.Since(before))
	}
	post(facts(a, "w", 1, t0)) // the balance rows exist from here on
	two, twenty := post(facts(a, "x", 2, t0)), post(facts(a, "y", 20, t0))
	if two != twenty {
		t.Errorf("20 payments took %d statements, 2 took %d", twenty, two)
	}
	t.Logf("a batch of payments of one scope and instant: %d statements (BEGIN and COMMIT included)", twenty)
	// Several scopes and instants: each its journal, every balance as if posted one by one.
	mixed := append(append(facts(b, "m", 3, t0), facts(a, "n", 2, t0.Add(time.Hour))...), facts(b, "o", 1, t0.Add(time.Hour))...)
	post(mixed)
	checkLedger(t, db, a, "batches of a")
	checkLedger(t, db, b, "batches of b")
	if got := balanceOf(t, e, a, "EUR"); got.Pending != 25*955 || got.Available != 0 {
		t.Fatalf("a: %+v, want pending %d", got, 25*955)
	}
	if got := balanceOf(t, e, b, "EUR"); got.Pending != 4*955 || got.Available != 0 {
		t.Fatalf("b: %+v, want pending %d", got, 4*955)
	}
	// A payment posted already fails the batch, which writes nothing.
	err = uow.Do(ctx, func(ctx context.Context, tx ledger.Tx) error {
		_, err := ledger.PostPayments(ctx, tx, append(facts(a, "p", 1, t0), facts(a, "x", 1, t0)...))
		return err
	})
	if !errors.Is(err, ledger.ErrTransactionExists) {
		t.Fatalf("a payment posted twice: %v", err)
	}
	if got := balanceOf(t, e, a, "EUR"); got.Pending != 25*955 {
		t.Fatalf("a failed batch changed the balance: %+v", got)
	}
}
