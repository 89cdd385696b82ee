// Package billingtest is the behaviour every implementation of billing's repositories and
// store shows, written once and run on each: adapters/postgres runs it on a database, the
// module's tests on Fake. It imports testing and is imported by tests only.
package billingtest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/billing"
	"github.com/kassa-pay/kassa/ports"
)

// Harness is one implementation under test.
type Harness struct {
	UoW   ports.UnitOfWorkOf[billing.Tx]
	Store billing.Store
	// NewScope returns the test scope of a merchant no other case uses.
	NewScope func(t *testing.T) core.Scope
	// SkipsLocked: units of work run concurrently and a claim skips rows another holds (a
	// fake that runs one unit at a time cannot show it).
	SkipsLocked bool
}

// RunStore runs the suite; newHarness is called once per case, and the cases run in parallel.
func RunStore(t *testing.T, newHarness func(t *testing.T) Harness) {
	cases := []struct {
		name string
		run  func(t *testing.T, h Harness)
	}{
		{"a customer is found by e-mail in any case", foundByEmail},
		{"customers are per merchant and environment", customerIsolation},
		{"unknown customers", unknownCustomers},
		{"a saved method round trip, default and processor customer", methodRoundTrip},
		{"a processor reference is saved once and the unit goes on", methodOnce},
		{"a failed unit of work writes nothing", rollback},
		{"concurrent finds of one e-mail agree on one customer", concurrentFinds},
		{"a subscription round trip", subscriptionRoundTrip},
		{"subscriptions are per merchant and environment", subscriptionIsolation},
		{"subscriptions listed newest first, filtered, with cursors", subscriptionList},
		{"due subscriptions are claimed earliest first, once", subscriptionClaims},
		{"kept proration lines are consumed with the renewal's save, never lost on a rollback", pendingLinesConsumed},
		{"a pending setup is one per subscription, replaced, locked, deleted (also for its invoice only), per scope", pendingSetups},
		{"customers are locked many at once in id order, their balances read at once, per scope", lockManyCustomers},
		{"subscriptions are saved many at once, each as Save would, or none", saveManySubscriptions},
		{"subscriptions are locked many at once in scope and id order, per scope", lockManySubscriptions},
		{"pending setups are deleted many at once, each for its invoice only, per scope", deleteSetupsForInvoices},
		{"saved methods are read many at once, per scope", getManyMethods},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, newHarness(t))
		})
	}
}

var (
	ctx     = context.Background()
	t0      = time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)
	errBoom = errors.New("boom")
)

func findOrCreate(t *testing.T, h Harness, scope core.Scope, name, email string) (*billing.Customer, bool) {
	t.Helper()
	var c *billing.Customer
	var created bool
	err := h.UoW.Do(ctx, func(ctx context.Context, tx billing.Tx) error {
		var err error
		c, created, err = billing.FindOrCreateIn(ctx, tx, scope, name, email, t0)
		return err
	})
	if err != nil {
		t.Fatalf("find or create %s: %v", email, err)
	}
	return c, created
}

func saveMethod(t *testing.T, h Harness, scope core.Scope, customer, ref string, last4 string, makeDefault bool) *billing.PaymentMethod {
	t.Helper()
	var pm *billing.PaymentMethod
	err := h.UoW.Do(ctx, func(ctx context.Context, tx billing.Tx) error {
		var err error
		_, pm, err = billing.RecordSavedMethod(ctx, tx, scope, customer, billing.Saved{Type: ports.MethodCard, ProcessorRef: ref,
			Card: &ports.CardInfo{Brand: "visa", Last4: last4, Country: "DE", Funding: "credit", ExpMonth: 12, ExpYear: 2030}},
			"pcus_1", makeDefault, t0)
		return err
	})
	if err != nil {
		t.Fatalf("save method: %v", err)
	}
	return pm
}

func foundByEmail(t *testing.T, h Harness) {
	scope := h.NewScope(t)
	a, created := findOrCreate(t, h, scope, "Ada Lovelace", "Ada@Example.com")
	if !created || a.Email() != "Ada@Example.com" || a.Name() != "Ada Lovelace" {
		t.Fatalf("created %v %+v", created, a.Snapshot())
	}
	b, created := findOrCreate(t, h, scope, "Somebody Else", "  ada@example.COM ")
	if created || b.ID() != a.ID() || b.Name() != "Ada Lovelace" {
		t.Fatalf("found %v %+v, want %s", created, b.Snapshot(), a.ID())
	}
	got, err := h.Store.Customer(ctx, scope, a.ID())
	if err != nil || got.Snapshot().EmailKey != "ada@example.com" || !got.Created().Equal(t0) || got.DefaultPaymentMethod() != nil {
		t.Fatalf("read back %+v %v", got, err)
	}
}

