package conformance

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/kassa-pay/kassa/conformance/harness"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

func TestCatalogPrices(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "2.5", "a new price has the documented shape and tax_behavior unspecified by default", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		p := catProduct(t, m.Test, "W")
		pr := catCreatePrice(t, m.Test, p.Id, api.PriceCreate{Currency: "eur", UnitAmount: 1000, Nickname: ptr("Standard")})
		if !catPriceIDRE.MatchString(pr.Id) || pr.Object != wire.PriceObjectPrice || pr.Product != p.Id || !pr.Active {
			t.Fatalf("price = %+v", pr)
		}
		if pr.Type != wire.PriceTypeOneTime || pr.Recurring != nil || pr.TaxBehavior != wire.TaxBehaviorUnspecified || pr.LookupKey != nil || catDeref(pr.Nickname) != "Standard" {
			t.Fatalf("price = %+v", pr)
		}
		if got := catGetProduct(t, m.Test, p.Id); got.DefaultPrice != nil {
			t.Fatalf("a price without set_as_default became default_price %s", *got.DefaultPrice)
		}
	})

	harness.Rule(t, "D2", "currency is accepted in any case and returned upper-case", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		p := catProduct(t, m.Test, "W")
		for _, c := range []string{"eur", "EUR", "Usd", "jpY"} {
			pr := catCreatePrice(t, m.Test, p.Id, api.PriceCreate{Currency: c, UnitAmount: 1000})
			want := map[string]string{"eur": "EUR", "EUR": "EUR", "Usd": "USD", "jpY": "JPY"}[c]
			if pr.Currency != want {
				t.Fatalf("currency %q stored as %q, want %q", c, pr.Currency, want)
			}
		}
		inline := catCreateProduct(t, m.Test, api.ProductCreate{Name: "I", Price: &api.PriceCreateInline{Currency: "gBp", UnitAmount: 1000}})
		if inline.Prices[0].Currency != "GBP" {
			t.Fatalf("inline currency = %q", inline.Prices[0].Currency)
		}
	})

	harness.Rule(t, "2.5", "a recurring price keeps its interval, count, trial and usage type", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		p := catProduct(t, m.Test, "W")
		pr := catCreatePrice(t, m.Test, p.Id, api.PriceCreate{Currency: "eur", UnitAmount: 5000, TaxBehavior: ptr(wire.TaxBehaviorInclusive),
			Recurring: &api.RecurringParams{Interval: wire.RecurringIntervalMonth, IntervalCount: ptr(3), TrialPeriodDays: ptr(14), UsageType: ptr(wire.UsageTypeMetered)}})
		rc := pr.Recurring
		if pr.Type != wire.PriceTypeRecurring || rc == nil || rc.Interval != wire.RecurringIntervalMonth || rc.IntervalCount != 3 ||
			rc.TrialPeriodDays == nil || *rc.TrialPeriodDays != 14 || rc.UsageType != wire.UsageTypeMetered || pr.TaxBehavior != wire.TaxBehaviorInclusive {
			t.Fatalf("price = %+v recurring %+v", pr, rc)
		}
		resp, err := m.Test.RetrievePriceWithResponse(catCtx, p.Id, pr.Id)
		if err != nil {
			t.Fatal(err)
		}
		if resp.JSON200 == nil || resp.JSON200.Recurring == nil {
			t.Fatalf("retrieve: %d %s", resp.StatusCode(), resp.Body)
		}
		if got := resp.JSON200.Recurring; got.Interval != rc.Interval || got.IntervalCount != 3 || got.TrialPeriodDays == nil ||
			*got.TrialPeriodDays != 14 || got.UsageType != wire.UsageTypeMetered {
			t.Fatalf("retrieved recurring = %s", resp.Body)
		}
	})

	harness.Rule(t, "4.3", "set_as_default true makes the new price the product's default", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		p := catCreateProduct(t, m.Test, api.ProductCreate{Name: "W", Price: &api.PriceCreateInline{Currency: "eur", UnitAmount: 1000}})
		pr := catCreatePrice(t, m.Test, p.Id, api.PriceCreate{Currency: "eur", UnitAmount: 2000, SetAsDefault: ptr(true)})
		if got := catGetProduct(t, m.Test, p.Id); catDeref(got.DefaultPrice) != pr.Id {
			t.Fatalf("default_price = %v, want %s", got.DefaultPrice, pr.Id)
		}
		catCreatePrice(t, m.Test, p.Id, api.PriceCreate{Currency: "eur", UnitAmount: 3000, SetAsDefault: ptr(false)})
		if got := catGetProduct(t, m.Test, p.Id); catDeref(got.DefaultPrice) != pr.Id {
			t.Fatalf("set_as_default false changed default_price to %v", got.DefaultPrice)
		}
	})

	harness.Rule(t, "3.5", "a price cannot be added to an archived product", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		p := catProduct(t, m.Test, "W")
		if resp, err := m.Test.ArchiveProductWithResponse(catCtx, p.Id); err != nil || resp.JSON200 == nil {
			t.Fatalf("archive: %v", err)
		}
		r := catPost(t, m.TestKey, "/v1/products/"+p.Id+"/prices", catPriceBody())
		catWantErr(t, r, http.StatusBadRequest, "invalid_request", "product_inactive", "")
		if got := catGetProduct(t, m.Test, p.Id); len(got.Prices) != 0 {
			t.Fatalf("archived product got a price: %v", catPriceIDs(got.Prices))
		}
	})

	harness.Rule(t, "D13", "GET one price; a price of another product is 404 price_not_found", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		a := catCreateProduct(t, m.Test, api.ProductCreate{Name: "A", Price: &api.PriceCreateInline{Currency: "eur", UnitAmount: 1000}})
		b := catProduct(t, m.Test, "B")
		resp, err := m.Test.RetrievePriceWithResponse(catCtx, a.Id, a.Prices[0].Id)
		if err != nil {
			t.Fatal(err)
		}
		if resp.JSON200 == nil || resp.JSON200.Id != a.Prices[0].Id || resp.JSON200.UnitAmount != 1000 {
			t.Fatalf("retrieve: %d %s", resp.StatusCode(), resp.Body)
		}
		resp, err = m.Test.RetrievePriceWithResponse(catCtx, b.Id, a.Prices[0].Id)
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, resp, resp.HTTPResponse, resp.Body, http.StatusNotFound, "not_found", "price_not_found", "price_id")
		r := catPost(t, m.TestKey, "/v1/products/"+b.Id+"/prices/"+a.Prices[0].Id, map[string]any{"nickname": "x"})
		catWantErr(t, r, http.StatusNotFound, "not_found", "price_not_found", "price_id")
		r = catGet(t, m.TestKey, "/v1/products/"+a.Id+"/prices/price_000000000000000000000000", nil)
		catWantErr(t, r, http.StatusNotFound, "not_found", "price_not_found", "price_id")
	})

	harness.Rule(t, "D13", "update changes the mutable fields of a price", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		p := catProduct(t, m.Test, "W")
		pr := catCreatePrice(t, m.Test, p.Id, api.PriceCreate{Currency: "eur", UnitAmount: 1000, Metadata: &api.Metadata{"a": "1", "b": "2"}})
		u := catUpdatePrice(t, m.Test, p.Id, pr.Id, api.PriceUpdate{Active: ptr(false), Nickname: ptr("Old"),
			TaxBehavior: ptr(wire.TaxBehaviorExclusive), LookupKey: ptr("std_eur"), Metadata: &api.Metadata{"a": "", "c": "3"}})
		resp, err := m.Test.RetrievePriceWithResponse(catCtx, p.Id, pr.Id)
		if err != nil || resp.JSON200 == nil {
			t.Fatalf("retrieve: %v", err)
		}
		for _, x := range []api.Price{u, *resp.JSON200} {
			if x.Active || catDeref(x.Nickname) != "Old" || x.TaxBehavior != wire.TaxBehaviorExclusive || catDeref(x.LookupKey) != "std_eur" ||
				len(x.Metadata) != 2 || x.Metadata["b"] != "2" || x.Metadata["c"] != "3" {
				t.Fatalf("price after update = %+v", x)
			}
			if x.UnitAmount != 1000 || x.Currency != "EUR" {
				t.Fatalf("immutable fields changed: %+v", x)
			}
		}
		u = catUpdatePrice(t, m.Test, p.Id, pr.Id, api.PriceUpdate{Active: ptr(true), Nickname: ptr(""), LookupKey: ptr("")})
		if !u.Active || u.Nickname != nil || u.LookupKey != nil || u.TaxBehavior != wire.TaxBehaviorExclusive {
			t.Fatalf("price after unset = %+v", u)
		}
	})

	harness.Rule(t, "D13", "unit_amount, currency, recurring or type in an update is 400 parameter_immutable", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		p := catCreateProduct(t, m.Test, api.ProductCreate{Name: "W", Price: &api.PriceCreateInline{Currency: "eur", UnitAmount: 1000}})
		path := "/v1/products/" + p.Id + "/prices/" + p.Prices[0].Id
		for field, v := range map[string]any{"unit_amount": 2000, "currency": "usd", "recurring": map[string]any{"interval": "month"}, "type": "recurring"} {
			r := catPost(t, m.TestKey, path, map[string]any{field: v, "nickname": "x"})
			catWantErr(t, r, http.StatusBadRequest, "invalid_request", "parameter_immutable", field)
		}
		resp, err := m.Test.RetrievePriceWithResponse(catCtx, p.Id, p.Prices[0].Id)
		if err != nil || resp.JSON200 == nil {
			t.Fatalf("retrieve: %v", err)
		}
		if resp.JSON200.Nickname != nil || resp.JSON200.UnitAmount != 1000 {
			t.Fatalf("a refused update changed the price: %s", resp.Body)
		}
	})

	harness.Rule(t, "D13", "lookup_key is unique among active prices and free again once its holder is inactive", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		a := catProduct(t, m.Test, "A")
		b := catProduct(t, m.Test, "B")
		holder := catCreatePrice(t, m.Test, a.Id, api.PriceCreate{Currency: "eur", UnitAmount: 1000, LookupKey: ptr("pro_monthly")})
		// Taken by an active price of another product of the same merchant.
		r := catPost(t, m.TestKey, "/v1/products/"+b.Id+"/prices", catPriceBody("lookup_key", "pro_monthly"))
		catWantErr(t, r, http.StatusConflict, "resource_conflict", "lookup_key_taken", "lookup_key")
		other := catCreatePrice(t, m.Test, b.Id, catEUR(1000))
		r = catPost(t, m.TestKey, "/v1/products/"+b.Id+"/prices/"+other.Id, map[string]any{"lookup_key": "pro_monthly"})
		catWantErr(t, r, http.StatusConflict, "resource_conflict", "lookup_key_taken", "lookup_key")
		// Another merchant may use the same key.
		n := newMerchant(t, true)
		catCreatePrice(t, n.Test, catProduct(t, n.Test, "N").Id, api.PriceCreate{Currency: "eur", UnitAmount: 1000, LookupKey: ptr("pro_monthly")})
		// The other environment of the same merchant may use it too.
		catCreatePrice(t, m.Live, catProduct(t, m.Live, "L").Id, api.PriceCreate{Currency: "eur", UnitAmount: 1000, LookupKey: ptr("pro_monthly")})
		// Free once the holder is inactive.
		catUpdatePrice(t, m.Test, a.Id, holder.Id, api.PriceUpdate{Active: ptr(false)})
		next := catCreatePrice(t, m.Test, b.Id, api.PriceCreate{Currency: "eur", UnitAmount: 1200, LookupKey: ptr("pro_monthly")})
		if catDeref(next.LookupKey) != "pro_monthly" {
			t.Fatalf("lookup_key = %v", next.LookupKey)
		}
		// Re-activating the old holder would make two active prices share it.
		r = catPost(t, m.TestKey, "/v1/products/"+a.Id+"/prices/"+holder.Id, map[string]any{"active": true})
		catWantErr(t, r, http.StatusConflict, "resource_conflict", "lookup_key_taken", "lookup_key")
	})

	harness.Rule(t, "D13", "the price list pages newest first and filters on active", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		p := catProduct(t, m.Test, "W")
		var ids []string // newest first
		for i := range 5 {
			ids = append([]string{catCreatePrice(t, m.Test, p.Id, catEUR(int64(1000+i))).Id}, ids...)
		}
		r := catGet(t, m.TestKey, "/v1/products/"+p.Id+"/prices", url.Values{"limit": {"2"}})
		p1 := catDecode[api.PriceList](t, r)
		if p1.Object != wire.ListObjectList || p1.Url != "/v1/products/"+p.Id+"/prices" {
			t.Fatalf("envelope object %q url %q", p1.Object, p1.Url)
		}
		catSameIDs(t, "page 1", catPriceIDs(p1.Data), ids[0:2])
		p2 := catListPrices(t, m.Test, p.Id, api.ListPricesParams{Limit: ptr(2), StartingAfter: ptr(ids[1])})
		catSameIDs(t, "page 2", catPriceIDs(p2.Data), ids[2:4])
		p3 := catListPrices(t, m.Test, p.Id, api.ListPricesParams{Limit: ptr(2), StartingAfter: ptr(ids[3])})
		catSameIDs(t, "page 3", catPriceIDs(p3.Data), ids[4:5])
		if !p1.HasMore || !p2.HasMore || p3.HasMore {
			t.Fatalf("has_more = %v %v %v, want true true false", p1.HasMore, p2.HasMore, p3.HasMore)
		}
		back := catListPrices(t, m.Test, p.Id, api.ListPricesParams{Limit: ptr(2), EndingBefore: ptr(ids[2])})
		catSameIDs(t, "ending_before", catPriceIDs(back.Data), ids[0:2])
		catUpdatePrice(t, m.Test, p.Id, ids[1], api.PriceUpdate{Active: ptr(false)})
		catSameIDs(t, "active=false", catPriceIDs(catListPrices(t, m.Test, p.Id, api.ListPricesParams{Active: ptr(false)}).Data), ids[1:2])
		catSameIDs(t, "active=true", catPriceIDs(catListPrices(t, m.Test, p.Id, api.ListPricesParams{Active: ptr(true)}).Data),
			[]string{ids[0], ids[2], ids[3], ids[4]})
		for _, v := range []string{"0", "101"} {
			r := catGet(t, m.TestKey, "/v1/products/"+p.Id+"/prices", url.Values{"limit": {v}})
			catWantErr(t, r, http.StatusBadRequest, "invalid_request", "limit_invalid", "limit")
		}
		// A cursor that is no price of this product.
		q := catProduct(t, m.Test, "Q")
		foreign := catCreatePrice(t, m.Test, q.Id, catEUR(1000))
		r = catGet(t, m.TestKey, "/v1/products/"+p.Id+"/prices", url.Values{"starting_after": {foreign.Id}})
		catWantErr(t, r, http.StatusBadRequest, "invalid_request", "starting_after_invalid", "starting_after")
		r = catGet(t, m.TestKey, "/v1/products/"+p.Id+"/prices", url.Values{"ending_before": {"price_000000000000000000000000"}})
		catWantErr(t, r, http.StatusBadRequest, "invalid_request", "ending_before_invalid", "ending_before")
	})
}

