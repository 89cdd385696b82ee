// Package catalogtest is the behaviour every catalog.Store shows, written once and run against
// each implementation (river's driver-suite habit): adapters/postgres runs it on a database,
// the module's tests on their in-memory fake, so the fake cannot drift from what production
// does. It imports testing and is imported by tests only.
package catalogtest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/catalog"
)

// Harness is one store under test and a way to get scopes it accepts.
type Harness struct {
	Store catalog.Store
	// NewScope returns the test scope of a merchant no other test uses (Postgres: a fresh
	// merchant row).
	NewScope func(t *testing.T) core.Scope
}

// RunStore runs the suite; newHarness is called once per case, which runs in parallel with
// the others.
func RunStore(t *testing.T, newHarness func(t *testing.T) Harness) {
	cases := []struct {
		name string
		run  func(t *testing.T, h Harness)
	}{
		{"round trip", roundTrip},
		{"other scopes see nothing", otherScopes},
		{"update writes what changed", updateWritesChanges},
		{"failed update writes nothing", updateRollsBack},
		{"lookup keys", lookupKeys},
		{"list products", listProducts},
		{"list prices", listPrices},
		{"concurrent updates", concurrentUpdates},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, newHarness(t))
		})
	}
}

// now is a time every store keeps exactly (microseconds, UTC).
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

func ptr[T any](v T) *T { return &v }

