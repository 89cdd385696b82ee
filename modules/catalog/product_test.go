package catalog

import (
	"slices"
	"strings"
	"testing"

	"github.com/kassa-pay/kassa/core"
)

const inv = core.TypeInvalidRequest

func TestNewProductRules(t *testing.T) {
	img := "https://cdn.example.com/a.png"
	cases := []struct {
		name        string
		in          ProductInput
		code, param string
	}{
		{"minimal", ProductInput{Name: "T-shirt"}, "", ""},
		{"name missing", ProductInput{}, core.CodeParameterMissing, "name"},
		{"name blank", ProductInput{Name: "   "}, "name_invalid", "name"},
		{"name 250", ProductInput{Name: strings.Repeat("n", 250)}, "", ""},
		{"name 251", ProductInput{Name: strings.Repeat("n", 251)}, "name_invalid", "name"},
		{"name 250 runes", ProductInput{Name: strings.Repeat("é", 250)}, "", ""},
		{"description 5000", ProductInput{Name: "x", Description: ptr(strings.Repeat("d", 5000))}, "", ""},
		{"description 5001", ProductInput{Name: "x", Description: ptr(strings.Repeat("d", 5001))}, "description_invalid", "description"},
		{"images 8", ProductInput{Name: "x", Images: stringsOf(8, img)}, "", ""},
		{"images 9", ProductInput{Name: "x", Images: stringsOf(9, img)}, "images_invalid", "images"},
		{"image relative", ProductInput{Name: "x", Images: []string{img, img, img, "/a.png"}}, "images_invalid", "images.3"},
		{"image ftp", ProductInput{Name: "x", Images: []string{"ftp://example.com/a.png"}}, "images_invalid", "images.0"},
		{"image http", ProductInput{Name: "x", Images: []string{"http://example.com/a.png"}}, "", ""},
		{"image 2048", ProductInput{Name: "x", Images: []string{"https://e.com/" + strings.Repeat("a", 2048-14)}}, "", ""},
		{"image 2049", ProductInput{Name: "x", Images: []string{"https://e.com/" + strings.Repeat("a", 2049-14)}}, "images_invalid", "images.0"},
		{"tax_code ok", ProductInput{Name: "x", TaxCode: ptr("txcd_10000000")}, "", ""},
		{"tax_code prefix", ProductInput{Name: "x", TaxCode: ptr("tx_10000000")}, "tax_code_invalid", "tax_code"},
		{"tax_code empty tail", ProductInput{Name: "x", TaxCode: ptr("txcd_")}, "tax_code_invalid", "tax_code"},
		{"tax_code 41", ProductInput{Name: "x", TaxCode: ptr("txcd_" + strings.Repeat("1", 41))}, "tax_code_invalid", "tax_code"},
		{"tax_code symbol", ProductInput{Name: "x", TaxCode: ptr("txcd_1-2")}, "tax_code_invalid", "tax_code"},
		{"unit_label 12", ProductInput{Name: "x", UnitLabel: ptr(strings.Repeat("u", 12))}, "", ""},
		{"unit_label 13", ProductInput{Name: "x", UnitLabel: ptr(strings.Repeat("u", 13))}, "unit_label_invalid", "unit_label"},
		{"descriptor 22", ProductInput{Name: "x", StatementDescriptor: ptr(strings.Repeat("s", 22))}, "", ""},
		{"descriptor 23", ProductInput{Name: "x", StatementDescriptor: ptr(strings.Repeat("s", 23))}, "statement_descriptor_invalid", "statement_descriptor"},
		{"descriptor blank", ProductInput{Name: "x", StatementDescriptor: ptr("  ")}, "statement_descriptor_invalid", "statement_descriptor"},
		{"descriptor <", ProductInput{Name: "x", StatementDescriptor: ptr("a<b")}, "statement_descriptor_invalid", "statement_descriptor"},
		{"descriptor >", ProductInput{Name: "x", StatementDescriptor: ptr("a>b")}, "statement_descriptor_invalid", "statement_descriptor"},
		{"descriptor backslash", ProductInput{Name: "x", StatementDescriptor: ptr(`a\b`)}, "statement_descriptor_invalid", "statement_descriptor"},
		{"descriptor quote", ProductInput{Name: "x", StatementDescriptor: ptr(`a'b`)}, "statement_descriptor_invalid", "statement_descriptor"},
		{"descriptor dquote", ProductInput{Name: "x", StatementDescriptor: ptr(`a"b`)}, "statement_descriptor_invalid", "statement_descriptor"},
		{"url ok", ProductInput{Name: "x", URL: ptr("https://shop.example.com/p/1")}, "", ""},
		{"url relative", ProductInput{Name: "x", URL: ptr("shop.example.com/p/1")}, "url_invalid", "url"},
		{"url mailto", ProductInput{Name: "x", URL: ptr("mailto:a@b.c")}, "url_invalid", "url"},
		{"dims ok", ProductInput{Name: "x", PackageDimensions: &Dimensions{1, 2, 3, 4}}, "", ""},
		{"dims length 0", ProductInput{Name: "x", PackageDimensions: &Dimensions{0, 2, 3, 4}}, "length_invalid", "package_dimensions.length"},
		{"dims width neg", ProductInput{Name: "x", PackageDimensions: &Dimensions{1, -2, 3, 4}}, "width_invalid", "package_dimensions.width"},
		{"dims height 0", ProductInput{Name: "x", PackageDimensions: &Dimensions{1, 2, 0, 4}}, "height_invalid", "package_dimensions.height"},
		{"dims weight missing", ProductInput{Name: "x", PackageDimensions: &Dimensions{Length: 1, Width: 2, Height: 3}}, "weight_invalid", "package_dimensions.weight"},
		{"tags 20", ProductInput{Name: "x", Tags: stringsOf(20, "t")}, "", ""},
		{"tags 21", ProductInput{Name: "x", Tags: stringsOf(21, "t")}, "tags_invalid", "tags"},
		{"tag empty", ProductInput{Name: "x", Tags: []string{"a", ""}}, "tags_invalid", "tags.1"},
		{"tag 64", ProductInput{Name: "x", Tags: []string{strings.Repeat("t", 64)}}, "", ""},
		{"tag 65", ProductInput{Name: "x", Tags: []string{strings.Repeat("t", 65)}}, "tags_invalid", "tags.0"},
		{"metadata 50", ProductInput{Name: "x", Metadata: metadataOf(50)}, "", ""},
		{"metadata 51", ProductInput{Name: "x", Metadata: metadataOf(51)}, "metadata_invalid", "metadata"},
		{"metadata key 40", ProductInput{Name: "x", Metadata: map[string]string{strings.Repeat("k", 40): "v"}}, "", ""},
		{"metadata key 41", ProductInput{Name: "x", Metadata: map[string]string{strings.Repeat("k", 41): "v"}}, "metadata_invalid", "metadata"},
		{"metadata key empty", ProductInput{Name: "x", Metadata: map[string]string{"": "v"}}, "metadata_invalid", "metadata"},
		{"metadata value 500", ProductInput{Name: "x", Metadata: map[string]string{"k": strings.Repeat("v", 500)}}, "", ""},
		{"metadata value 501", ProductInput{Name: "x", Metadata: map[string]string{"k": strings.Repeat("v", 501)}}, "metadata_invalid", "metadata.k"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewProduct(testScope, tc.in, testNow)
			wantErr(t, err, inv, tc.code, tc.param)
			if err == nil && (!p.Active() || !core.HasIDShape(p.ID(), core.PrefixProduct)) {
				t.Fatalf("new product must be active with a prod_ id, got %q active=%v", p.ID(), p.Active())
			}
		})
	}
}