func TestCatalogDefaultPrice(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "4.3", "default_price can be set to an active price of the product", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		p := catCreateProduct(t, m.Test, api.ProductCreate{Name: "W", Price: &api.PriceCreateInline{Currency: "eur", UnitAmount: 1000}})
		pr := catCreatePrice(t, m.Test, p.Id, catEUR(2000))
		resp, err := m.Test.SetDefaultPriceWithResponse(catCtx, p.Id, nil, api.DefaultPriceSet{Price: pr.Id})
		if err != nil {
			t.Fatal(err)
		}
		if resp.JSON200 == nil || catDeref(resp.JSON200.DefaultPrice) != pr.Id {
			t.Fatalf("set default: %d %s", resp.StatusCode(), resp.Body)
		}
		u := catUpdateProduct(t, m.Test, p.Id, api.ProductUpdate{DefaultPrice: ptr(p.Prices[0].Id)})
		if catDeref(u.DefaultPrice) != p.Prices[0].Id {
			t.Fatalf("default_price via update = %v", u.DefaultPrice)
		}
		u = catUpdateProduct(t, m.Test, p.Id, api.ProductUpdate{DefaultPrice: ptr("")})
		if u.DefaultPrice != nil {
			t.Fatalf("default_price \"\" did not unset: %v", *u.DefaultPrice)
		}
	})

	harness.Rule(t, "4.3", "a price of another product is 400 price_product_mismatch", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		p := catProduct(t, m.Test, "W")
		q := catCreateProduct(t, m.Test, api.ProductCreate{Name: "Q", Price: &api.PriceCreateInline{Currency: "eur", UnitAmount: 1000}})
		r := catPost(t, m.TestKey, "/v1/products/"+p.Id+"/default_price", map[string]any{"price": q.Prices[0].Id})
		catWantErr(t, r, http.StatusBadRequest, "invalid_request", "price_product_mismatch", "price")
		r = catPost(t, m.TestKey, "/v1/products/"+p.Id, map[string]any{"default_price": q.Prices[0].Id})
		catWantErr(t, r, http.StatusBadRequest, "invalid_request", "price_product_mismatch", "default_price")
	})

	harness.Rule(t, "4.3", "an inactive price is 400 price_inactive", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		p := catProduct(t, m.Test, "W")
		pr := catCreatePrice(t, m.Test, p.Id, catEUR(1000))
		catUpdatePrice(t, m.Test, p.Id, pr.Id, api.PriceUpdate{Active: ptr(false)})
		r := catPost(t, m.TestKey, "/v1/products/"+p.Id+"/default_price", map[string]any{"price": pr.Id})
		catWantErr(t, r, http.StatusBadRequest, "invalid_request", "price_inactive", "price")
		r = catPost(t, m.TestKey, "/v1/products/"+p.Id+"/prices", catPriceBody("set_as_default", true))
		if r.Status != http.StatusOK {
			t.Fatalf("a new active price with set_as_default: %d %s", r.Status, r.Body)
		}
	})

	harness.Rule(t, "4.3", "an unknown price is 404 price_not_found with param price", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		p := catProduct(t, m.Test, "W")
		r := catPost(t, m.TestKey, "/v1/products/"+p.Id+"/default_price", map[string]any{"price": "price_000000000000000000000000"})
		catWantErr(t, r, http.StatusNotFound, "not_found", "price_not_found", "price")
	})

	harness.Rule(t, "4.3", "a missing price field is 400 parameter_missing", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		p := catProduct(t, m.Test, "W")
		r := catPost(t, m.TestKey, "/v1/products/"+p.Id+"/default_price", map[string]any{})
		catWantErr(t, r, http.StatusBadRequest, "invalid_request", "parameter_missing", "price")
	})
}

