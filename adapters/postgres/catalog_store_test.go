package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/catalog"
	"github.com/kassa-pay/kassa/modules/catalog/catalogtest"
)

type catalogClocks struct{}

func (catalogClocks) Now(context.Context, core.Scope) (time.Time, error) {
	return time.Now().UTC().Truncate(time.Microsecond), nil
}

func catalogSetup(t *testing.T) (*sqlx.DB, *postgres.CatalogStore, *catalog.Service, core.Scope) {
	t.Helper()
	t.Parallel()
	db := pgtest.New(t)
	st := postgres.NewCatalogStore(db)
	svc, err := catalog.NewService(st, postgres.Bind(postgres.NewUnitOfWork(db), func(tx *postgres.Tx) catalog.Tx { return tx }), catalogClocks{})
	if err != nil {
		t.Fatal(err)
	}
	return db, st, svc, pgtest.Merchant(t, db)
}

// TestCatalogStoreContract runs the catalog's store suite on PostgreSQL; the module's fake
// passes the same suite (modules/catalog/store_contract_test.go).
func TestCatalogStoreContract(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	st := postgres.NewCatalogStore(db)
	catalogtest.RunStore(t, func(*testing.T) catalogtest.Harness {
		return catalogtest.Harness{Store: st, NewScope: func(t *testing.T) core.Scope { return pgtest.Merchant(t, db) }}
	})
}

func catalogMust[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func catalogPtr[T any](v T) *T { return &v }

func catalogIDs[T interface{ ID() string }](items []T) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.ID()
	}
	return out
}

func TestCatalogStoreCreateGetRoundTrip(t *testing.T) {
	_, st, svc, scope := catalogSetup(t)
	ctx := context.Background()
	p := catalogMust[*catalog.Product](t)(svc.CreateProduct(ctx, scope, catalog.ProductInput{
		Name: "Coffee", Description: catalogPtr("Beans"), TaxCode: catalogPtr("txcd_123"), UnitLabel: catalogPtr("bag"),
		StatementDescriptor: catalogPtr("KASSA COFFEE"), URL: catalogPtr("https://shop.example.com/coffee"),
		Images: []string{"https://cdn.example.com/c.png"}, Tags: []string{"food", "drink"},
		Shippable: catalogPtr(true), PackageDimensions: &catalog.Dimensions{Length: 10.5, Width: 5, Height: 3, Weight: 250},
		Metadata: map[string]string{"sku": "C-1"},
	}, &catalog.PriceInput{Currency: "eur", UnitAmount: 1299, Nickname: catalogPtr("std"), LookupKey: catalogPtr("coffee"),
		TaxBehavior: "inclusive", Recurring: &catalog.Recurring{Interval: "month", IntervalCount: 3, TrialPeriodDays: catalogPtr(14)},
		Metadata: map[string]string{"a": "b"}}))

	got := catalogMust[*catalog.Product](t)(st.GetProduct(ctx, scope, p.ID()))
	if !reflect.DeepEqual(got.Snapshot(), p.Snapshot()) {
		t.Fatalf("product round trip:\n got %+v\nwant %+v", got.Snapshot(), p.Snapshot())
	}
	if len(got.Prices()) != 1 || !reflect.DeepEqual(got.Prices()[0].Snapshot(), p.Prices()[0].Snapshot()) {
		t.Fatalf("price round trip:\n got %+v\nwant %+v", got.Prices()[0].Snapshot(), p.Prices()[0].Snapshot())
	}
	if got.DefaultPrice() != got.Prices()[0].ID() || got.Prices()[0].Currency() != "EUR" {
		t.Fatalf("default %q currency %q", got.DefaultPrice(), got.Prices()[0].Currency())
	}
	pr := catalogMust[*catalog.Price](t)(svc.FindPrice(ctx, scope, got.DefaultPrice()))
	if pr.Recurring().IntervalCount != 3 || *pr.Recurring().TrialPeriodDays != 14 || pr.Type() != catalog.TypeRecurring {
		t.Fatalf("recurring lost: %+v", pr.Recurring())
	}

	// Updates of every optional field, including unsetting.
	up := catalogMust[*catalog.Product](t)(svc.UpdateProduct(ctx, scope, p.ID(), catalog.ProductPatch{
		Description: catalogPtr(""), Tags: &[]string{}, ClearPackageDimensions: true, Shippable: catalogPtr(false),
		Metadata: map[string]string{"sku": "", "new": "1"},
	}))
	again := catalogMust[*catalog.Product](t)(st.GetProduct(ctx, scope, p.ID()))
	if !reflect.DeepEqual(again.Snapshot(), up.Snapshot()) || again.Description() != "" || again.PackageDimensions() != nil ||
		len(again.Tags()) != 0 || again.Metadata()["new"] != "1" || len(again.Metadata()) != 1 {
		t.Fatalf("update round trip:\n got %#v\nwant %#v", again.Snapshot(), up.Snapshot())
	}
}