func TestNewProductDefaultsAndCopies(t *testing.T) {
	tags := []string{"a"}
	p, err := NewProduct(testScope, ProductInput{Name: "  Mug  ", Tags: tags, Active: ptr(false)}, testNow)
	wantErr(t, err, "", "", "")
	if p.Name() != "Mug" || p.Active() {
		t.Fatalf("name %q active %v", p.Name(), p.Active())
	}
	tags[0] = "changed"
	if p.Tags()[0] != "a" {
		t.Fatal("product must not share the caller's slice")
	}
	p.Tags()[0] = "changed"
	if p.Tags()[0] != "a" {
		t.Fatal("getter must return a copy")
	}
}

func TestProductApply(t *testing.T) {
	base := func() *Product {
		p, err := NewProduct(testScope, ProductInput{Name: "x", Description: ptr("d"), Metadata: map[string]string{"a": "1", "b": "2"},
			PackageDimensions: &Dimensions{1, 1, 1, 1}}, testNow)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name        string
		patch       ProductPatch
		code, param string
		check       func(*Product) bool
	}{
		{"nothing", ProductPatch{}, "", "", func(p *Product) bool { return p.Description() == "d" }},
		{"unset description", ProductPatch{Description: ptr("")}, "", "", func(p *Product) bool { return p.Description() == "" }},
		{"name blank", ProductPatch{Name: ptr(" ")}, "name_invalid", "name", nil},
		{"name empty", ProductPatch{Name: ptr("")}, core.CodeParameterMissing, "name", nil},
		{"images replace", ProductPatch{Images: &[]string{"https://e.com/1"}}, "", "", func(p *Product) bool { return len(p.Images()) == 1 }},
		{"images too many", ProductPatch{Images: ptr(stringsOf(9, "https://e.com/1"))}, "images_invalid", "images", nil},
		{"tag bad", ProductPatch{Tags: &[]string{strings.Repeat("t", 65)}}, "tags_invalid", "tags.0", nil},
		{"metadata merge", ProductPatch{Metadata: map[string]string{"a": "", "c": "3"}}, "", "",
			func(p *Product) bool { m := p.Metadata(); return len(m) == 2 && m["b"] == "2" && m["c"] == "3" }},
		{"metadata overflow", ProductPatch{Metadata: metadataOf(49)}, "metadata_invalid", "metadata", nil},
		{"clear dims", ProductPatch{ClearPackageDimensions: true}, "", "", func(p *Product) bool { return p.PackageDimensions() == nil }},
		{"bad dims", ProductPatch{PackageDimensions: &Dimensions{1, 1, 1, 0}}, "weight_invalid", "package_dimensions.weight", nil},
		{"descriptor bad", ProductPatch{StatementDescriptor: ptr(`"x"`)}, "statement_descriptor_invalid", "statement_descriptor", nil},
		{"tax code bad", ProductPatch{TaxCode: ptr("nope")}, "tax_code_invalid", "tax_code", nil},
		{"archive", ProductPatch{Active: ptr(false)}, "", "", func(p *Product) bool { return !p.Active() }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := base()
			before := p.Snapshot()
			err := p.Apply(tc.patch, testNow.Add(1))
			wantErr(t, err, inv, tc.code, tc.param)
			if err != nil {
				if p.Snapshot().Updated != before.Updated || p.Description() != "d" {
					t.Fatal("a failed patch must change nothing")
				}
				return
			}
			if !tc.check(p) {
				t.Fatalf("patch not applied: %+v", p.Snapshot())
			}
		})
	}
}