func TestCatalogIsolation(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "ISO", "another merchant gets 404 for a product, its prices and their updates", func(t *testing.T) {
		t.Parallel()
		a, b := newMerchant(t, true), newMerchant(t, true)
		p := catCreateProduct(t, a.Test, api.ProductCreate{Name: "A's", Price: &api.PriceCreateInline{Currency: "eur", UnitAmount: 1000}})
		price := p.Prices[0].Id
		base := "/v1/products/" + p.Id
		for name, r := range map[string]Raw{
			"retrieve":      catGet(t, b.TestKey, base, nil),
			"update":        catPost(t, b.TestKey, base, map[string]any{"name": "stolen"}),
			"delete":        raw(t, http.MethodDelete, base, b.TestKey, "", nil),
			"list prices":   catGet(t, b.TestKey, base+"/prices", nil),
			"create price":  catPost(t, b.TestKey, base+"/prices", catPriceBody()),
			"default_price": catPost(t, b.TestKey, base+"/default_price", map[string]any{"price": price}),
			"get price":     catGet(t, b.TestKey, base+"/prices/"+price, nil),
			"update price":  catPost(t, b.TestKey, base+"/prices/"+price, map[string]any{"active": false}),
		} {
			t.Run(name, func(t *testing.T) {
				catWantErr(t, r, http.StatusNotFound, "not_found", "product_not_found", "id")
			})
		}
		// A's price named under B's own product is unknown to B, not a mismatch.
		own := catProduct(t, b.Test, "B's")
		r := catPost(t, b.TestKey, "/v1/products/"+own.Id+"/default_price", map[string]any{"price": price})
		catWantErr(t, r, http.StatusNotFound, "not_found", "price_not_found", "price")
		r = catGet(t, b.TestKey, "/v1/products/"+own.Id+"/prices/"+price, nil)
		catWantErr(t, r, http.StatusNotFound, "not_found", "price_not_found", "price_id")
		// Nothing changed for A.
		got := catGetProduct(t, a.Test, p.Id)
		if got.Name != "A's" || !got.Active || !got.Prices[0].Active {
			t.Fatalf("A's product changed: %+v", got)
		}
	})

	harness.Rule(t, "ISO", "the live key gets 404 for the merchant's test product", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		p := catCreateProduct(t, m.Test, api.ProductCreate{Name: "Test only", Price: &api.PriceCreateInline{Currency: "eur", UnitAmount: 1000}})
		r := catGet(t, m.LiveKey, "/v1/products/"+p.Id, nil)
		catWantErr(t, r, http.StatusNotFound, "not_found", "product_not_found", "id")
		r = catGet(t, m.LiveKey, "/v1/products/"+p.Id+"/prices/"+p.Prices[0].Id, nil)
		catWantErr(t, r, http.StatusNotFound, "not_found", "product_not_found", "id")
		r = catPost(t, m.LiveKey, "/v1/products/"+p.Id+"/prices", catPriceBody())
		catWantErr(t, r, http.StatusNotFound, "not_found", "product_not_found", "id")
		live := catProduct(t, m.Live, "Live")
		r = catPost(t, m.LiveKey, "/v1/products/"+live.Id+"/default_price", map[string]any{"price": p.Prices[0].Id})
		catWantErr(t, r, http.StatusNotFound, "not_found", "price_not_found", "price")
	})

	harness.Rule(t, "ISO", "lists never show another merchant's or environment's products", func(t *testing.T) {
		t.Parallel()
		a, b := newMerchant(t, true), newMerchant(t, true)
		test := catProduct(t, a.Test, "A test")
		live := catProduct(t, a.Live, "A live")
		other := catProduct(t, b.Test, "B test")
		catSameIDs(t, "A test", catProductIDs(catListProducts(t, a.Test, api.ListProductsParams{Limit: ptr(100)}).Data), []string{test.Id})
		catSameIDs(t, "A live", catProductIDs(catListProducts(t, a.Live, api.ListProductsParams{Limit: ptr(100)}).Data), []string{live.Id})
		catSameIDs(t, "B test", catProductIDs(catListProducts(t, b.Test, api.ListProductsParams{Limit: ptr(100)}).Data), []string{other.Id})
		catSameIDs(t, "B live", catProductIDs(catListProducts(t, b.Live, api.ListProductsParams{Limit: ptr(100)}).Data), nil)
		// The other environment's product is no cursor either.
		r := catGet(t, a.LiveKey, "/v1/products", url.Values{"starting_after": {test.Id}})
		catWantErr(t, r, http.StatusBadRequest, "invalid_request", "starting_after_invalid", "starting_after")
	})
}