func TestCatalogStoreListPaging(t *testing.T) {
	db, st, svc, scope := catalogSetup(t)
	ctx := context.Background()
	var made []string // oldest first
	for i := range 5 {
		p := catalogMust[*catalog.Product](t)(svc.CreateProduct(ctx, scope, catalog.ProductInput{Name: fmt.Sprint("p", i)},
			&catalog.PriceInput{Currency: "eur", UnitAmount: 300}))
		made = append(made, p.ID())
	}
	p0, p1, p2, p3, p4 := made[0], made[1], made[2], made[3], made[4]
	catalogMust[*catalog.Product](t)(svc.ArchiveProduct(ctx, scope, p2))
	otherMerchant := pgtest.Merchant(t, db)
	foreign := catalogMust[*catalog.Product](t)(svc.CreateProduct(ctx, otherMerchant, catalog.ProductInput{Name: "theirs"}, nil))

	yes, no := catalogPtr(true), catalogPtr(false)
	cases := []struct {
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
		{"all default limit", core.ListQuery{}, nil, []string{p4, p3, p2, p1, p0}, false},
		{"active only", core.ListQuery{}, yes, []string{p4, p3, p1, p0}, false},
		{"active after p3", core.ListQuery{Limit: 1, StartingAfter: p3}, yes, []string{p1}, true},
		{"active cursor on archived row", core.ListQuery{Limit: 1, StartingAfter: p2}, yes, []string{p1}, true},
		{"active before p0", core.ListQuery{Limit: 1, EndingBefore: p0}, yes, []string{p1}, true},
		{"archived only", core.ListQuery{}, no, []string{p2}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			page := catalogMust[core.Page[*catalog.Product]](t)(svc.ListProducts(ctx, scope, tc.q, tc.active))
			if got := catalogIDs(page.Items); !reflect.DeepEqual(got, tc.want) || page.HasMore != tc.hasMore {
				t.Fatalf("got %v has_more=%v, want %v has_more=%v", got, page.HasMore, tc.want, tc.hasMore)
			}
			for _, p := range page.Items {
				if len(p.Prices()) != 1 {
					t.Fatalf("%s listed without its prices", p.ID())
				}
			}
		})
	}

	// A cursor that is unknown, or a row of another merchant, is refused.
	for _, q := range []core.ListQuery{{StartingAfter: "prod_unknown"}, {StartingAfter: foreign.ID()}, {EndingBefore: foreign.ID()}} {
		q.Limit = 10
		if _, err := st.ListProducts(ctx, scope, q, nil); !errors.Is(err, catalog.ErrUnknownCursor) {
			t.Fatalf("cursor %+v: want catalog.ErrUnknownCursor, got %v", q, err)
		}
	}
	_, err := svc.ListProducts(ctx, scope, core.ListQuery{EndingBefore: "prod_unknown"}, nil)
	catalogCode(t, err, "ending_before_invalid")
	_, err = svc.ListProducts(ctx, scope, core.ListQuery{StartingAfter: foreign.ID()}, nil)
	catalogCode(t, err, "starting_after_invalid")
}