func customerIsolation(t *testing.T, h Harness) {
	a, b := h.NewScope(t), h.NewScope(t)
	live := core.Scope{MerchantID: a.MerchantID, Env: core.EnvLive}
	ca, _ := findOrCreate(t, h, a, "Ada Lovelace", "ada@example.com")
	cb, created := findOrCreate(t, h, b, "Ada Lovelace", "ada@example.com")
	cl, createdLive := findOrCreate(t, h, live, "Ada Lovelace", "ada@example.com")
	if !created || !createdLive || cb.ID() == ca.ID() || cl.ID() == ca.ID() {
		t.Fatalf("the same e-mail in another merchant or environment is another customer")
	}
	if _, err := h.Store.Customer(ctx, b, ca.ID()); !errors.Is(err, billing.ErrNotFound) {
		t.Fatalf("another merchant's customer: %v", err)
	}
	if _, err := h.Store.Customer(ctx, live, ca.ID()); !errors.Is(err, billing.ErrNotFound) {
		t.Fatalf("the test customer in live: %v", err)
	}
	pm := saveMethod(t, h, a, ca.ID(), "ref_iso", "4242", true)
	if _, err := h.Store.PaymentMethod(ctx, b, pm.ID()); !errors.Is(err, billing.ErrMethodNotFound) {
		t.Fatalf("another merchant's method: %v", err)
	}
	if ms, err := h.Store.CustomerMethods(ctx, b, ca.ID()); err != nil || len(ms) != 0 {
		t.Fatalf("another merchant's methods: %v %v", ms, err)
	}
	err := h.UoW.Do(ctx, func(ctx context.Context, tx billing.Tx) error {
		if _, err := tx.Customers().Lock(ctx, b, ca.ID()); !errors.Is(err, billing.ErrNotFound) {
			t.Errorf("lock of another merchant's customer: %v", err)
		}
		if _, err := tx.PaymentMethods().ByProcessorRef(ctx, b, "ref_iso"); !errors.Is(err, billing.ErrMethodNotFound) {
			t.Errorf("another merchant's processor reference: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func unknownCustomers(t *testing.T, h Harness) {
	scope := h.NewScope(t)
	if _, err := h.Store.Customer(ctx, scope, "cus_nope"); !errors.Is(err, billing.ErrNotFound) {
		t.Fatalf("unknown: %v", err)
	}
	if _, err := h.Store.PaymentMethod(ctx, scope, "pm_nope"); !errors.Is(err, billing.ErrMethodNotFound) {
		t.Fatalf("unknown method: %v", err)
	}
	err := h.UoW.Do(ctx, func(ctx context.Context, tx billing.Tx) error {
		_, err := tx.Customers().Lock(ctx, scope, "cus_nope")
		return err
	})
	if !errors.Is(err, billing.ErrNotFound) {
		t.Fatalf("lock unknown: %v", err)
	}
}

func methodRoundTrip(t *testing.T, h Harness) {
	scope := h.NewScope(t)
	c, _ := findOrCreate(t, h, scope, "Ada Lovelace", "ada@example.com")
	first := saveMethod(t, h, scope, c.ID(), "ref_1", "4242", false)
	got, err := h.Store.Customer(ctx, scope, c.ID())
	if err != nil || got.DefaultPaymentMethod() == nil || *got.DefaultPaymentMethod() != first.ID() || got.ProcessorRef() != "pcus_1" {
		t.Fatalf("the first method is the default: %+v %v", got.Snapshot(), err)
	}
	second := saveMethod(t, h, scope, c.ID(), "ref_2", "0341", false)
	if got, _ = h.Store.Customer(ctx, scope, c.ID()); *got.DefaultPaymentMethod() != first.ID() {
		t.Fatalf("a second method without makeDefault replaced the default")
	}
	third := saveMethod(t, h, scope, c.ID(), "ref_3", "1111", true)
	if got, _ = h.Store.Customer(ctx, scope, c.ID()); *got.DefaultPaymentMethod() != third.ID() {
		t.Fatalf("makeDefault: default %v, want %s", *got.DefaultPaymentMethod(), third.ID())
	}
	m, err := h.Store.PaymentMethod(ctx, scope, second.ID())
	if err != nil || m.Snapshot() != second.Snapshot() {
		t.Fatalf("read back %+v %v, want %+v", m.Snapshot(), err, second.Snapshot())
	}
	ms, err := h.Store.CustomerMethods(ctx, scope, c.ID())
	if err != nil || len(ms) != 3 || ms[0].ID() != third.ID() || ms[2].ID() != first.ID() {
		t.Fatalf("methods newest first: %v %v", ms, err)
	}
}

func methodOnce(t *testing.T, h Harness) {
	scope := h.NewScope(t)
	c, _ := findOrCreate(t, h, scope, "Ada Lovelace", "ada@example.com")
	pm := saveMethod(t, h, scope, c.ID(), "ref_once", "4242", false)
	again := saveMethod(t, h, scope, c.ID(), "ref_once", "4242", false)
	if again.ID() != pm.ID() {
		t.Fatalf("the same processor reference saved twice: %s and %s", pm.ID(), again.ID())
	}
	// The refused insert leaves the unit of work usable: a write after it commits.
	err := h.UoW.Do(ctx, func(ctx context.Context, tx billing.Tx) error {
		dup, _ := billing.NewPaymentMethod(c, billing.Saved{Type: ports.MethodCard, ProcessorRef: "ref_once",
			Card: &ports.CardInfo{Brand: "visa", Last4: "4242"}}, t0)
		if err := tx.PaymentMethods().Insert(ctx, dup); !errors.Is(err, billing.ErrMethodExists) {
			t.Errorf("insert of a kept processor reference: %v", err)
		}
		_, _, err := billing.FindOrCreateIn(ctx, tx, scope, "Grace Hopper", "grace@example.com", t0)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, created := findOrCreate(t, h, scope, "Grace Hopper", "grace@example.com"); created {
		t.Fatalf("the write after the refused insert was lost")
	}
}

func rollback(t *testing.T, h Harness) {
	scope := h.NewScope(t)
	var id string
	err := h.UoW.Do(ctx, func(ctx context.Context, tx billing.Tx) error {
		c, _, err := billing.FindOrCreateIn(ctx, tx, scope, "Ada Lovelace", "ada@example.com", t0)
		if err != nil {
			return err
		}
		id = c.ID()
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("Do: %v", err)
	}
	if _, err := h.Store.Customer(ctx, scope, id); !errors.Is(err, billing.ErrNotFound) {
		t.Fatalf("a rolled back customer: %v", err)
	}
	if _, created := findOrCreate(t, h, scope, "Ada Lovelace", "ada@example.com"); !created {
		t.Fatalf("the e-mail of a rolled back customer is taken")
	}
}

func concurrentFinds(t *testing.T, h Harness) {
	scope := h.NewScope(t)
	const n = 8
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := h.UoW.Do(ctx, func(ctx context.Context, tx billing.Tx) error {
				c, _, err := billing.FindOrCreateIn(ctx, tx, scope, "Ada Lovelace", "ada@example.com", t0)
				if err == nil {
					ids[i] = c.ID()
				}
				return err
			})
			if err != nil {
				t.Errorf("find %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] || id == "" {
			t.Fatalf("concurrent finds: %v", ids)
		}
	}
}

var monthly = &billing.Price{ID: "price_m", Active: true, Recurring: true, Interval: billing.IntervalMonth, IntervalCount: 1,
	UsageType: "licensed", UnitAmount: 900, Currency: "EUR"}

// newSubscription inserts an incomplete subscription of a new customer created at, and
// returns it.
func newSubscription(t *testing.T, h Harness, scope core.Scope, email string, price *billing.Price, at time.Time) *billing.Subscription {
	t.Helper()
	var sub *billing.Subscription
	err := h.UoW.Do(ctx, func(ctx context.Context, tx billing.Tx) error {
		c, _, err := billing.FindOrCreateIn(ctx, tx, scope, "Ada Lovelace", email, at)
		if err != nil {
			return err
		}
		in := billing.CreateInput{PriceID: price.ID, CustomerName: "Ada Lovelace", CustomerEmail: email, Metadata: map[string]string{"k": "v"}}
		if sub, err = billing.NewSubscription(scope, c, price, in, 2, at); err != nil {
			return err
		}
		return tx.Subscriptions().Insert(ctx, sub)
	})
	if err != nil {
		t.Fatalf("insert subscription: %v", err)
	}
	return sub
}

func subscriptionRoundTrip(t *testing.T, h Harness) {
	scope := h.NewScope(t)
	sub := newSubscription(t, h, scope, "ada@example.com", monthly, t0)
	got, err := h.Store.Subscription(ctx, scope, sub.ID())
	if err != nil {
		t.Fatal(err)
	}
	want := sub.Snapshot()
	gs := got.Snapshot()
	if gs.ID != want.ID || gs.Status != want.Status || gs.Quantity != 2 || gs.Customer != want.Customer || !gs.PeriodEnd.Equal(want.PeriodEnd) ||
		!gs.Anchor.Equal(want.Anchor) || gs.Metadata["k"] != "v" || gs.DefaultMethod != nil || gs.TrialEnd != nil {
		t.Fatalf("read back %+v, want %+v", gs, want)
	}
	// Lock, change, save: a default method and a pending cancellation survive the trip.
	err = h.UoW.Do(ctx, func(ctx context.Context, tx billing.Tx) error {
		s, err := tx.Subscriptions().Lock(ctx, scope, sub.ID())
		if err != nil {
			return err
		}
		snap := s.Snapshot()
		snap.Status = billing.StatusActive
		snap.DefaultMethod = &billing.DefaultMethod{ID: "pm_1", Summary: billing.Summary{Type: ports.MethodCard, Brand: "visa", Last4: "4242", ExpMonth: 12, ExpYear: 2030}}
		s = billing.RehydrateSubscription(snap)
		if _, err := s.Cancel(true, t0.Add(time.Hour)); err != nil {
			return err
		}
		return tx.Subscriptions().Save(ctx, s)
	})
	if err != nil {
		t.Fatal(err)
	}
	got, _ = h.Store.Subscription(ctx, scope, sub.ID())
	gs = got.Snapshot()
	if gs.Status != billing.StatusActive || !gs.CancelAtPeriodEnd || gs.CanceledAt == nil || !gs.CanceledAt.Equal(t0.Add(time.Hour)) ||
		gs.DefaultMethod == nil || gs.DefaultMethod.Last4 != "4242" || gs.DefaultMethod.ID != "pm_1" {
		t.Fatalf("after save %+v", gs)
	}
}

func subscriptionIsolation(t *testing.T, h Harness) {
	a, b := h.NewScope(t), h.NewScope(t)
	sub := newSubscription(t, h, a, "ada@example.com", monthly, t0)
	if _, err := h.Store.Subscription(ctx, b, sub.ID()); !errors.Is(err, billing.ErrSubscriptionMissing) {
		t.Fatalf("another merchant's subscription: %v", err)
	}
	// A trial's first payment is found by its id, in any scope (its secret is the credential).
	trial := *monthly
	trial.TrialPeriodDays = ptrInt(7)
	tr := newSubscription(t, h, a, "trial@example.com", &trial, t0)
	got, err := h.Store.SubscriptionByPaymentIntent(ctx, tr.PaymentIntent())
	if err != nil || got.ID() != tr.ID() || got.Snapshot().ClientSecret == nil || *got.Snapshot().ClientSecret != *tr.Snapshot().ClientSecret {
		t.Fatalf("by payment intent: %v %v", got, err)
	}
	if _, err := h.Store.SubscriptionByPaymentIntent(ctx, "pi_000000000000000000000000"); !errors.Is(err, billing.ErrSubscriptionMissing) {
		t.Fatalf("unknown payment intent: %v", err)
	}
	live := core.Scope{MerchantID: a.MerchantID, Env: core.EnvLive}
	if _, err := h.Store.Subscription(ctx, live, sub.ID()); !errors.Is(err, billing.ErrSubscriptionMissing) {
		t.Fatalf("the test subscription in live: %v", err)
	}
	if p, err := h.Store.Subscriptions(ctx, b, core.ListQuery{Limit: 10}, billing.SubscriptionFilter{}); err != nil || len(p.Items) != 0 {
		t.Fatalf("another merchant's list: %v %v", p, err)
	}
	if _, err := h.Store.Subscriptions(ctx, b, core.ListQuery{Limit: 10, StartingAfter: sub.ID()}, billing.SubscriptionFilter{}); !errors.Is(err, billing.ErrUnknownCursor) {
		t.Fatalf("another merchant's subscription as a cursor: %v", err)
	}
	err = h.UoW.Do(ctx, func(ctx context.Context, tx billing.Tx) error {
		_, err := tx.Subscriptions().Lock(ctx, b, sub.ID())
		return err
	})
	if !errors.Is(err, billing.ErrSubscriptionMissing) {
		t.Fatalf("lock of another merchant's subscription: %v", err)
	}
	if subs := claim(t, h, &b, t0.AddDate(1, 0, 0)); len(subs) != 0 {
		t.Fatalf("another merchant's due subscriptions claimed: %d", len(subs))
	}
}

func subscriptionList(t *testing.T, h Harness) {
	scope := h.NewScope(t)
	yearly := *monthly
	yearly.ID, yearly.Interval = "price_y", billing.IntervalYear
	var ids []string
	for i := 0; i < 5; i++ {
		p := monthly
		if i%2 == 1 {
			p = &yearly
		}
		ids = append(ids, newSubscription(t, h, scope, fmt.Sprintf("c%d@example.com", i%2), p, t0).ID())
	}
	page, err := h.Store.Subscriptions(ctx, scope, core.ListQuery{Limit: 2}, billing.SubscriptionFilter{})
	if err != nil || len(page.Items) != 2 || !page.HasMore || page.Items[0].ID() != ids[4] || page.Items[1].ID() != ids[3] {
		t.Fatalf("first page %v %v", page, err)
	}
	page, _ = h.Store.Subscriptions(ctx, scope, core.ListQuery{Limit: 2, StartingAfter: ids[3]}, billing.SubscriptionFilter{})
	if len(page.Items) != 2 || page.Items[0].ID() != ids[2] || !page.HasMore {
		t.Fatalf("second page %v", page)
	}
	page, _ = h.Store.Subscriptions(ctx, scope, core.ListQuery{Limit: 2, EndingBefore: ids[1]}, billing.SubscriptionFilter{})
	if len(page.Items) != 2 || page.Items[0].ID() != ids[3] || page.Items[1].ID() != ids[2] || !page.HasMore {
		t.Fatalf("page before %s: %v", ids[1], page)
	}
	price := "price_y"
	page, _ = h.Store.Subscriptions(ctx, scope, core.ListQuery{Limit: 10}, billing.SubscriptionFilter{Price: &price})
	if len(page.Items) != 2 || page.Items[0].ID() != ids[3] {
		t.Fatalf("price filter %v", page)
	}
	first, _ := h.Store.Subscription(ctx, scope, ids[0])
	cus := first.Customer()
	page, _ = h.Store.Subscriptions(ctx, scope, core.ListQuery{Limit: 10}, billing.SubscriptionFilter{Customer: &cus})
	if len(page.Items) != 3 {
		t.Fatalf("customer filter %d", len(page.Items))
	}
	active, incomplete := billing.StatusActive, billing.StatusIncomplete
	if page, _ = h.Store.Subscriptions(ctx, scope, core.ListQuery{Limit: 10}, billing.SubscriptionFilter{Status: &active}); len(page.Items) != 0 {
		t.Fatalf("status active: %d", len(page.Items))
	}
	if page, _ = h.Store.Subscriptions(ctx, scope, core.ListQuery{Limit: 10}, billing.SubscriptionFilter{Status: &incomplete}); len(page.Items) != 5 {
		t.Fatalf("status incomplete: %d", len(page.Items))
	}
}

func claim(t *testing.T, h Harness, scope *core.Scope, until time.Time) []*billing.Subscription {
	t.Helper()
	var out []*billing.Subscription
	err := h.UoW.Do(ctx, func(ctx context.Context, tx billing.Tx) error {
		var err error
		out, err = tx.Subscriptions().ClaimDue(ctx, scope, until, 100)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func subscriptionClaims(t *testing.T, h Harness) {
	scope := h.NewScope(t)
	late := newSubscription(t, h, scope, "late@example.com", monthly, t0.Add(time.Hour))
	early := newSubscription(t, h, scope, "early@example.com", monthly, t0)
	if subs := claim(t, h, &scope, t0.Add(23*time.Hour-time.Second)); len(subs) != 0 {
		t.Fatalf("claimed before due: %d", len(subs))
	}
	subs := claim(t, h, &scope, t0.Add(48*time.Hour))
	if len(subs) != 2 || subs[0].ID() != early.ID() || subs[1].ID() != late.ID() {
		t.Fatalf("claimed %v, want early then late", subs)
	}
	at, ok, err := h.Store.NextDue(ctx, scope, t0.Add(48*time.Hour))
	if err != nil || !ok || !at.Equal(t0.Add(23*time.Hour)) {
		t.Fatalf("next due %v %v %v", at, ok, err)
	}
	if _, ok, _ := h.Store.NextDue(ctx, scope, t0.Add(22*time.Hour)); ok {
		t.Fatalf("next due before any is due")
	}
	// Expired, it is due no more.
	err = h.UoW.Do(ctx, func(ctx context.Context, tx billing.Tx) error {
		s, err := tx.Subscriptions().Lock(ctx, scope, early.ID())
		if err != nil {
			return err
		}
		if _, _, err := s.ProcessDue(t0.Add(48 * time.Hour)); err != nil {
			return err
		}
		return tx.Subscriptions().Save(ctx, s)
	})
	if err != nil {
		t.Fatal(err)
	}
	if subs := claim(t, h, &scope, t0.Add(48*time.Hour)); len(subs) != 1 || subs[0].ID() != late.ID() {
		t.Fatalf("after the expiry: %v", subs)
	}
	// A row another unit of work holds is skipped.
	held := make(chan struct{})
	release := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- h.UoW.Do(ctx, func(ctx context.Context, tx billing.Tx) error {
			if _, err := tx.Subscriptions().Lock(ctx, scope, late.ID()); err != nil {
				return err
			}
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	if h.SkipsLocked {
		if subs := claim(t, h, &scope, t0.Add(48*time.Hour)); len(subs) != 0 {
			t.Errorf("claimed a locked row: %v", subs)
		}
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func ptrInt(v int) *int { return &v }

// pendingLinesConsumed: the scheduled change and the kept proration lines survive the trip; a
// renewal whose unit of work fails after taking them (a crash before commit) leaves them for
// the retry, and the renewal that commits consumes them, so they are billed once.
func pendingLinesConsumed(t *testing.T, h Harness) {
	scope := h.NewScope(t)
	sub := newSubscription(t, h, scope, "ada@example.com", monthly, t0)
	lines := []billing.InvoiceLine{
		{Description: "Unused time", PriceID: monthly.ID, Quantity: 1, UnitAmount: -600},
		{Description: "Remaining time", PriceID: "price_2", Quantity: 1, UnitAmount: 1800},
	}
	update := &billing.PendingUpdate{PriceID: "price_2", UnitAmount: 1200, Quantity: 3, Interval: billing.IntervalYear, IntervalCount: 1}
	err := h.UoW.Do(ctx, func(ctx context.Context, tx billing.Tx) error {
		s, err := tx.Subscriptions().Lock(ctx, scope, sub.ID())
		if err != nil {
			return err
		}
		snap := s.Snapshot()
		snap.Status, snap.PendingLines, snap.PendingUpdate = billing.StatusActive, lines, update
		return tx.Subscriptions().Save(ctx, billing.RehydrateSubscription(snap))
	})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := h.Store.Subscription(ctx, scope, sub.ID())
	if gs := got.Snapshot(); len(gs.PendingLines) != 2 || gs.PendingLines[0] != lines[0] || gs.PendingLines[1] != lines[1] ||
		gs.PendingUpdate == nil || *gs.PendingUpdate != *update {
		t.Fatalf("read back %+v %+v", gs.PendingLines, gs.PendingUpdate)
	}
	renew := func(fail bool) error {
		return h.UoW.Do(ctx, func(ctx context.Context, tx billing.Tx) error {
			s, err := tx.Subscriptions().Lock(ctx, scope, sub.ID())
			if err != nil {
				return err
			}
			if err := s.StartRenewal("in_1"); err != nil {
				return err
			}
			if err := tx.Subscriptions().Save(ctx, s); err != nil {
				return err
			}
			if fail {
				return errBoom
			}
			return nil
		})
	}
	if err := renew(true); !errors.Is(err, errBoom) {
		t.Fatalf("failed renewal: %v", err)
	}
	if got, _ := h.Store.Subscription(ctx, scope, sub.ID()); len(got.PendingLines()) != 2 {
		t.Fatalf("a rolled back renewal lost the lines: %+v", got.PendingLines())
	}
	if err := renew(false); err != nil {
		t.Fatal(err)
	}
	if got, _ := h.Store.Subscription(ctx, scope, sub.ID()); len(got.PendingLines()) != 0 || got.Collecting() != "in_1" {
		t.Fatalf("after the renewal: %+v", got.PendingLines())
	}
}

func lockManyCustomers(t *testing.T, h Harness) {
	a, b := h.NewScope(t), h.NewScope(t)
	c1, _ := findOrCreate(t, h, a, "Ada", "ada@example.com")
	c2, _ := findOrCreate(t, h, a, "Bob", "bob@example.com")
	c3, _ := findOrCreate(t, h, b, "Cy", "cy@example.com")
	bt := func(scope core.Scope, customer string, cur core.Currency, amount int64, reason string) *billing.BalanceTransaction {
		return &billing.BalanceTransaction{ID: core.NewID("cbtxn_"), Scope: scope, Customer: customer, Currency: cur, Amount: amount,
			Reason: reason, Subscription: "sub_1", Created: t0}
	}
	err := h.UoW.Do(ctx, func(ctx context.Context, tx billing.Tx) error {
		for _, x := range []*billing.BalanceTransaction{bt(a, c1.ID(), "EUR", -500, billing.BalanceProrationCredit),
			bt(a, c1.ID(), "EUR", 200, billing.BalanceProrationChargeAtCancel),
			bt(a, c1.ID(), "USD", 100, billing.BalanceProrationTooSmall), bt(b, c3.ID(), "EUR", 999, billing.BalanceProrationCredit)} {
			if err := tx.Customers().AddBalanceTransaction(ctx, x); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = h.UoW.Do(ctx, func(ctx context.Context, tx billing.Tx) error {
		got, err := tx.Customers().LockMany(ctx, []billing.CustomerRef{{Scope: a, ID: c2.ID()}, {Scope: a, ID: c1.ID()},
			{Scope: a, ID: c3.ID()}, {Scope: a, ID: "cus_nope"}})
		if err != nil {
			return err
		}
		lo, hi := c1.ID(), c2.ID()
		if hi < lo {
			lo, hi = hi, lo
		}
		if len(got) != 2 || got[0].ID() != lo || got[1].ID() != hi || got[0].Scope() != a {
			return fmt.Errorf("locked %v, want %s and %s of the scope, in id order", got, lo, hi)
		}
		if none, err := tx.Customers().LockMany(ctx, nil); err != nil || len(none) != 0 {
			return fmt.Errorf("no refs: %v %w", none, err)
		}
		sums, err := tx.Customers().Balances(ctx, []billing.BalanceKey{{Scope: a, Customer: c1.ID(), Currency: "EUR"},
			{Scope: a, Customer: c2.ID(), Currency: "EUR"}, {Scope: a, Customer: c1.ID(), Currency: "USD"},
			{Scope: a, Customer: c3.ID(), Currency: "EUR"}, {Scope: b, Customer: c3.ID(), Currency: "EUR"}})
		if err != nil {
			return err
		}
		if fmt.Sprint(sums) != "[-300 0 100 0 999]" {
			return fmt.Errorf("balances %v, want [-300 0 100 0 999]", sums)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func saveManySubscriptions(t *testing.T, h Harness) {
	a, b := h.NewScope(t), h.NewScope(t)
	s1 := newSubscription(t, h, a, "ada@example.com", monthly, t0)
	s2 := newSubscription(t, h, a, "bob@example.com", monthly, t0)
	other := newSubscription(t, h, b, "cy@example.com", monthly, t0)
	change := func(sub *billing.Subscription, last4 string) *billing.Subscription {
		snap := sub.Snapshot()
		snap.Status = billing.StatusActive
		snap.DefaultMethod = &billing.DefaultMethod{ID: "pm_" + last4, Summary: billing.Summary{Type: ports.MethodCard, Brand: "visa", Last4: last4, ExpMonth: 12, ExpYear: 2030}}
		snap.PendingLines = []billing.InvoiceLine{{Description: "Proration " + last4, PriceID: "price_1", Quantity: 1, UnitAmount: -100}}
		next := t0.Add(time.Hour)
		snap.Collection = billing.Collection{Invoice: "in_" + last4, RenewedAt: &t0, NextCharge: &next}
		snap.Updated = next
		return billing.RehydrateSubscription(snap)
	}
	// One that is not there (another scope's) writes none of the batch.
	moved := other.Snapshot()
	moved.Scope = a
	err := h.UoW.Do(ctx, func(ctx context.Context, tx billing.Tx) error {
		return tx.Subscriptions().SaveMany(ctx, []*billing.Subscription{change(s1, "1111"), billing.RehydrateSubscription(moved)})
	})
	if !errors.Is(err, billing.ErrSubscriptionMissing) {
		t.Fatalf("a batch with another scope's subscription: %v", err)
	}
	if got, _ := h.Store.Subscription(ctx, a, s1.ID()); got.Snapshot().Status != s1.Snapshot().Status || got.Snapshot().DefaultMethod != nil {
		t.Fatalf("a failed batch wrote %+v", got.Snapshot())
	}
	err = h.UoW.Do(ctx, func(ctx context.Context, tx billing.Tx) error {
		return tx.Subscriptions().SaveMany(ctx, []*billing.Subscription{change(s1, "1111"), change(s2, "2222")})
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []struct {
		sub   *billing.Subscription
		last4 string
	}{{s1, "1111"}, {s2, "2222"}} {
		got, err := h.Store.Subscription(ctx, a, x.sub.ID())
		if err != nil {
			t.Fatal(err)
		}
		gs := got.Snapshot()
		if gs.Status != billing.StatusActive || gs.DefaultMethod == nil || gs.DefaultMethod.Last4 != x.last4 ||
			len(gs.PendingLines) != 1 || gs.PendingLines[0].Description != "Proration "+x.last4 || gs.PendingLines[0].UnitAmount != -100 ||
			gs.Collection.Invoice != "in_"+x.last4 || gs.Collection.NextCharge == nil || !gs.Collection.NextCharge.Equal(t0.Add(time.Hour)) ||
			!gs.Updated.Equal(t0.Add(time.Hour)) || gs.Metadata["k"] != "v" || !gs.PeriodEnd.Equal(x.sub.Snapshot().PeriodEnd) {
			t.Fatalf("after SaveMany %+v", gs)
		}
		if due, ok := got.DueAt(); !ok || !due.Equal(t0.Add(time.Hour)) {
			t.Fatalf("due at %v %v after SaveMany, want the next charge", due, ok)
		}
	}
	if got, _ := h.Store.Subscription(ctx, b, other.ID()); got.Snapshot().DefaultMethod != nil {
		t.Fatalf("another scope's subscription changed: %+v", got.Snapshot())
	}
}

// lockManySubscriptions: LockMany reads what Lock reads, in scope and id order; one unknown,
// or of another scope, is missing from the answer.
func lockManySubscriptions(t *testing.T, h Harness) {
	a, b := h.NewScope(t), h.NewScope(t)
	s1 := newSubscription(t, h, a, "ada@example.com", monthly, t0)
	s2 := newSubscription(t, h, a, "bob@example.com", monthly, t0)
	other := newSubscription(t, h, b, "cy@example.com", monthly, t0)
	err := h.UoW.Do(ctx, func(ctx context.Context, tx billing.Tx) error {
		got, err := tx.Subscriptions().LockMany(ctx, []billing.SubscriptionRef{{Scope: a, ID: s2.ID()}, {Scope: a, ID: other.ID()},
			{Scope: a, ID: "sub_nope"}, {Scope: a, ID: s1.ID()}})
		if err != nil {
			return err
		}
		lo, hi := s1.ID(), s2.ID()
		if hi < lo {
			lo, hi = hi, lo
		}
		if len(got) != 2 || got[0].ID() != lo || got[1].ID() != hi {
			return fmt.Errorf("locked %v, want %s and %s of the scope, in id order", got, lo, hi)
		}
		for _, g := range got {
			one, err := tx.Subscriptions().Lock(ctx, a, g.ID())
			if err != nil {
				return err
			}
			if !reflect.DeepEqual(g.Snapshot(), one.Snapshot()) {
				return fmt.Errorf("lock many read %+v, Lock %+v", g.Snapshot(), one.Snapshot())
			}
		}
		if none, err := tx.Subscriptions().LockMany(ctx, nil); err != nil || len(none) != 0 {
			return fmt.Errorf("no refs: %v %w", none, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// deleteSetupsForInvoices: DeleteForInvoices deletes each subscription's pending setup made for
// the invoice its ref names, and no other (another invoice's, another scope's).
func deleteSetupsForInvoices(t *testing.T, h Harness) {
	a, b := h.NewScope(t), h.NewScope(t)
	s1 := newSubscription(t, h, a, "ada@example.com", monthly, t0)
	s2 := newSubscription(t, h, a, "bob@example.com", monthly, t0)
	s3 := newSubscription(t, h, a, "cy@example.com", monthly, t0)
	setup := func(sub *billing.Subscription, invoice string) billing.PendingSetup {
		return billing.PendingSetup{Scope: a, Subscription: sub.ID(), Invoice: invoice, ProcessorRef: "ref_" + sub.ID(), CustomerRef: "cus_p", Created: t0}
	}
	keep2, keep3 := setup(s2, "in_2"), setup(s3, "in_3")
	err := h.UoW.Do(ctx, func(ctx context.Context, tx billing.Tx) error {
		for _, p := range []billing.PendingSetup{setup(s1, "in_1"), keep2, keep3} {
			if err := tx.PendingSetups().Put(ctx, p); err != nil {
				return err
			}
		}
		if err := tx.PendingSetups().DeleteForInvoices(ctx, nil); err != nil {
			return err
		}
		return tx.PendingSetups().DeleteForInvoices(ctx, []billing.SetupRef{{Scope: a, Subscription: s1.ID(), Invoice: "in_1"},
			{Scope: a, Subscription: s2.ID(), Invoice: "in_other"}, {Scope: b, Subscription: s3.ID(), Invoice: "in_3"},
			{Scope: a, Subscription: "sub_nope", Invoice: "in_1"}})
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Store.PendingSetup(ctx, a, s1.ID()); !errors.Is(err, billing.ErrNoPendingSetup) {
		t.Fatalf("the setup for its invoice: %v", err)
	}
	for _, want := range []billing.PendingSetup{keep2, keep3} {
		if got, err := h.Store.PendingSetup(ctx, a, want.Subscription); err != nil || got != want {
			t.Fatalf("deleted for another invoice or scope: %+v %v", got, err)
		}
	}
}

func getManyMethods(t *testing.T, h Harness) {
	a, b := h.NewScope(t), h.NewScope(t)
	c, _ := findOrCreate(t, h, a, "Ada", "ada@example.com")
	cb, _ := findOrCreate(t, h, b, "Bob", "bob@example.com")
	m1 := saveMethod(t, h, a, c.ID(), "pm_ref_1", "1111", true)
	m2 := saveMethod(t, h, a, c.ID(), "pm_ref_2", "2222", false)
	mb := saveMethod(t, h, b, cb.ID(), "pm_ref_3", "3333", true)
	err := h.UoW.Do(ctx, func(ctx context.Context, tx billing.Tx) error {
		got, err := tx.PaymentMethods().GetMany(ctx, []billing.MethodRef{{Scope: a, ID: m2.ID()}, {Scope: a, ID: m1.ID()},
			{Scope: a, ID: mb.ID()}, {Scope: a, ID: "pm_nope"}})
		if err != nil {
			return err
		}
		last4 := map[string]string{}
		for _, m := range got {
			if m.Scope() != a {
				return fmt.Errorf("method %s of scope %v", m.ID(), m.Scope())
			}
			last4[m.ID()] = m.Snapshot().Last4
		}
		if len(got) != 2 || last4[m1.ID()] != "1111" || last4[m2.ID()] != "2222" {
			return fmt.Errorf("read %v, want %s and %s", last4, m1.ID(), m2.ID())
		}
		none, err := tx.PaymentMethods().GetMany(ctx, nil)
		if err != nil || len(none) != 0 {
			return fmt.Errorf("no refs: %v %w", none, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
