// Package billingtest is the behaviour every implementation of billing's repositories and
// store shows, written once and run on each: adapters/postgres runs it on a database, the
// module's tests on Fake. It imports testing and is imported by tests only.
package billingtest

import (
	"context"
	"errors"
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