func TestCatalogStoreListPrices(t *testing.T) {
	_, _, svc, scope := catalogSetup(t)
	ctx := context.Background()
	p := catalogMust[*catalog.Product](t)(svc.CreateProduct(ctx, scope, catalog.ProductInput{Name: "x"}, &catalog.PriceInput{Currency: "eur", UnitAmount: 300}))
	q0 := p.DefaultPrice()
	q1 := catalogMust[*catalog.Price](t)(svc.CreatePrice(ctx, scope, p.ID(), catalog.PriceInput{Currency: "usd", UnitAmount: 400}, false)).ID()
	q2 := catalogMust[*catalog.Price](t)(svc.CreatePrice(ctx, scope, p.ID(), catalog.PriceInput{Currency: "jpy", UnitAmount: 500}, false)).ID()
	catalogMust[*catalog.Price](t)(svc.UpdatePrice(ctx, scope, p.ID(), q1, catalog.PricePatch{Active: catalogPtr(false)}))
	// A price of another product is not a valid cursor for this product's prices.
	other := catalogMust[*catalog.Product](t)(svc.CreateProduct(ctx, scope, catalog.ProductInput{Name: "y"}, &catalog.PriceInput{Currency: "eur", UnitAmount: 300}))

	cases := []struct {
		name    string
		q       core.ListQuery
		active  *bool
		want    []string
		hasMore bool
	}{
		{"all", core.ListQuery{}, nil, []string{q2, q1, q0}, false},
		{"page", core.ListQuery{Limit: 1, StartingAfter: q2}, nil, []string{q1}, true},
		{"before", core.ListQuery{Limit: 1, EndingBefore: q0}, nil, []string{q1}, true},
		{"active", core.ListQuery{}, catalogPtr(true), []string{q2, q0}, false},
		{"inactive", core.ListQuery{}, catalogPtr(false), []string{q1}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			page := catalogMust[core.Page[*catalog.Price]](t)(svc.ListPrices(ctx, scope, p.ID(), tc.q, tc.active))
			if got := catalogIDs(page.Items); !reflect.DeepEqual(got, tc.want) || page.HasMore != tc.hasMore {
				t.Fatalf("got %v has_more=%v, want %v has_more=%v", got, page.HasMore, tc.want, tc.hasMore)
			}
		})
	}
	_, err := svc.ListPrices(ctx, scope, p.ID(), core.ListQuery{StartingAfter: other.DefaultPrice()}, nil)
	catalogCode(t, err, "starting_after_invalid")
	_, err = svc.ListPrices(ctx, scope, "prod_unknown", core.ListQuery{}, nil)
	catalogCode(t, err, "product_not_found")
}

func catalogCode(t *testing.T, err error, code string) {
	t.Helper()
	var ce *core.Error
	if !errors.As(err, &ce) || ce.Code != code {
		t.Fatalf("want code %s, got %v", code, err)
	}
}

