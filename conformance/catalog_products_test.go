package conformance

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/kassa-pay/kassa/conformance/harness"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

func TestCatalogProducts(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "2.4", "a minimal product has the documented shape", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		r := catPost(t, m.TestKey, "/v1/products", map[string]any{"name": "Basic plan"})
		p := catDecode[api.Product](t, r)
		if !catProductIDRE.MatchString(p.Id) {
			t.Fatalf("id %q is not prod_ + 24 base62", p.Id)
		}
		if p.Object != "product" || p.Name != "Basic plan" || !p.Active {
			t.Fatalf("object/name/active = %q/%q/%v", p.Object, p.Name, p.Active)
		}
		var doc map[string]json.RawMessage
		if err := json.Unmarshal(r.Body, &doc); err != nil {
			t.Fatal(err)
		}
		for field, want := range map[string]string{"default_price": "null", "prices": "[]", "metadata": "{}", "tags": "[]", "images": "[]"} {
			if got := compactJSON(t, doc[field]); got != want {
				t.Errorf("%s = %s, want %s", field, got, want)
			}
		}
	})

	harness.Rule(t, "4.3", "create with an inline price creates the default price in one call", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		p := catCreateProduct(t, m.Test, api.ProductCreate{Name: "Mug", Price: &api.PriceCreateInline{Currency: "eur", UnitAmount: 1200}})
		if len(p.Prices) != 1 {
			t.Fatalf("prices = %d, want 1", len(p.Prices))
		}
		pr := p.Prices[0]
		if !catPriceIDRE.MatchString(pr.Id) || p.DefaultPrice == nil || *p.DefaultPrice != pr.Id {
			t.Fatalf("default_price = %v, price id %q", p.DefaultPrice, pr.Id)
		}
		if pr.Currency != "EUR" || pr.UnitAmount != 1200 || pr.Type != wire.PriceTypeOneTime || pr.Recurring != nil || pr.Product != p.Id || !pr.Active {
			t.Fatalf("price = %+v", pr)
		}
	})

	harness.Rule(t, "4.3", "create with a recurring inline price gives type recurring with defaults", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		p := catCreateProduct(t, m.Test, api.ProductCreate{Name: "Pro plan", Price: &api.PriceCreateInline{
			Currency: "eur", UnitAmount: 1900, Recurring: &api.RecurringParams{Interval: wire.RecurringIntervalMonth}}})
		if len(p.Prices) != 1 || p.DefaultPrice == nil || *p.DefaultPrice != p.Prices[0].Id {
			t.Fatalf("prices/default = %+v / %v", p.Prices, p.DefaultPrice)
		}
		pr := p.Prices[0]
		if pr.Type != wire.PriceTypeRecurring || pr.Recurring == nil {
			t.Fatalf("type = %q, recurring = %+v", pr.Type, pr.Recurring)
		}
		rc := pr.Recurring
		if rc.Interval != wire.RecurringIntervalMonth || rc.IntervalCount != 1 || rc.UsageType != wire.UsageTypeLicensed || rc.TrialPeriodDays != nil {
			t.Fatalf("recurring = %+v", *rc)
		}
	})

	harness.Rule(t, "4.3", "a failing inline price leaves no product behind", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		// Rejected while checking the request.
		r := catPost(t, m.TestKey, "/v1/products", map[string]any{"name": "Cheap", "price": map[string]any{"currency": "eur", "unit_amount": 249}})
		catWantErr(t, r, http.StatusBadRequest, "amount_too_small", "amount_below_minimum", "price.unit_amount")
		if !strings.Contains(string(r.Body), "at least 250 minor units, 2.50 EUR") {
			t.Fatalf("the message does not say the minimum's unit: %s", r.Body)
		}
		if l := catListProducts(t, m.Test, api.ListProductsParams{}); len(l.Data) != 0 {
			t.Fatalf("list after a rejected create has %d products", len(l.Data))
		}
		// Rejected while writing: the inline price's lookup_key is taken, so the product
		// written in the same transaction must be rolled back too.
		first := catCreateProduct(t, m.Test, api.ProductCreate{Name: "Holder", Price: &api.PriceCreateInline{Currency: "eur", UnitAmount: 500, LookupKey: ptr("std")}})
		r = catPost(t, m.TestKey, "/v1/products", map[string]any{"name": "Second", "price": map[string]any{"currency": "eur", "unit_amount": 600, "lookup_key": "std"}})
		catWantErr(t, r, http.StatusConflict, "resource_conflict", "lookup_key_taken", "price.lookup_key")
		l := catListProducts(t, m.Test, api.ListProductsParams{})
		catSameIDs(t, "products", catProductIDs(l.Data), []string{first.Id})
	})

	harness.Rule(t, "4.3", "retrieve returns the product with all its prices, newest first", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		p := catCreateProduct(t, m.Test, api.ProductCreate{Name: "Box", Price: &api.PriceCreateInline{Currency: "eur", UnitAmount: 1000}})
		second := catCreatePrice(t, m.Test, p.Id, catEUR(2000))
		third := catCreatePrice(t, m.Test, p.Id, api.PriceCreate{Currency: "usd", UnitAmount: 3000})
		catUpdatePrice(t, m.Test, p.Id, second.Id, api.PriceUpdate{Active: ptr(false)})
		got := catGetProduct(t, m.Test, p.Id)
		catSameIDs(t, "prices", catPriceIDs(got.Prices), []string{third.Id, second.Id, p.Prices[0].Id})
		if got.Prices[1].Active {
			t.Fatal("the inactive price is shown active")
		}
		if got.Prices[0].Currency != "USD" || got.Prices[0].UnitAmount != 3000 {
			t.Fatalf("newest price = %+v", got.Prices[0])
		}
	})

	harness.Rule(t, "D3", "an unknown product id is 404 product_not_found", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		resp, err := m.Test.RetrieveProductWithResponse(catCtx, "prod_000000000000000000000000")
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, resp, resp.HTTPResponse, resp.Body, http.StatusNotFound, "not_found", "product_not_found", "id")
		for _, r := range []Raw{
			catPost(t, m.TestKey, "/v1/products/prod_000000000000000000000000", map[string]any{"name": "x"}),
			raw(t, http.MethodDelete, "/v1/products/prod_000000000000000000000000", m.TestKey, "", nil),
			catGet(t, m.TestKey, "/v1/products/prod_000000000000000000000000/prices", nil),
			catPost(t, m.TestKey, "/v1/products/prod_000000000000000000000000/prices", catPriceBody()),
		} {
			catWantErr(t, r, http.StatusNotFound, "not_found", "product_not_found", "id")
		}
	})

	harness.Rule(t, "4.3", "update changes every mutable field", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		p := catProduct(t, m.Test, "Old name")
		u := catUpdateProduct(t, m.Test, p.Id, api.ProductUpdate{
			Name: ptr("New name"), Description: ptr("A long description."), TaxCode: ptr("txcd_10000000"),
			UnitLabel: ptr("seat"), StatementDescriptor: ptr("KASSA WIDGET"), Url: ptr("https://example.com/widget"),
			Images: &[]string{"https://example.com/a.png", "https://example.com/b.png"}, Tags: &[]string{"plans", "b2b"},
			Shippable: ptr(true), PackageDimensions: &api.PackageDimensions{Length: 10, Width: 20, Height: 30.5, Weight: 400},
			Metadata: &api.Metadata{"sku": "W-1"},
		})
		got := catGetProduct(t, m.Test, p.Id)
		for _, x := range []api.Product{u, got} {
			if x.Name != "New name" || catDeref(x.Description) != "A long description." || catDeref(x.TaxCode) != "txcd_10000000" ||
				catDeref(x.UnitLabel) != "seat" || catDeref(x.StatementDescriptor) != "KASSA WIDGET" || catDeref(x.Url) != "https://example.com/widget" {
				t.Fatalf("strings not updated: %+v", x)
			}
			if strings.Join(x.Images, ",") != "https://example.com/a.png,https://example.com/b.png" || strings.Join(x.Tags, ",") != "plans,b2b" {
				t.Fatalf("images/tags = %v / %v", x.Images, x.Tags)
			}
			if x.Shippable == nil || !*x.Shippable || x.PackageDimensions == nil || *x.PackageDimensions != (api.PackageDimensions{Length: 10, Width: 20, Height: 30.5, Weight: 400}) {
				t.Fatalf("shippable/package_dimensions = %v / %+v", x.Shippable, x.PackageDimensions)
			}
			if x.Metadata["sku"] != "W-1" || len(x.Metadata) != 1 {
				t.Fatalf("metadata = %v", x.Metadata)
			}
		}
		// Absent fields keep their value.
		u = catUpdateProduct(t, m.Test, p.Id, api.ProductUpdate{Shippable: ptr(false)})
		if u.Name != "New name" || catDeref(u.Description) != "A long description." || len(u.Images) != 2 || u.Shippable == nil || *u.Shippable {
			t.Fatalf("after a one-field update: %+v", u)
		}
	})

	harness.Rule(t, "2.4", "package_dimensions keep double precision (no float32 rounding)", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		// 12.345678901 and 0.1 are not float32 values: a float32 on the way rounds them.
		dims := map[string]any{"length": 12.345678901, "width": 0.1, "height": 1e-7, "weight": 123456.789012}
		r := catPost(t, m.TestKey, "/v1/products", catProductBody("package_dimensions", dims))
		if r.Status != http.StatusOK {
			t.Fatalf("create product: %d %s", r.Status, r.Body)
		}
		var created struct {
			ID   string             `json:"id"`
			Dims map[string]float64 `json:"package_dimensions"`
		}
		if err := json.Unmarshal(r.Body, &created); err != nil {
			t.Fatal(err)
		}
		read := catGet(t, m.TestKey, "/v1/products/"+created.ID, nil)
		var got struct {
			Dims map[string]float64 `json:"package_dimensions"`
		}
		if err := json.Unmarshal(read.Body, &got); err != nil {
			t.Fatal(err)
		}
		for _, x := range []map[string]float64{created.Dims, got.Dims} {
			for k, v := range dims {
				if x[k] != v.(float64) {
					t.Fatalf("package_dimensions.%s = %v, sent %v (all: %v)", k, x[k], v, x)
				}
			}
		}
	})

	harness.Rule(t, "4.3", "an empty string unsets an optional string field", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		p := catCreateProduct(t, m.Test, api.ProductCreate{Name: "W", Description: ptr("d"), TaxCode: ptr("txcd_1"),
			UnitLabel: ptr("seat"), StatementDescriptor: ptr("KASSA"), Url: ptr("https://example.com")})
		u := catUpdateProduct(t, m.Test, p.Id, api.ProductUpdate{Description: ptr(""), TaxCode: ptr(""), UnitLabel: ptr(""),
			StatementDescriptor: ptr(""), Url: ptr("")})
		for _, x := range []api.Product{u, catGetProduct(t, m.Test, p.Id)} {
			if x.Description != nil || x.TaxCode != nil || x.UnitLabel != nil || x.StatementDescriptor != nil || x.Url != nil {
				t.Fatalf("fields not unset: %+v", x)
			}
		}
	})

	harness.Rule(t, "4.3", "metadata merges per key and an empty value deletes the key", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		p := catCreateProduct(t, m.Test, api.ProductCreate{Name: "W", Metadata: &api.Metadata{"a": "1", "b": "2"}})
		u := catUpdateProduct(t, m.Test, p.Id, api.ProductUpdate{Metadata: &api.Metadata{"b": "", "c": "3", "a": "one"}})
		want := map[string]string{"a": "one", "c": "3"}
		for _, x := range []api.Product{u, catGetProduct(t, m.Test, p.Id)} {
			if len(x.Metadata) != len(want) || x.Metadata["a"] != "one" || x.Metadata["c"] != "3" {
				t.Fatalf("metadata = %v, want %v", x.Metadata, want)
			}
		}
	})

	harness.Rule(t, "4.3", "images and tags replace the whole list", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		p := catCreateProduct(t, m.Test, api.ProductCreate{Name: "W", Images: &[]string{"https://example.com/1.png", "https://example.com/2.png"}, Tags: &[]string{"x", "y"}})
		u := catUpdateProduct(t, m.Test, p.Id, api.ProductUpdate{Images: &[]string{"https://example.com/3.png"}, Tags: &[]string{"z"}})
		if strings.Join(u.Images, ",") != "https://example.com/3.png" || strings.Join(u.Tags, ",") != "z" {
			t.Fatalf("images/tags = %v / %v", u.Images, u.Tags)
		}
		u = catUpdateProduct(t, m.Test, p.Id, api.ProductUpdate{Images: &[]string{}, Tags: &[]string{}})
		if len(u.Images) != 0 || len(u.Tags) != 0 {
			t.Fatalf("empty lists did not clear: %v / %v", u.Images, u.Tags)
		}
	})

	harness.Rule(t, "3.5", "DELETE archives the product and all its prices and is repeatable", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		p := catCreateProduct(t, m.Test, api.ProductCreate{Name: "W", Price: &api.PriceCreateInline{Currency: "eur", UnitAmount: 1000}})
		catCreatePrice(t, m.Test, p.Id, api.PriceCreate{Currency: "eur", UnitAmount: 900, Recurring: &api.RecurringParams{Interval: wire.RecurringIntervalYear}})
		var first api.Product
		for i := range 2 {
			resp, err := m.Test.ArchiveProductWithResponse(catCtx, p.Id)
			if err != nil {
				t.Fatal(err)
			}
			if resp.JSON200 == nil {
				t.Fatalf("delete #%d: %d %s", i+1, resp.StatusCode(), resp.Body)
			}
			for _, x := range []api.Product{*resp.JSON200, catGetProduct(t, m.Test, p.Id)} {
				if x.Active || len(x.Prices) != 2 || x.Prices[0].Active || x.Prices[1].Active {
					t.Fatalf("delete #%d: product active %v, prices %+v", i+1, x.Active, x.Prices)
				}
			}
			if i == 0 {
				first = *resp.JSON200
			} else if resp.JSON200.Updated != first.Updated {
				t.Fatalf("archiving an archived product changed updated: %d → %d", first.Updated, resp.JSON200.Updated)
			}
		}
		if l := catListPrices(t, m.Test, p.Id, api.ListPricesParams{Active: ptr(true)}); len(l.Data) != 0 {
			t.Fatalf("active prices after archive: %v", catPriceIDs(l.Data))
		}
	})

	harness.Rule(t, "3.5", "active true restores the product but not its prices", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		p := catCreateProduct(t, m.Test, api.ProductCreate{Name: "W", Price: &api.PriceCreateInline{Currency: "eur", UnitAmount: 1000}})
		if resp, err := m.Test.ArchiveProductWithResponse(catCtx, p.Id); err != nil || resp.JSON200 == nil {
			t.Fatalf("archive: %v", err)
		}
		u := catUpdateProduct(t, m.Test, p.Id, api.ProductUpdate{Active: ptr(true)})
		if !u.Active || len(u.Prices) != 1 || u.Prices[0].Active {
			t.Fatalf("after unarchive: active %v, prices %+v", u.Active, u.Prices)
		}
		// The restored product takes new prices again.
		catCreatePrice(t, m.Test, p.Id, catEUR(1500))
	})
}

