package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/billing"
)

type fixedSubClock struct{ now *time.Time }

func (c fixedSubClock) Now(context.Context, core.Scope) (time.Time, error) { return *c.now, nil }

type oneSubPrice struct{}

func (oneSubPrice) LookupSubscriptionPrice(_ context.Context, _ core.Scope, id string) (*billing.Price, error) {
	return &billing.Price{ID: id, Active: true, Recurring: true, Interval: billing.IntervalMonth, IntervalCount: 1,
		UsageType: "licensed", UnitAmount: 900, Currency: "EUR"}, nil
}

// Several sweeps at once (several kassa serve processes, or a test clock advance beside the
// background loop) expire each due subscription once, with one event each: rows are claimed
// with SKIP LOCKED in batches, each its own unit of work.
func TestSubscriptionSweepsRunConcurrentlyWithoutRepeats(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	now := time.Date(2027, 1, 31, 10, 0, 0, 0, time.UTC)
	svc, err := billing.NewService(billing.Deps{Store: postgres.NewBillingStore(db),
		UoW:    postgres.Bind(postgres.NewUnitOfWork(db), func(tx *postgres.Tx) billing.Tx { return tx }),
		Clocks: fixedSubClock{&now}, Prices: oneSubPrice{}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const n = 230 // more than two batches
	for i := range n {
		_, err := svc.CreateSubscription(ctx, core.Caller{Scope: scope, Onboarded: true}, billing.CreateInput{
			PriceID: "price_1", CustomerName: "Ada Lovelace", CustomerEmail: fmt.Sprintf("c%d@example.com", i)})
		if err != nil {
			t.Fatal(err)
		}
	}
	until := now.Add(24 * time.Hour)
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, err := svc.ProcessDue(ctx, &scope, until)
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			total += k
			mu.Unlock()
		}()
	}
	wg.Wait()
	if k, err := svc.ProcessDue(ctx, nil, until); err != nil || k != 0 {
		t.Fatalf("a sweep after the others found %d more (%v)", k, err)
	}
	if total != n {
		t.Fatalf("the sweeps expired %d subscriptions, want %d", total, n)
	}
	var expired, events int
	if err := db.Get(&expired, `SELECT count(*) FROM subscriptions WHERE merchant_id = $1 AND status = 'incomplete_expired' AND due_at IS NULL`, scope.MerchantID); err != nil {
		t.Fatal(err)
	}
	if err := db.Get(&events, `SELECT count(*) FROM events WHERE merchant_id = $1 AND type = 'customer.subscription.updated'`, scope.MerchantID); err != nil {
		t.Fatal(err)
	}
	if expired != n || events != n {
		t.Fatalf("%d expired, %d events, want %d each", expired, events, n)
	}
}