func TestCatalogStoreTenantIsolation(t *testing.T) {
	db, st, svc, scope := catalogSetup(t)
	ctx := context.Background()
	p := catalogMust[*catalog.Product](t)(svc.CreateProduct(ctx, scope, catalog.ProductInput{Name: "mine"}, &catalog.PriceInput{Currency: "eur", UnitAmount: 300}))
	priceID := p.DefaultPrice()
	otherMerchant := pgtest.Merchant(t, db)
	live := core.Scope{MerchantID: scope.MerchantID, Env: core.EnvLive}

	for name, sc := range map[string]core.Scope{"other merchant": otherMerchant, "other environment": live} {
		t.Run(name, func(t *testing.T) {
			if _, err := st.GetProduct(ctx, sc, p.ID()); !errors.Is(err, catalog.ErrNotFound) {
				t.Fatalf("GetProduct: %v", err)
			}
			if _, err := st.GetPrice(ctx, sc, priceID); !errors.Is(err, catalog.ErrNotFound) {
				t.Fatalf("GetPrice: %v", err)
			}
			called := false
			if _, err := st.UpdateProduct(ctx, sc, p.ID(), func(*catalog.Product) error { called = true; return nil }); !errors.Is(err, catalog.ErrNotFound) || called {
				t.Fatalf("UpdateProduct: %v called=%v", err, called)
			}
			if _, err := st.ListPrices(ctx, sc, p.ID(), core.ListQuery{Limit: 10}, nil); !errors.Is(err, catalog.ErrNotFound) {
				t.Fatalf("ListPrices: %v", err)
			}
			page := catalogMust[core.Page[*catalog.Product]](t)(st.ListProducts(ctx, sc, core.ListQuery{Limit: 10}, nil))
			if len(page.Items) != 0 {
				t.Fatalf("ListProducts leaked %v", catalogIDs(page.Items))
			}
			_, err := svc.GetProduct(ctx, sc, p.ID())
			catalogCode(t, err, "product_not_found")
			_, err = svc.ArchiveProduct(ctx, sc, p.ID())
			catalogCode(t, err, "product_not_found")
			_, err = svc.FindPrice(ctx, sc, priceID)
			catalogCode(t, err, "price_not_found")
			// Their own product cannot take my price as default.
			theirs := catalogMust[*catalog.Product](t)(svc.CreateProduct(ctx, sc, catalog.ProductInput{Name: "theirs"}, nil))
			_, err = svc.SetDefaultPrice(ctx, sc, theirs.ID(), priceID)
			catalogCode(t, err, "price_not_found")
		})
	}
	if got := catalogMust[*catalog.Product](t)(st.GetProduct(ctx, scope, p.ID())); !got.Active() {
		t.Fatal("other tenants changed my product")
	}
}

func TestCatalogStoreLookupKeyConcurrency(t *testing.T) {
	_, _, svc, scope := catalogSetup(t)
	ctx := context.Background()
	const n = 8
	products := make([]*catalog.Product, n)
	for i := range products {
		products[i] = catalogMust[*catalog.Product](t)(svc.CreateProduct(ctx, scope, catalog.ProductInput{Name: fmt.Sprint("p", i)}, nil))
	}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		winners []*catalog.Price
		errs    []error
	)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			pr, err := svc.CreatePrice(ctx, scope, products[i].ID(), catalog.PriceInput{Currency: "eur", UnitAmount: 500, LookupKey: catalogPtr("pro")}, true)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
			} else {
				winners = append(winners, pr)
			}
		}()
	}
	close(start)
	wg.Wait()
	if len(winners) != 1 || len(errs) != n-1 {
		t.Fatalf("want one winner, got %d winners and errors %v", len(winners), errs)
	}
	for _, err := range errs {
		if !errors.Is(err, catalog.ErrLookupKeyTaken) {
			t.Fatalf("want lookup_key_taken, got %v", err)
		}
		var ce *core.Error
		if errors.As(err, &ce); ce.Type != core.TypeResourceConflict || ce.Param != "lookup_key" {
			t.Fatalf("bad conflict error %+v", ce)
		}
	}
	// The losers' transactions left nothing behind: no price and no default link.
	for _, p := range products {
		got := catalogMust[*catalog.Product](t)(svc.GetProduct(ctx, scope, p.ID()))
		if got.ID() != winners[0].ProductID() && (len(got.Prices()) != 0 || got.DefaultPrice() != "") {
			t.Fatalf("loser %s kept a price or default: %+v", got.ID(), got.Snapshot())
		}
	}

	// An inactive price frees the key; re-activating the old one then conflicts.
	w := winners[0]
	catalogMust[*catalog.Price](t)(svc.UpdatePrice(ctx, scope, w.ProductID(), w.ID(), catalog.PricePatch{Active: catalogPtr(false)}))
	fresh := catalogMust[*catalog.Price](t)(svc.CreatePrice(ctx, scope, products[0].ID(), catalog.PriceInput{Currency: "eur", UnitAmount: 500, LookupKey: catalogPtr("pro")}, false))
	_, err := svc.UpdatePrice(ctx, scope, w.ProductID(), w.ID(), catalog.PricePatch{Active: catalogPtr(true)})
	catalogCode(t, err, "lookup_key_taken")
	// Moving a key onto another active price conflicts as well.
	other := catalogMust[*catalog.Price](t)(svc.CreatePrice(ctx, scope, products[1].ID(), catalog.PriceInput{Currency: "eur", UnitAmount: 500}, false))
	_, err = svc.UpdatePrice(ctx, scope, products[1].ID(), other.ID(), catalog.PricePatch{LookupKey: catalogPtr("pro")})
	catalogCode(t, err, "lookup_key_taken")
	// The same key in the live environment is a different namespace.
	live := core.Scope{MerchantID: scope.MerchantID, Env: core.EnvLive}
	catalogMust[*catalog.Product](t)(svc.CreateProduct(ctx, live, catalog.ProductInput{Name: "live"}, &catalog.PriceInput{Currency: "eur", UnitAmount: 500, LookupKey: catalogPtr("pro")}))
	_ = fresh
}