// must(f())(t) is f's value, failing t on f's error.
func must[T any](v T, err error) func(t *testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func product(t *testing.T, scope core.Scope, name string, prices ...catalog.PriceInput) *catalog.Product {
	t.Helper()
	p := must(catalog.NewProduct(scope, catalog.ProductInput{Name: name}, now()))(t)
	for i := len(prices) - 1; i >= 0; i-- { // the first input is the newest price
		if err := p.AddPrice(price(t, p, prices[i])); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

func price(t *testing.T, p *catalog.Product, in catalog.PriceInput) *catalog.Price {
	t.Helper()
	return must(catalog.NewPrice(p.Scope(), p.ID(), in, "", now()))(t)
}

func eur(amount int64) catalog.PriceInput {
	return catalog.PriceInput{Currency: "eur", UnitAmount: amount}
}

func keyed(key string) catalog.PriceInput {
	return catalog.PriceInput{Currency: "eur", UnitAmount: 500, LookupKey: ptr(key)}
}

func ids[T interface{ ID() string }](items []T) []string {
	out := []string{}
	for _, it := range items {
		out = append(out, it.ID())
	}
	return out
}

// sameProduct checks that got is want as stored: its own fields and its prices, newest first.
func sameProduct(t *testing.T, got, want *catalog.Product) {
	t.Helper()
	if !reflect.DeepEqual(got.Snapshot(), want.Snapshot()) {
		t.Fatalf("product:\n got %+v\nwant %+v", got.Snapshot(), want.Snapshot())
	}
	if !slices.Equal(ids(got.Prices()), ids(want.Prices())) {
		t.Fatalf("prices %v, want %v", ids(got.Prices()), ids(want.Prices()))
	}
	for i, pr := range got.Prices() {
		if w := want.Prices()[i]; !reflect.DeepEqual(pr.Snapshot(), w.Snapshot()) {
			t.Fatalf("price:\n got %+v\nwant %+v", pr.Snapshot(), w.Snapshot())
		}
	}
}

func create(t *testing.T, h Harness, p *catalog.Product) *catalog.Product {
	t.Helper()
	if err := h.Store.CreateProduct(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	return p
}

func roundTrip(t *testing.T, h Harness) {
	ctx := context.Background()
	scope := h.NewScope(t)
	p := must(catalog.NewProduct(scope, catalog.ProductInput{
		Name: "Coffee", Description: ptr("Beans"), TaxCode: ptr("txcd_123"), UnitLabel: ptr("bag"),
		StatementDescriptor: ptr("KASSA COFFEE"), URL: ptr("https://shop.example.com/coffee"),
		Images: []string{"https://cdn.example.com/c.png"}, Tags: []string{"food", "drink"},
		Shippable: ptr(true), PackageDimensions: &catalog.Dimensions{Length: 10.5, Width: 5, Height: 3, Weight: 250.25},
		Metadata: map[string]string{"sku": "C-1"},
	}, now()))(t)
	rec := price(t, p, catalog.PriceInput{Currency: "eur", UnitAmount: 1299, Nickname: ptr("std"), LookupKey: ptr("coffee"),
		TaxBehavior: catalog.TaxInclusive, Metadata: map[string]string{"a": "b"},
		Recurring: &catalog.Recurring{Interval: catalog.IntervalMonth, IntervalCount: 3, TrialPeriodDays: ptr(14)}})
	one := price(t, p, eur(300))
	for _, pr := range []*catalog.Price{rec, one} {
		if err := p.AddPrice(pr); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.SetDefaultPrice(rec.ID(), "price", now()); err != nil {
		t.Fatal(err)
	}
	create(t, h, p)
	got := must(h.Store.GetProduct(ctx, scope, p.ID()))(t)
	sameProduct(t, got, p)
	if len(got.Changes().Added)+len(got.Changes().Changed) != 0 || got.Changes().Product {
		t.Fatal("a product read from the store has changes")
	}
	for _, pr := range p.Prices() {
		if g := must(h.Store.GetPrice(ctx, scope, pr.ID()))(t); !reflect.DeepEqual(g.Snapshot(), pr.Snapshot()) {
			t.Fatalf("GetPrice:\n got %+v\nwant %+v", g.Snapshot(), pr.Snapshot())
		}
	}
	// A product without prices, and an archived one with an inactive price.
	bare := create(t, h, must(catalog.NewProduct(scope, catalog.ProductInput{Name: "bare", Active: ptr(false)}, now()))(t))
	sameProduct(t, must(h.Store.GetProduct(ctx, scope, bare.ID()))(t), bare)
}

func otherScopes(t *testing.T, h Harness) {
	ctx := context.Background()
	scope := h.NewScope(t)
	p := create(t, h, product(t, scope, "mine", eur(300)))
	priceID := p.Prices()[0].ID()
	for name, sc := range map[string]core.Scope{
		"other merchant":    h.NewScope(t),
		"other environment": {MerchantID: scope.MerchantID, Env: core.EnvLive},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := h.Store.GetProduct(ctx, sc, p.ID()); !errors.Is(err, catalog.ErrNotFound) {
				t.Fatalf("GetProduct: %v", err)
			}
			if _, err := h.Store.GetPrice(ctx, sc, priceID); !errors.Is(err, catalog.ErrNotFound) {
				t.Fatalf("GetPrice: %v", err)
			}
			called := false
			if _, err := h.Store.UpdateProduct(ctx, sc, p.ID(), func(*catalog.Product) error { called = true; return nil }); !errors.Is(err, catalog.ErrNotFound) || called {
				t.Fatalf("UpdateProduct: %v called=%v", err, called)
			}
			if _, err := h.Store.ListPrices(ctx, sc, p.ID(), core.ListQuery{Limit: 10}, nil); !errors.Is(err, catalog.ErrNotFound) {
				t.Fatalf("ListPrices: %v", err)
			}
			if page := must(h.Store.ListProducts(ctx, sc, core.ListQuery{Limit: 10}, nil))(t); len(page.Items) != 0 {
				t.Fatalf("ListProducts leaked %v", ids(page.Items))
			}
			if _, err := h.Store.ListProducts(ctx, sc, core.ListQuery{Limit: 10, StartingAfter: p.ID()}, nil); !errors.Is(err, catalog.ErrUnknownCursor) {
				t.Fatalf("a product of another scope as cursor: %v", err)
			}
		})
	}
	for _, id := range []string{"prod_unknown", ""} {
		if _, err := h.Store.GetProduct(ctx, scope, id); !errors.Is(err, catalog.ErrNotFound) {
			t.Fatalf("GetProduct(%q): %v", id, err)
		}
	}
}

func updateWritesChanges(t *testing.T, h Harness) {
	ctx := context.Background()
	scope := h.NewScope(t)
	p := create(t, h, product(t, scope, "before", eur(300), eur(400)))
	older, newer := p.Prices()[1], p.Prices()[0]
	var added *catalog.Price
	out := must(h.Store.UpdateProduct(ctx, scope, p.ID(), func(p *catalog.Product) error {
		if err := p.Apply(catalog.ProductPatch{Name: ptr("after"), Metadata: map[string]string{"k": "v"}}, now()); err != nil {
			return err
		}
		if err := p.Price(older.ID()).Apply(catalog.PricePatch{Nickname: ptr("old"), Active: ptr(false)}, now()); err != nil {
			return err
		}
		added = price(t, p, keyed("new"))
		if err := p.AddPrice(added); err != nil {
			return err
		}
		return p.SetDefaultPrice(added.ID(), "price", now())
	}))(t)
	got := must(h.Store.GetProduct(ctx, scope, p.ID()))(t)
	sameProduct(t, got, out)
	if got.Name() != "after" || got.DefaultPrice() != added.ID() || !slices.Equal(ids(got.Prices()), []string{added.ID(), newer.ID(), older.ID()}) {
		t.Fatalf("update lost: %+v %v", got.Snapshot(), ids(got.Prices()))
	}
	if o := got.Price(older.ID()); o.Active() || o.Nickname() != "old" {
		t.Fatalf("price change lost: %+v", o.Snapshot())
	}
	if !reflect.DeepEqual(got.Price(newer.ID()).Snapshot(), newer.Snapshot()) {
		t.Fatal("an unchanged price changed")
	}
	// A closure that changes nothing leaves the stored product as it was.
	same := must(h.Store.UpdateProduct(ctx, scope, p.ID(), func(*catalog.Product) error { return nil }))(t)
	sameProduct(t, same, got)
	sameProduct(t, must(h.Store.GetProduct(ctx, scope, p.ID()))(t), got)
}

func updateRollsBack(t *testing.T, h Harness) {
	ctx := context.Background()
	scope := h.NewScope(t)
	p := create(t, h, product(t, scope, "before", eur(300)))
	create(t, h, product(t, scope, "holder", keyed("taken")))
	boom := errors.New("boom")
	for _, c := range []struct {
		name string
		fn   func(p *catalog.Product) error
		want error
	}{
		{"closure fails after changes", func(p *catalog.Product) error {
			if err := p.Apply(catalog.ProductPatch{Name: ptr("after")}, now()); err != nil {
				return err
			}
			if err := p.AddPrice(price(t, p, eur(999))); err != nil {
				return err
			}
			p.Archive(now())
			return boom
		}, boom},
		{"a write fails after other writes", func(p *catalog.Product) error {
			if err := p.Apply(catalog.ProductPatch{Name: ptr("after")}, now()); err != nil {
				return err
			}
			if err := p.AddPrice(price(t, p, eur(999))); err != nil {
				return err
			}
			return p.AddPrice(price(t, p, keyed("taken")))
		}, catalog.ErrLookupKeyInUse},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := h.Store.UpdateProduct(ctx, scope, p.ID(), c.fn); !errors.Is(err, c.want) {
				t.Fatalf("want %v, got %v", c.want, err)
			}
			sameProduct(t, must(h.Store.GetProduct(ctx, scope, p.ID()))(t), p)
		})
	}
}

func lookupKeys(t *testing.T, h Harness) {
	ctx := context.Background()
	scope := h.NewScope(t)
	holder := create(t, h, product(t, scope, "holder", keyed("pro")))
	// Creating a product whose price takes a held key writes nothing.
	loser := product(t, scope, "loser", keyed("pro"))
	if err := h.Store.CreateProduct(ctx, loser); !errors.Is(err, catalog.ErrLookupKeyInUse) {
		t.Fatalf("create with a held key: %v", err)
	}
	if _, err := h.Store.GetProduct(ctx, scope, loser.ID()); !errors.Is(err, catalog.ErrNotFound) {
		t.Fatalf("the refused product was written: %v", err)
	}
	// Another scope has keys of its own.
	create(t, h, product(t, core.Scope{MerchantID: scope.MerchantID, Env: core.EnvLive}, "live", keyed("pro")))
	create(t, h, product(t, h.NewScope(t), "theirs", keyed("pro")))
	// Moving the key onto another active price is refused.
	other := create(t, h, product(t, scope, "other", eur(300)))
	_, err := h.Store.UpdateProduct(ctx, scope, other.ID(), func(p *catalog.Product) error {
		return p.Prices()[0].Apply(catalog.PricePatch{LookupKey: ptr("pro")}, now())
	})
	if !errors.Is(err, catalog.ErrLookupKeyInUse) {
		t.Fatalf("moving a held key: %v", err)
	}
	// An inactive price frees its key; re-activating it then is refused.
	held := holder.Prices()[0].ID()
	must(h.Store.UpdateProduct(ctx, scope, holder.ID(), func(p *catalog.Product) error {
		return p.Price(held).Apply(catalog.PricePatch{Active: ptr(false)}, now())
	}))(t)
	must(h.Store.UpdateProduct(ctx, scope, other.ID(), func(p *catalog.Product) error {
		return p.AddPrice(price(t, p, keyed("pro")))
	}))(t)
	_, err = h.Store.UpdateProduct(ctx, scope, holder.ID(), func(p *catalog.Product) error {
		return p.Price(held).Apply(catalog.PricePatch{Active: ptr(true)}, now())
	})
	if !errors.Is(err, catalog.ErrLookupKeyInUse) {
		t.Fatalf("re-activating over a new holder: %v", err)
	}
	// Archiving frees every key of the product at once, in the same write that reuses one.
	must(h.Store.UpdateProduct(ctx, scope, other.ID(), func(p *catalog.Product) error {
		p.Archive(now())
		return nil
	}))(t)
	create(t, h, product(t, scope, "after archive", keyed("pro")))
}

func listProducts(t *testing.T, h Harness) {
	ctx := context.Background()
	scope := h.NewScope(t)
	var made []string // oldest first
	for i := range 5 {
		made = append(made, create(t, h, product(t, scope, fmt.Sprint("p", i), eur(300))).ID())
	}
	p0, p1, p2, p3, p4 := made[0], made[1], made[2], made[3], made[4]
	must(h.Store.UpdateProduct(ctx, scope, p2, func(p *catalog.Product) error { p.Archive(now()); return nil }))(t)
	create(t, h, product(t, h.NewScope(t), "theirs"))
	yes, no := ptr(true), ptr(false)
	for _, c := range []struct {
		name    string
		q       core.ListQuery
		active  *bool
		want    []string
		hasMore bool
	}{
		{"first page", core.ListQuery{Limit: 2}, nil, []string{p4, p3}, true},
		{"after p3", core.ListQuery{Limit: 2, StartingAfter: p3}, nil, []string{p2, p1}, true},
		{"after p1", core.ListQuery{Limit: 2, StartingAfter: p1}, nil, []string{p0}, false},
		{"after p0", core.ListQuery{Limit: 2, StartingAfter: p0}, nil, []string{}, false},
		{"before p0", core.ListQuery{Limit: 2, EndingBefore: p0}, nil, []string{p2, p1}, true},
		{"before p2", core.ListQuery{Limit: 2, EndingBefore: p2}, nil, []string{p4, p3}, false},
		{"before p4", core.ListQuery{Limit: 2, EndingBefore: p4}, nil, []string{}, false},
		{"all", core.ListQuery{Limit: 10}, nil, []string{p4, p3, p2, p1, p0}, false},
		{"active only", core.ListQuery{Limit: 10}, yes, []string{p4, p3, p1, p0}, false},
		{"active after p3", core.ListQuery{Limit: 1, StartingAfter: p3}, yes, []string{p1}, true},
		{"active, cursor on an archived row", core.ListQuery{Limit: 1, StartingAfter: p2}, yes, []string{p1}, true},
		{"active before p0", core.ListQuery{Limit: 1, EndingBefore: p0}, yes, []string{p1}, true},
		{"archived only", core.ListQuery{Limit: 10}, no, []string{p2}, false},
	} {
		page := must(h.Store.ListProducts(ctx, scope, c.q, c.active))(t)
		if got := ids(page.Items); !slices.Equal(got, c.want) || page.HasMore != c.hasMore {
			t.Fatalf("%s: got %v has_more=%v, want %v has_more=%v", c.name, got, page.HasMore, c.want, c.hasMore)
		}
		for _, p := range page.Items {
			if len(p.Prices()) != 1 {
				t.Fatalf("%s: %s listed without its price", c.name, p.ID())
			}
		}
	}
	for _, q := range []core.ListQuery{{Limit: 10, StartingAfter: "prod_unknown"}, {Limit: 10, EndingBefore: "prod_unknown"}} {
		if _, err := h.Store.ListProducts(ctx, scope, q, nil); !errors.Is(err, catalog.ErrUnknownCursor) {
			t.Fatalf("cursor %+v: %v", q, err)
		}
	}
}

func listPrices(t *testing.T, h Harness) {
	ctx := context.Background()
	scope := h.NewScope(t)
	p := create(t, h, product(t, scope, "x", eur(500), eur(400), eur(300))) // q2, q1, q0
	q2, q1, q0 := p.Prices()[0].ID(), p.Prices()[1].ID(), p.Prices()[2].ID()
	must(h.Store.UpdateProduct(ctx, scope, p.ID(), func(p *catalog.Product) error {
		return p.Price(q1).Apply(catalog.PricePatch{Active: ptr(false)}, now())
	}))(t)
	other := create(t, h, product(t, scope, "y", eur(300)))
	for _, c := range []struct {
		name    string
		q       core.ListQuery
		active  *bool
		want    []string
		hasMore bool
	}{
		{"all", core.ListQuery{Limit: 10}, nil, []string{q2, q1, q0}, false},
		{"page", core.ListQuery{Limit: 1, StartingAfter: q2}, nil, []string{q1}, true},
		{"before", core.ListQuery{Limit: 1, EndingBefore: q0}, nil, []string{q1}, true},
		{"active", core.ListQuery{Limit: 10}, ptr(true), []string{q2, q0}, false},
		{"inactive", core.ListQuery{Limit: 10}, ptr(false), []string{q1}, false},
	} {
		page := must(h.Store.ListPrices(ctx, scope, p.ID(), c.q, c.active))(t)
		if got := ids(page.Items); !slices.Equal(got, c.want) || page.HasMore != c.hasMore {
			t.Fatalf("%s: got %v has_more=%v, want %v has_more=%v", c.name, got, page.HasMore, c.want, c.hasMore)
		}
	}
	if _, err := h.Store.ListPrices(ctx, scope, p.ID(), core.ListQuery{Limit: 10, StartingAfter: other.Prices()[0].ID()}, nil); !errors.Is(err, catalog.ErrUnknownCursor) {
		t.Fatalf("a price of another product as cursor: %v", err)
	}
	if _, err := h.Store.ListPrices(ctx, scope, "prod_unknown", core.ListQuery{Limit: 10}, nil); !errors.Is(err, catalog.ErrNotFound) {
		t.Fatalf("prices of an unknown product: %v", err)
	}
}

// concurrentUpdates: updates of one product serialize (none is lost), and of concurrent
// writers of one lookup key exactly one wins.
func concurrentUpdates(t *testing.T, h Harness) {
	ctx := context.Background()
	scope := h.NewScope(t)
	p := create(t, h, product(t, scope, "busy"))
	const n = 6
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	start := make(chan struct{})
	for i := range n {
		added := price(t, p, eur(int64(300+i)))
		racer := product(t, scope, fmt.Sprint("racer", i), keyed("race"))
		wg.Add(2)
		go func() {
			defer wg.Done()
			<-start
			_, err := h.Store.UpdateProduct(ctx, scope, p.ID(), func(p *catalog.Product) error {
				return p.AddPrice(catalog.RehydratePrice(added.Snapshot()))
			})
			errs <- err
		}()
		go func() {
			defer wg.Done()
			<-start
			errs <- h.Store.CreateProduct(ctx, racer)
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	taken := 0
	for err := range errs {
		switch {
		case errors.Is(err, catalog.ErrLookupKeyInUse):
			taken++
		case err != nil:
			t.Fatal(err)
		}
	}
	if taken != n-1 {
		t.Fatalf("%d of %d racers for one lookup key lost, want %d", taken, n, n-1)
	}
	if got := must(h.Store.GetProduct(ctx, scope, p.ID()))(t); len(got.Prices()) != n {
		t.Fatalf("%d prices after %d concurrent additions", len(got.Prices()), n)
	}
}