func TestSetDefaultPriceAndArchive(t *testing.T) {
	p, _ := NewProduct(testScope, ProductInput{Name: "x"}, testNow)
	active, _ := NewPrice(testScope, p.ID(), PriceInput{Currency: "eur", UnitAmount: 500}, "", testNow)
	inactive, _ := NewPrice(testScope, p.ID(), PriceInput{Currency: "eur", UnitAmount: 700}, "", testNow)
	for _, pr := range []*Price{active, inactive} {
		if err := p.AddPrice(pr); err != nil {
			t.Fatal(err)
		}
	}
	if err := inactive.Apply(PricePatch{Active: ptr(false)}, testNow); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, id, code string
		typ            core.ErrorType
	}{
		{"active", active.ID(), "", ""},
		{"inactive", inactive.ID(), "price_inactive", inv},
		{"unknown", "price_nope", "price_not_found", core.TypeNotFound},
		{"clear", "", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := p.SetDefaultPrice(tc.id, "price", testNow)
			wantErr(t, err, tc.typ, tc.code, "price")
			if err == nil && p.DefaultPrice() != tc.id {
				t.Fatalf("default %q, want %q", p.DefaultPrice(), tc.id)
			}
		})
	}

	other, _ := NewPrice(testScope, "prod_other", PriceInput{Currency: "eur", UnitAmount: 500}, "", testNow)
	wantErr(t, p.AddPrice(other), inv, "price_product_mismatch", "")

	if err := p.SetDefaultPrice(active.ID(), "price", testNow); err != nil {
		t.Fatal(err)
	}
	// Deactivating the default price keeps the link (Stripe-like).
	if err := active.Apply(PricePatch{Active: ptr(false)}, testNow); err != nil || p.DefaultPrice() != active.ID() {
		t.Fatalf("default must stay after deactivation: %v %q", err, p.DefaultPrice())
	}
	_ = active.Apply(PricePatch{Active: ptr(true)}, testNow)

	p.Archive(testNow)
	p.Archive(testNow) // twice is fine
	if p.Active() || active.Active() || inactive.Active() {
		t.Fatal("archive must deactivate the product and every price")
	}
	late, _ := NewPrice(testScope, p.ID(), PriceInput{Currency: "eur", UnitAmount: 500}, "", testNow)
	wantErr(t, p.AddPrice(late), inv, "product_inactive", "")

	// Un-archiving the product leaves its prices archived.
	if err := p.Apply(ProductPatch{Active: ptr(true)}, testNow); err != nil || !p.Active() || active.Active() {
		t.Fatal("un-archiving must not re-activate prices")
	}
}