func TestCatalogStoreRollback(t *testing.T) {
	_, st, svc, scope := catalogSetup(t)
	ctx := context.Background()
	p := catalogMust[*catalog.Product](t)(svc.CreateProduct(ctx, scope, catalog.ProductInput{Name: "before"}, &catalog.PriceInput{Currency: "eur", UnitAmount: 300}))
	taken := catalogMust[*catalog.Product](t)(svc.CreateProduct(ctx, scope, catalog.ProductInput{Name: "holder"}, &catalog.PriceInput{Currency: "eur", UnitAmount: 300, LookupKey: catalogPtr("taken")}))
	_ = taken
	before := catalogMust[*catalog.Product](t)(st.GetProduct(ctx, scope, p.ID()))

	boom := errors.New("boom")
	cases := []struct {
		name string
		fn   func(p *catalog.Product) error
		want error
	}{
		{"closure fails after changes", func(p *catalog.Product) error {
			if err := p.Apply(catalog.ProductPatch{Name: catalogPtr("after")}, time.Now()); err != nil {
				return err
			}
			pr, err := catalog.NewPrice(scope, p.ID(), catalog.PriceInput{Currency: "eur", UnitAmount: 999}, "", time.Now())
			if err != nil {
				return err
			}
			if err := p.AddPrice(pr); err != nil {
				return err
			}
			p.Archive(time.Now())
			return boom
		}, boom},
		{"write fails after product change", func(p *catalog.Product) error {
			if err := p.Apply(catalog.ProductPatch{Name: catalogPtr("after")}, time.Now()); err != nil {
				return err
			}
			p.Archive(time.Now())
			pr := p.Price(p.DefaultPrice())
			return pr.Apply(catalog.PricePatch{LookupKey: catalogPtr("taken"), Active: catalogPtr(true)}, time.Now())
		}, catalog.ErrLookupKeyInUse},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := st.UpdateProduct(ctx, scope, p.ID(), tc.fn); !errors.Is(err, tc.want) {
				t.Fatalf("want %v, got %v", tc.want, err)
			}
			after := catalogMust[*catalog.Product](t)(st.GetProduct(ctx, scope, p.ID()))
			if !reflect.DeepEqual(after.Snapshot(), before.Snapshot()) || len(after.Prices()) != 1 ||
				!reflect.DeepEqual(after.Prices()[0].Snapshot(), before.Prices()[0].Snapshot()) {
				t.Fatalf("rollback left changes: %+v %+v", after.Snapshot(), after.Prices()[0].Snapshot())
			}
		})
	}
}

