package catalog

import (
	"context"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

type fixedClocks struct{ t time.Time }

func (c fixedClocks) Now(context.Context, core.Scope) (time.Time, error) { return c.t, nil }

// memUoW is the unit of work over memStore: each of the store's writes is atomic on its own,
// and the catalog's use cases write once per unit of work.
type memUoW struct{ st *memStore }

func (u memUoW) Do(ctx context.Context, fn func(ctx context.Context, tx Tx) error) error {
	return fn(ports.WithinTransaction(ctx), u)
}

func (u memUoW) Catalog() Writer { return u.st }

func newTestService() (*Service, *memStore) {
	st := newMemStore()
	s, err := NewService(st, memUoW{st}, fixedClocks{testNow})
	if err != nil {
		panic(err)
	}
	return s, st
}

func TestServiceCreateProductWithPrice(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestService()
	p, err := s.CreateProduct(ctx, testScope, ProductInput{Name: "Plan"}, &PriceInput{Currency: "eur", UnitAmount: 990, Recurring: &Recurring{Interval: "month"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Prices()) != 1 || p.DefaultPrice() != p.Prices()[0].ID() || p.Prices()[0].Type() != TypeRecurring {
		t.Fatalf("inline price not linked: %+v", p.Snapshot())
	}
	got, err := s.GetProduct(ctx, testScope, p.ID())
	if err != nil || got.DefaultPrice() != p.DefaultPrice() || len(got.Prices()) != 1 {
		t.Fatalf("get: %v %+v", err, got)
	}

	cases := []struct {
		name        string
		price       PriceInput
		typ         core.ErrorType
		code, param string
	}{
		{"inline amount", PriceInput{Currency: "eur", UnitAmount: 10}, core.TypeAmountTooSmall, "amount_below_minimum", "price.unit_amount"},
		{"inline currency", PriceInput{Currency: "zzz", UnitAmount: 1000}, core.TypeCurrencyUnsupported, "currency_unsupported", "price.currency"},
		{"inline interval", PriceInput{Currency: "eur", UnitAmount: 1000, Recurring: &Recurring{Interval: "month", IntervalCount: 13}}, inv, "interval_count_invalid", "price.recurring.interval_count"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.CreateProduct(ctx, testScope, ProductInput{Name: "x"}, &tc.price)
			wantErr(t, err, tc.typ, tc.code, tc.param)
		})
	}
}

func TestServiceDefaultPriceRules(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestService()
	p, _ := s.CreateProduct(ctx, testScope, ProductInput{Name: "A"}, nil)
	other, _ := s.CreateProduct(ctx, testScope, ProductInput{Name: "B"}, nil)
	mine, err := s.CreatePrice(ctx, testScope, p.ID(), PriceInput{Currency: "eur", UnitAmount: 500}, false)
	if err != nil {
		t.Fatal(err)
	}
	off, _ := s.CreatePrice(ctx, testScope, p.ID(), PriceInput{Currency: "eur", UnitAmount: 600}, false)
	if _, err := s.UpdatePrice(ctx, testScope, p.ID(), off.ID(), PricePatch{Active: ptr(false)}); err != nil {
		t.Fatal(err)
	}
	foreign, _ := s.CreatePrice(ctx, testScope, other.ID(), PriceInput{Currency: "eur", UnitAmount: 700}, false)
	liveScope := core.Scope{MerchantID: testScope.MerchantID, Env: core.EnvLive}
	livePrd, _ := s.CreateProduct(ctx, liveScope, ProductInput{Name: "L"}, &PriceInput{Currency: "eur", UnitAmount: 700})

	cases := []struct {
		name, price string
		typ         core.ErrorType
		code        string
	}{
		{"own active", mine.ID(), "", ""},
		{"unknown", "price_unknown", core.TypeNotFound, "price_not_found"},
		{"other environment", livePrd.DefaultPrice(), core.TypeNotFound, "price_not_found"},
		{"other product", foreign.ID(), inv, "price_product_mismatch"},
		{"inactive", off.ID(), inv, "price_inactive"},
	}
	for _, tc := range cases {
		t.Run("set_default_price/"+tc.name, func(t *testing.T) {
			got, err := s.SetDefaultPrice(ctx, testScope, p.ID(), tc.price)
			wantErr(t, err, tc.typ, tc.code, "price")
			if err == nil && got.DefaultPrice() != tc.price {
				t.Fatalf("default %q", got.DefaultPrice())
			}
		})
		t.Run("update/"+tc.name, func(t *testing.T) {
			_, err := s.UpdateProduct(ctx, testScope, p.ID(), ProductPatch{DefaultPrice: ptr(tc.price)})
			wantErr(t, err, tc.typ, tc.code, "default_price")
		})
	}
	_, err = s.SetDefaultPrice(ctx, testScope, "prod_unknown", mine.ID())
	wantErr(t, err, core.TypeNotFound, "product_not_found", "id")

	// set_as_default switches the default in the same call.
	np, err := s.CreatePrice(ctx, testScope, p.ID(), PriceInput{Currency: "eur", UnitAmount: 800}, true)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetProduct(ctx, testScope, p.ID()); got.DefaultPrice() != np.ID() {
		t.Fatalf("set_as_default ignored: %q", got.DefaultPrice())
	}
	// Deactivating the default keeps the link.
	if _, err := s.UpdatePrice(ctx, testScope, p.ID(), np.ID(), PricePatch{Active: ptr(false)}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetProduct(ctx, testScope, p.ID()); got.DefaultPrice() != np.ID() {
		t.Fatal("deactivating the default price must keep default_price")
	}
}

func TestServiceArchiveAndPrices(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestService()
	p, _ := s.CreateProduct(ctx, testScope, ProductInput{Name: "A"}, &PriceInput{Currency: "eur", UnitAmount: 500})
	pr := p.Prices()[0]

	cases := []struct {
		name      string
		call      func() error
		typ       core.ErrorType
		code, prm string
	}{
		{"get unknown product", func() error { _, err := s.GetProduct(ctx, testScope, "prod_x"); return err }, core.TypeNotFound, "product_not_found", "id"},
		{"get other env", func() error {
			_, err := s.GetProduct(ctx, core.Scope{MerchantID: testScope.MerchantID, Env: core.EnvLive}, p.ID())
			return err
		}, core.TypeNotFound, "product_not_found", "id"},
		{"get other merchant", func() error {
			_, err := s.GetProduct(ctx, core.Scope{MerchantID: "mer_other", Env: core.EnvTest}, p.ID())
			return err
		}, core.TypeNotFound, "product_not_found", "id"},
		{"get price wrong product", func() error { _, err := s.GetPrice(ctx, testScope, p.ID(), "price_x"); return err }, core.TypeNotFound, "price_not_found", "price_id"},
		{"get price unknown product", func() error { _, err := s.GetPrice(ctx, testScope, "prod_x", pr.ID()); return err }, core.TypeNotFound, "product_not_found", "id"},
		{"find unknown price", func() error { _, err := s.FindPrice(ctx, testScope, "price_x"); return err }, core.TypeNotFound, "price_not_found", ""},
		{"update unknown price", func() error {
			_, err := s.UpdatePrice(ctx, testScope, p.ID(), "price_x", PricePatch{Nickname: ptr("n")})
			return err
		}, core.TypeNotFound, "price_not_found", "price_id"},
		{"update immutable", func() error {
			_, err := s.UpdatePrice(ctx, testScope, p.ID(), pr.ID(), PricePatch{Immutable: []string{"currency"}})
			return err
		}, inv, "parameter_immutable", "currency"},
		{"bad limit", func() error {
			_, err := s.ListPrices(ctx, testScope, p.ID(), core.ListQuery{Limit: 101}, nil)
			return err
		}, inv, "limit_invalid", "limit"},
		{"unknown cursor after", func() error {
			_, err := s.ListPrices(ctx, testScope, p.ID(), core.ListQuery{StartingAfter: "price_x"}, nil)
			return err
		}, inv, "starting_after_invalid", "starting_after"},
		{"unknown cursor before", func() error {
			_, err := s.ListPrices(ctx, testScope, p.ID(), core.ListQuery{EndingBefore: "price_x"}, nil)
			return err
		}, inv, "ending_before_invalid", "ending_before"},
		{"list prices unknown product", func() error { _, err := s.ListPrices(ctx, testScope, "prod_x", core.ListQuery{}, nil); return err }, core.TypeNotFound, "product_not_found", "id"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { wantErr(t, tc.call(), tc.typ, tc.code, tc.prm) })
	}

	for range 2 { // archiving twice is fine
		got, err := s.ArchiveProduct(ctx, testScope, p.ID())
		if err != nil {
			t.Fatal(err)
		}
		if got.Active() || got.Prices()[0].Active() {
			t.Fatal("archive must deactivate product and prices")
		}
	}
	_, err := s.CreatePrice(ctx, testScope, p.ID(), PriceInput{Currency: "eur", UnitAmount: 500}, false)
	wantErr(t, err, inv, "product_inactive", "")
	_, err = s.ArchiveProduct(ctx, testScope, "prod_x")
	wantErr(t, err, core.TypeNotFound, "product_not_found", "id")

	got, err := s.UpdateProduct(ctx, testScope, p.ID(), ProductPatch{Active: ptr(true)})
	if err != nil || !got.Active() || got.Prices()[0].Active() {
		t.Fatalf("un-archive must leave prices archived: %v", err)
	}
}

func TestServiceLookupKeyParamInline(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestService()
	if _, err := s.CreateProduct(ctx, testScope, ProductInput{Name: "A"}, &PriceInput{Currency: "eur", UnitAmount: 500, LookupKey: ptr("gold")}); err != nil {
		t.Fatal(err)
	}
	_, err := s.CreateProduct(ctx, testScope, ProductInput{Name: "B"}, &PriceInput{Currency: "eur", UnitAmount: 500, LookupKey: ptr("gold")})
	wantErr(t, err, core.TypeResourceConflict, "lookup_key_taken", "price.lookup_key")
}

func TestNewServiceRefusesNil(t *testing.T) {
	if _, err := NewService(nil, memUoW{}, fixedClocks{testNow}); err == nil {
		t.Fatal("a nil store must be refused")
	}
	if _, err := NewService(newMemStore(), memUoW{}, nil); err == nil {
		t.Fatal("nil clocks must be refused")
	}
}