// TestProductChanges: the product says what its transitions changed, and nothing else — the
// store writes back exactly that (it used to diff snapshots with reflect.DeepEqual).
func TestProductChanges(t *testing.T) {
	old1, _ := NewPrice(testScope, "prod_1", PriceInput{Currency: "eur", UnitAmount: 500}, "", testNow)
	old2, _ := NewPrice(testScope, "prod_1", PriceInput{Currency: "eur", UnitAmount: 700}, "", testNow)
	rec, _ := NewProduct(testScope, ProductInput{Name: "x"}, testNow)
	snap := rec.Snapshot()
	snap.ID = "prod_1"
	fresh := func() *Product {
		return RehydrateProduct(snap, []*Price{RehydratePrice(old2.Snapshot()), RehydratePrice(old1.Snapshot())})
	}
	ids := func(ps []*Price) []string {
		out := []string{}
		for _, p := range ps {
			out = append(out, p.ID())
		}
		return out
	}
	check := func(t *testing.T, p *Product, product bool, added, changed []string) {
		t.Helper()
		c := p.Changes()
		if c.Product != product || !slices.Equal(ids(c.Added), added) || !slices.Equal(ids(c.Changed), changed) {
			t.Fatalf("changes: product=%v added=%v changed=%v; want %v %v %v", c.Product, ids(c.Added), ids(c.Changed), product, added, changed)
		}
	}
	t.Run("rehydrated", func(t *testing.T) { check(t, fresh(), false, []string{}, []string{}) })
	t.Run("price applied", func(t *testing.T) {
		p := fresh()
		if err := p.Price(old1.ID()).Apply(PricePatch{Nickname: ptr("n")}, testNow); err != nil {
			t.Fatal(err)
		}
		check(t, p, false, []string{}, []string{old1.ID()})
	})
	t.Run("failed price patch changes nothing", func(t *testing.T) {
		p := fresh()
		if err := p.Price(old1.ID()).Apply(PricePatch{Immutable: []string{"currency"}}, testNow); err == nil {
			t.Fatal("want parameter_immutable")
		}
		check(t, p, false, []string{}, []string{})
	})
	t.Run("price added and made default", func(t *testing.T) {
		p := fresh()
		a, _ := NewPrice(testScope, "prod_1", PriceInput{Currency: "eur", UnitAmount: 900}, "", testNow)
		b, _ := NewPrice(testScope, "prod_1", PriceInput{Currency: "eur", UnitAmount: 950}, "", testNow)
		if p.AddPrice(a) != nil || p.AddPrice(b) != nil || p.SetDefaultPrice(b.ID(), "price", testNow) != nil {
			t.Fatal("add")
		}
		_ = b.Apply(PricePatch{Nickname: ptr("new")}, testNow) // a new price stays "added"
		check(t, p, true, []string{a.ID(), b.ID()}, []string{})
	})
	t.Run("archive", func(t *testing.T) {
		p := fresh()
		_ = p.Price(old2.ID()).Apply(PricePatch{Active: ptr(false)}, testNow)
		p = RehydrateProduct(snap, []*Price{RehydratePrice(p.Price(old2.ID()).Snapshot()), RehydratePrice(old1.Snapshot())})
		p.Archive(testNow)
		check(t, p, true, []string{}, []string{old1.ID()}) // old2 was inactive already
		again := RehydrateProduct(p.Snapshot(), nil)
		again.Archive(testNow)
		check(t, again, false, []string{}, []string{})
	})
	t.Run("product applied", func(t *testing.T) {
		p := fresh()
		if err := p.Apply(ProductPatch{Name: ptr("")}, testNow); err == nil {
			t.Fatal("want an error for an empty name")
		}
		check(t, p, false, []string{}, []string{})
		if err := p.Apply(ProductPatch{Name: ptr("y")}, testNow); err != nil {
			t.Fatal(err)
		}
		check(t, p, true, []string{}, []string{})
	})
}