func TestCatalogStoreArchiveCascades(t *testing.T) {
	_, st, svc, scope := catalogSetup(t)
	ctx := context.Background()
	p := catalogMust[*catalog.Product](t)(svc.CreateProduct(ctx, scope, catalog.ProductInput{Name: "x"}, &catalog.PriceInput{Currency: "eur", UnitAmount: 300, LookupKey: catalogPtr("k")}))
	for i := range 3 {
		catalogMust[*catalog.Price](t)(svc.CreatePrice(ctx, scope, p.ID(), catalog.PriceInput{Currency: "eur", UnitAmount: int64(400 + i)}, false))
	}
	keep := catalogMust[*catalog.Product](t)(svc.CreateProduct(ctx, scope, catalog.ProductInput{Name: "untouched"}, &catalog.PriceInput{Currency: "eur", UnitAmount: 300}))
	for range 2 {
		catalogMust[*catalog.Product](t)(svc.ArchiveProduct(ctx, scope, p.ID()))
	}
	got := catalogMust[*catalog.Product](t)(st.GetProduct(ctx, scope, p.ID()))
	if got.Active() || len(got.Prices()) != 4 {
		t.Fatalf("product active=%v prices=%d", got.Active(), len(got.Prices()))
	}
	for _, pr := range got.Prices() {
		if pr.Active() {
			t.Fatalf("price %s still active", pr.ID())
		}
	}
	if got.DefaultPrice() == "" {
		t.Fatal("archive must keep default_price")
	}
	_, err := svc.CreatePrice(ctx, scope, p.ID(), catalog.PriceInput{Currency: "eur", UnitAmount: 300}, false)
	catalogCode(t, err, "product_inactive")
	// The archived price freed its lookup key.
	catalogMust[*catalog.Price](t)(svc.CreatePrice(ctx, scope, keep.ID(), catalog.PriceInput{Currency: "eur", UnitAmount: 300, LookupKey: catalogPtr("k")}, false))
	// Un-archiving the product leaves its prices archived.
	un := catalogMust[*catalog.Product](t)(svc.UpdateProduct(ctx, scope, p.ID(), catalog.ProductPatch{Active: catalogPtr(true)}))
	if !un.Active() || un.Prices()[0].Active() {
		t.Fatal("un-archive must not re-activate prices")
	}
	if k := catalogMust[*catalog.Product](t)(st.GetProduct(ctx, scope, keep.ID())); !k.Active() || !k.Prices()[0].Active() {
		t.Fatal("archive touched another product")
	}
}

// The catalog writes inside its unit of work: a keyed request's unit of work (the idempotency
// gate's) that fails after the use case leaves neither the product nor its price, and one that
// commits keeps both. A catalog write through a plain store would have committed on its own.
func TestCatalogWritesJoinTheEnclosingUnitOfWork(t *testing.T) {
	db, st, svc, scope := catalogSetup(t)
	outer := postgres.NewUnitOfWork(db)
	ctx := context.Background()
	boom := errors.New("the stored response failed")
	var id string
	err := outer.Do(ctx, func(ctx context.Context) error {
		p, err := svc.CreateProduct(ctx, scope, catalog.ProductInput{Name: "Rolled back"}, &catalog.PriceInput{Currency: "eur", UnitAmount: 500})
		if err != nil {
			return err
		}
		id = p.ID()
		return boom
	})
	if !errors.Is(err, boom) || id == "" {
		t.Fatalf("err = %v, id %q", err, id)
	}
	if _, err := st.GetProduct(ctx, scope, id); !errors.Is(err, catalog.ErrNotFound) {
		t.Fatalf("the product of a rolled-back unit of work: %v", err)
	}
	if err := outer.Do(ctx, func(ctx context.Context) error {
		p, err := svc.CreateProduct(ctx, scope, catalog.ProductInput{Name: "Kept"}, nil)
		id = p.ID()
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.GetProduct(ctx, scope, id); err != nil {
		t.Fatalf("the product of a committed unit of work: %v", err)
	}
}
