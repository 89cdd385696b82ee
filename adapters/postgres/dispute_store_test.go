package postgres_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/adapters/sandbox"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
)

// disputesOn is the dispute lifecycle as the wiring builds it, at the clock's time.
func disputesOn(t *testing.T, db *sqlx.DB, at time.Time) *payments.Disputes {
	t.Helper()
	ds, err := payments.NewDisputes(postgres.NewDisputeStore(db),
		postgres.Bind(postgres.NewUnitOfWork(db), func(tx *postgres.Tx) payments.Tx { return tx }), fixedClocks{at})
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// Several dispute sweeps at once (the background sweep of several processes and a test clock
// advance): every due dispute closes once, with one charge.dispute.closed, and moves its
// payment with it; the stored due time projects the module's rule.
func TestDisputeSweepExactlyOnceUnderConcurrency(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	f := newDueFixture(t, db)
	scope := pgtest.Merchant(t, db)
	ctx := context.Background()
	const n = 8
	for range n {
		f.pay(t, scope, cardDisputed)
	}
	opens := payNow.Add(sandbox.DisputeDelay)
	if got, err := f.sweeper.ProcessDue(ctx, &scope, opens); err != nil || got != n {
		t.Fatalf("opening: %d %v", got, err)
	}
	// Half answered with winning evidence, half left without an answer.
	list, _, err := disputesOn(t, db, opens).List(ctx, scope, "", 100)
	if err != nil || len(list) != n {
		t.Fatalf("list: %d %v", len(list), err)
	}
	submitted := opens.Add(time.Hour)
	for i, d := range list {
		if i%2 == 0 {
			if _, err := disputesOn(t, db, submitted).SaveEvidence(ctx, payments.EvidenceRequest{
				Scope: scope, DisputeID: d.ID(), Text: "winning_evidence", Submit: true}); err != nil {
				t.Fatal(err)
			}
		}
	}
	var dueOK bool
	if err := db.Get(&dueOK, `SELECT bool_and(due_at = CASE WHEN status = 'under_review' THEN $2::timestamptz ELSE evidence_due_by END)
		FROM disputes WHERE merchant_id = $1`, scope.MerchantID, submitted.Add(payments.ReviewDelay)); err != nil || !dueOK {
		t.Fatalf("due_at projection: %v %v", dueOK, err)
	}
	until := opens.Add(payments.EvidenceWindow)
	const sweepers = 4
	counts, errs := make([]int, sweepers), make([]error, sweepers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range sweepers {
		sw := disputesOn(t, db, until)
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			var sc *core.Scope
			if i%2 == 0 {
				sc = &scope
			}
			counts[i], errs[i] = sw.ProcessDue(ctx, sc, until)
		}()
	}
	close(start)
	wg.Wait()
	total := 0
	for i := range sweepers {
		if errs[i] != nil {
			t.Fatalf("sweeper %d: %v", i, errs[i])
		}
		total += counts[i]
	}
	if total != n {
		t.Fatalf("%d disputes closed, want %d", total, n)
	}
	if got := len(eventsOf(t, db, scope, payments.EventChargeDisputeClosed)); got != n {
		t.Fatalf("%d charge.dispute.closed events, want %d", got, n)
	}
	won := countRows(t, db, `SELECT count(*) FROM disputes d JOIN payments p ON p.merchant_id = d.merchant_id
		AND p.environment = d.environment AND p.id = d.payment_id
		WHERE d.merchant_id = $1 AND d.status = 'won' AND p.status = 'succeeded' AND NOT d.past_due AND d.due_at IS NULL`, scope.MerchantID)
	lost := countRows(t, db, `SELECT count(*) FROM disputes d JOIN payments p ON p.merchant_id = d.merchant_id
		AND p.environment = d.environment AND p.id = d.payment_id
		WHERE d.merchant_id = $1 AND d.status = 'lost' AND p.status = 'disputed' AND p.dispute_lost AND d.past_due AND d.due_at IS NULL`, scope.MerchantID)
	if won != n/2 || lost != n/2 {
		t.Fatalf("won %d, lost %d; want %d each", won, lost, n/2)
	}
	if got, err := disputesOn(t, db, until).ProcessDue(ctx, &scope, until.Add(time.Hour)); err != nil || got != 0 {
		t.Fatalf("a second sweep: %d %v", got, err)
	}
	if n := countRows(t, db, `SELECT count(*) FROM disputes WHERE merchant_id = $1 AND fee = 1500 AND fee_eur = 1500 AND fee_rate = '1'`,
		scope.MerchantID); n != 8 {
		t.Fatalf("%d disputes with the EUR fee", n)
	}
}