func TestCatalogProductList(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "D8", "the product list is the newest-first list envelope with a default limit of 10", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		var ids []string
		for i := range 11 {
			ids = append([]string{catProduct(t, m.Test, "P"+string(rune('a'+i))).Id}, ids...)
		}
		r := catGet(t, m.TestKey, "/v1/products", nil)
		var env map[string]json.RawMessage
		if err := json.Unmarshal(r.Body, &env); err != nil {
			t.Fatal(err)
		}
		if string(env["object"]) != `"list"` || string(env["url"]) != `"/v1/products"` || string(env["has_more"]) != "true" {
			t.Fatalf("envelope = object %s url %s has_more %s", env["object"], env["url"], env["has_more"])
		}
		l := catDecode[api.ProductList](t, r)
		catSameIDs(t, "default page", catProductIDs(l.Data), ids[:10])
		l = catListProducts(t, m.Test, api.ListProductsParams{Limit: ptr(100)})
		if l.HasMore {
			t.Fatal("has_more with limit 100 and 11 products")
		}
		catSameIDs(t, "limit 100", catProductIDs(l.Data), ids)
		l = catListProducts(t, m.Test, api.ListProductsParams{Limit: ptr(1)})
		if !l.HasMore {
			t.Fatal("has_more false with limit 1")
		}
		catSameIDs(t, "limit 1", catProductIDs(l.Data), ids[:1])
	})

	harness.Rule(t, "D8", "limit 0 and 101 are 400 limit_invalid", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		for _, v := range []string{"0", "101"} {
			r := catGet(t, m.TestKey, "/v1/products", url.Values{"limit": {v}})
			catWantErr(t, r, http.StatusBadRequest, "invalid_request", "limit_invalid", "limit")
		}
		r := catGet(t, m.TestKey, "/v1/products", url.Values{"active": {"maybe"}})
		catWantErr(t, r, http.StatusBadRequest, "invalid_request", "active_invalid", "active")
	})

	harness.Rule(t, "D8", "starting_after and ending_before page through three pages", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		var ids []string // newest first
		for i := range 5 {
			ids = append([]string{catProduct(t, m.Test, "P"+string(rune('a'+i))).Id}, ids...)
		}
		two := ptr(2)
		p1 := catListProducts(t, m.Test, api.ListProductsParams{Limit: two})
		catSameIDs(t, "page 1", catProductIDs(p1.Data), ids[0:2])
		p2 := catListProducts(t, m.Test, api.ListProductsParams{Limit: two, StartingAfter: ptr(ids[1])})
		catSameIDs(t, "page 2", catProductIDs(p2.Data), ids[2:4])
		p3 := catListProducts(t, m.Test, api.ListProductsParams{Limit: two, StartingAfter: ptr(ids[3])})
		catSameIDs(t, "page 3", catProductIDs(p3.Data), ids[4:5])
		if !p1.HasMore || !p2.HasMore || p3.HasMore {
			t.Fatalf("has_more = %v %v %v, want true true false", p1.HasMore, p2.HasMore, p3.HasMore)
		}
		back := catListProducts(t, m.Test, api.ListProductsParams{Limit: two, EndingBefore: ptr(ids[4])})
		catSameIDs(t, "ending_before the last", catProductIDs(back.Data), ids[2:4])
		if !back.HasMore {
			t.Fatal("has_more false with newer products before the page")
		}
		back = catListProducts(t, m.Test, api.ListProductsParams{Limit: two, EndingBefore: ptr(ids[2])})
		catSameIDs(t, "ending_before the third", catProductIDs(back.Data), ids[0:2])
		if back.HasMore {
			t.Fatal("has_more true on the first page reached backwards")
		}
	})

	harness.Rule(t, "D13", "active filters the product list", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		a := catProduct(t, m.Test, "A")
		b := catCreateProduct(t, m.Test, api.ProductCreate{Name: "B", Active: ptr(false)})
		c := catProduct(t, m.Test, "C")
		if resp, err := m.Test.ArchiveProductWithResponse(catCtx, c.Id); err != nil || resp.JSON200 == nil {
			t.Fatalf("archive: %v", err)
		}
		catSameIDs(t, "active=true", catProductIDs(catListProducts(t, m.Test, api.ListProductsParams{Active: ptr(true)}).Data), []string{a.Id})
		catSameIDs(t, "active=false", catProductIDs(catListProducts(t, m.Test, api.ListProductsParams{Active: ptr(false)}).Data), []string{c.Id, b.Id})
		catSameIDs(t, "no filter", catProductIDs(catListProducts(t, m.Test, api.ListProductsParams{}).Data), []string{c.Id, b.Id, a.Id})
		// The cursor may be a product the filter leaves out.
		catSameIDs(t, "active=true after c", catProductIDs(catListProducts(t, m.Test, api.ListProductsParams{Active: ptr(true), StartingAfter: ptr(c.Id)}).Data), []string{a.Id})
	})

	harness.Rule(t, "D8", "an unknown cursor is 400 starting_after_invalid / ending_before_invalid", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		catProduct(t, m.Test, "A")
		other := catProduct(t, newMerchant(t, true).Test, "Foreign")
		for _, cursor := range []string{"prod_000000000000000000000000", other.Id} {
			r := catGet(t, m.TestKey, "/v1/products", url.Values{"starting_after": {cursor}})
			catWantErr(t, r, http.StatusBadRequest, "invalid_request", "starting_after_invalid", "starting_after")
			r = catGet(t, m.TestKey, "/v1/products", url.Values{"ending_before": {cursor}})
			catWantErr(t, r, http.StatusBadRequest, "invalid_request", "ending_before_invalid", "ending_before")
		}
	})
}

func TestCatalogIdempotency(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "8", "replaying POST /v1/products with the same Idempotency-Key creates one product", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		key := "cat-" + m.ID
		body := api.ProductCreate{Name: "Once", Price: &api.PriceCreateInline{Currency: "eur", UnitAmount: 700}}
		var ids []string
		for i := range 2 {
			resp, err := m.Test.CreateProductWithResponse(catCtx, &api.CreateProductParams{IdempotencyKey: ptr(key)}, body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.JSON200 == nil {
				t.Fatalf("attempt %d: %d %s", i+1, resp.StatusCode(), resp.Body)
			}
			if i == 1 && resp.HTTPResponse.Header.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("replay without Idempotent-Replayed: true (got %q)", resp.HTTPResponse.Header.Get("Idempotent-Replayed"))
			}
			ids = append(ids, resp.JSON200.Id)
		}
		if ids[0] != ids[1] {
			t.Fatalf("replay returned %s, first %s", ids[1], ids[0])
		}
		catSameIDs(t, "products", catProductIDs(catListProducts(t, m.Test, api.ListProductsParams{}).Data), ids[:1])
	})
}

// catDeref is "" for nil.
func catDeref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
