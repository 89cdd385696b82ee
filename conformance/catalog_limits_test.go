package conformance

import (
	"strings"
	"testing"

	"github.com/kassa-pay/kassa/conformance/harness"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
)

func TestCatalogProductLimits(t *testing.T) {
	t.Parallel()
	const path = "/v1/products"
	s := strings.Repeat

	rule := func(section, name string, cases []catLimitCase) {
		harness.Rule(t, section, name, func(t *testing.T) {
			t.Parallel()
			catRunLimits(t, newMerchant(t, true).TestKey, path, cases)
		})
	}

	rule("2.4", "name is required, at most 250 characters", []catLimitCase{
		{name: "missing", body: map[string]any{"description": "no name"}, code: "parameter_missing", param: "name"},
		{name: "250", body: catProductBody("name", s("n", 250))},
		{name: "251", body: catProductBody("name", s("n", 251)), code: "name_invalid", param: "name"},
	})
	rule("2.4", "description is at most 5000 characters", []catLimitCase{
		{name: "5000", body: catProductBody("description", s("d", 5000))},
		{name: "5001", body: catProductBody("description", s("d", 5001)), code: "description_invalid", param: "description"},
	})
	image := func(i int) string { return "https://example.com/img/" + string(rune('a'+i)) + ".png" }
	rule("8", "a product has at most 8 images, each an absolute http(s) URL", []catLimitCase{
		{name: "8", body: catProductBody("images", catStrings(8, image))},
		{name: "9", body: catProductBody("images", catStrings(9, image)), code: "images_invalid", param: "images"},
		{name: "ftp", body: catProductBody("images", []string{"ftp://example.com/a.png"}), code: "images_invalid", param: "images.0"},
		{name: "second relative", body: catProductBody("images", []string{image(0), "/img/b.png"}), code: "images_invalid", param: "images.1"},
	})
	rule("8", "statement_descriptor is at most 22 characters without < > \\ ' \"", []catLimitCase{
		{name: "22", body: catProductBody("statement_descriptor", s("S", 22))},
		{name: "23", body: catProductBody("statement_descriptor", s("S", 23)), code: "statement_descriptor_invalid", param: "statement_descriptor"},
		{name: "<", body: catProductBody("statement_descriptor", "KASSA <SHOP>"), code: "statement_descriptor_invalid", param: "statement_descriptor"},
		{name: "quote", body: catProductBody("statement_descriptor", `KASSA "SHOP"`), code: "statement_descriptor_invalid", param: "statement_descriptor"},
	})
	rule("2.4", "unit_label is at most 12 characters", []catLimitCase{
		{name: "12", body: catProductBody("unit_label", s("u", 12))},
		{name: "13", body: catProductBody("unit_label", s("u", 13)), code: "unit_label_invalid", param: "unit_label"},
	})
	rule("2.4", "tax_code has the prefix txcd_", []catLimitCase{
		{name: "txcd_123", body: catProductBody("tax_code", "txcd_123")},
		{name: "tax_1", body: catProductBody("tax_code", "tax_1"), code: "tax_code_invalid", param: "tax_code"},
		{name: "prefix only", body: catProductBody("tax_code", "txcd_"), code: "tax_code_invalid", param: "tax_code"},
	})
	rule("2.4", "url is an absolute http(s) URL", []catLimitCase{
		{name: "https", body: catProductBody("url", "https://example.com/widget")},
		{name: "http", body: catProductBody("url", "http://example.com/widget")},
		{name: "relative", body: catProductBody("url", "/widget"), code: "url_invalid", param: "url"},
		{name: "ftp", body: catProductBody("url", "ftp://example.com/widget"), code: "url_invalid", param: "url"},
	})
	tag := func(i int) string { return "tag" + string(rune('a'+i)) }
	rule("2.4", "at most 20 tags of 1 to 64 characters", []catLimitCase{
		{name: "20 tags", body: catProductBody("tags", catStrings(20, tag))},
		{name: "21 tags", body: catProductBody("tags", catStrings(21, tag)), code: "tags_invalid", param: "tags"},
		{name: "64 chars", body: catProductBody("tags", []string{s("t", 64)})},
		{name: "65 chars", body: catProductBody("tags", []string{"ok", s("t", 65)}), code: "tags_invalid", param: "tags.1"},
		{name: "empty tag", body: catProductBody("tags", []string{""}), code: "tags_invalid", param: "tags.0"},
	})
	rule("D13", "metadata has at most 50 keys of at most 40 characters with values of at most 500", []catLimitCase{
		{name: "50 keys", body: catProductBody("metadata", catMetadata(50, "v"))},
		{name: "51 keys", body: catProductBody("metadata", catMetadata(51, "v")), code: "metadata_invalid", param: "metadata"},
		{name: "key 40", body: catProductBody("metadata", map[string]string{s("k", 40): "v"})},
		{name: "key 41", body: catProductBody("metadata", map[string]string{s("k", 41): "v"}), code: "metadata_invalid", param: "metadata"},
		{name: "value 500", body: catProductBody("metadata", map[string]string{"note": s("v", 500)})},
		{name: "value 501", body: catProductBody("metadata", map[string]string{"note": s("v", 501)}), code: "metadata_invalid", param: "metadata.note"},
	})
	dims := func(drop string, kv ...any) map[string]any {
		d := map[string]any{"length": 10, "width": 20.5, "height": 5, "weight": 300}
		delete(d, drop)
		for i := 0; i+1 < len(kv); i += 2 {
			d[kv[i].(string)] = kv[i+1]
		}
		return catProductBody("package_dimensions", d)
	}
	rule("D13", "package_dimensions needs all four fields, each positive", []catLimitCase{
		{name: "all four", body: dims("")},
		{name: "no weight", body: dims("weight"), code: "parameter_missing", param: "package_dimensions.weight"},
		{name: "no length", body: dims("length"), code: "parameter_missing", param: "package_dimensions.length"},
		{name: "zero length", body: dims("", "length", 0), code: "length_invalid", param: "package_dimensions.length"},
		{name: "negative weight", body: dims("", "weight", -1), code: "weight_invalid", param: "package_dimensions.weight"},
		{name: "tiny height", body: dims("", "height", 0.01)},
	})
	rule("D3", "an unknown product field is 400 parameter_unknown", []catLimitCase{
		{name: "top level", body: catProductBody("colour", "red"), code: "parameter_unknown", param: "colour"},
		{name: "inline price", body: catProductBody("price", catPriceBody("colour", "red")), code: "parameter_unknown", param: "price.colour"},
	})
}

func TestCatalogProductUpdateLimits(t *testing.T) {
	t.Parallel()
	s := strings.Repeat
	harness.Rule(t, "8", "updates are held to the same limits as creation", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		p := catProduct(t, m.Test, "W")
		catRunLimits(t, m.TestKey, "/v1/products/"+p.Id, []catLimitCase{
			{name: "name 250", body: map[string]any{"name": s("n", 250)}},
			{name: "name 251", body: map[string]any{"name": s("n", 251)}, code: "name_invalid", param: "name"},
			{name: "images 9", body: map[string]any{"images": catStrings(9, func(i int) string { return "https://example.com/" + s("i", i+1) })}, code: "images_invalid", param: "images"},
			{name: "statement_descriptor 23", body: map[string]any{"statement_descriptor": s("S", 23)}, code: "statement_descriptor_invalid", param: "statement_descriptor"},
			{name: "statement_descriptor <", body: map[string]any{"statement_descriptor": "A<B"}, code: "statement_descriptor_invalid", param: "statement_descriptor"},
			{name: "tax_code", body: map[string]any{"tax_code": "tax_1"}, code: "tax_code_invalid", param: "tax_code"},
			{name: "url ftp", body: map[string]any{"url": "ftp://example.com"}, code: "url_invalid", param: "url"},
			{name: "metadata key 41", body: map[string]any{"metadata": map[string]string{s("k", 41): "v"}}, code: "metadata_invalid", param: "metadata"},
			{name: "package weight missing", body: map[string]any{"package_dimensions": map[string]any{"length": 1, "width": 1, "height": 1}}, code: "parameter_missing", param: "package_dimensions.weight"},
		})
		// A merge may not take metadata beyond 50 keys.
		catRunLimits(t, m.TestKey, "/v1/products/"+p.Id, []catLimitCase{
			{name: "50 keys", body: map[string]any{"metadata": catMetadata(50, "v")}},
			{name: "one more key", body: map[string]any{"metadata": map[string]string{"extra": "v"}}, code: "metadata_invalid", param: "metadata"},
		})
		if got := catGetProduct(t, m.Test, p.Id); got.Name != s("n", 250) || len(got.Metadata) != 50 {
			t.Fatalf("a refused update changed the product: name %d chars, %d metadata keys", len(got.Name), len(got.Metadata))
		}
	})
}

func TestCatalogPriceLimits(t *testing.T) {
	t.Parallel()

	rule := func(section, name string, cases []catLimitCase) {
		harness.Rule(t, section, name, func(t *testing.T) {
			t.Parallel()
			m := newMerchant(t, true)
			p := catProduct(t, m.Test, "W")
			catRunLimits(t, m.TestKey, "/v1/products/"+p.Id+"/prices", cases)
		})
	}
	rec := func(kv ...any) map[string]any {
		r := map[string]any{"interval": "month"}
		for i := 0; i+1 < len(kv); i += 2 {
			r[kv[i].(string)] = kv[i+1]
		}
		return catPriceBody("recurring", r)
	}

	rule("D2", "unit_amount is 250 to 99,999,999", []catLimitCase{
		{name: "249", body: catPriceBody("unit_amount", 249), typ: "amount_too_small", code: "amount_below_minimum", param: "unit_amount"},
		{name: "250", body: catPriceBody("unit_amount", 250)},
		{name: "99999999", body: catPriceBody("unit_amount", 99999999)},
		{name: "100000000", body: catPriceBody("unit_amount", 100000000), typ: "amount_too_large", code: "amount_above_maximum", param: "unit_amount"},
		{name: "missing", body: map[string]any{"currency": "eur"}, code: "parameter_missing", param: "unit_amount"},
	})
	rule("D2", "an unsupported currency is 400 currency_unsupported", []catLimitCase{
		{name: "xyz", body: catPriceBody("currency", "xyz"), typ: "currency_unsupported", code: "currency_unsupported", param: "currency"},
		{name: "two letters", body: catPriceBody("currency", "eu"), typ: "currency_unsupported", code: "currency_unsupported", param: "currency"},
		{name: "missing", body: map[string]any{"unit_amount": 1000}, code: "parameter_missing", param: "currency"},
	})
	rule("2.5", "recurring.interval is day, week, month or year", []catLimitCase{
		{name: "day", body: rec("interval", "day")},
		{name: "week", body: rec("interval", "week")},
		{name: "year", body: rec("interval", "year")},
		{name: "fortnight", body: rec("interval", "fortnight"), code: "interval_invalid", param: "recurring.interval"},
		{name: "missing", body: catPriceBody("recurring", map[string]any{"interval_count": 1}), code: "parameter_missing", param: "recurring.interval"},
	})
	rule("D13", "recurring.interval_count is at most one year in total", []catLimitCase{
		{name: "365 days", body: rec("interval", "day", "interval_count", 365)},
		{name: "366 days", body: rec("interval", "day", "interval_count", 366), code: "interval_count_invalid", param: "recurring.interval_count"},
		{name: "52 weeks", body: rec("interval", "week", "interval_count", 52)},
		{name: "53 weeks", body: rec("interval", "week", "interval_count", 53), code: "interval_count_invalid", param: "recurring.interval_count"},
		{name: "12 months", body: rec("interval", "month", "interval_count", 12)},
		{name: "13 months", body: rec("interval", "month", "interval_count", 13), code: "interval_count_invalid", param: "recurring.interval_count"},
		{name: "1 year", body: rec("interval", "year", "interval_count", 1)},
		{name: "2 years", body: rec("interval", "year", "interval_count", 2), code: "interval_count_invalid", param: "recurring.interval_count"},
		{name: "0", body: rec("interval_count", 0), code: "interval_count_invalid", param: "recurring.interval_count"},
	})
	rule("D13", "recurring.trial_period_days is 0 to 730", []catLimitCase{
		{name: "0", body: rec("trial_period_days", 0)},
		{name: "730", body: rec("trial_period_days", 730)},
		{name: "731", body: rec("trial_period_days", 731), code: "trial_period_days_invalid", param: "recurring.trial_period_days"},
		{name: "-1", body: rec("trial_period_days", -1), code: "trial_period_days_invalid", param: "recurring.trial_period_days"},
	})
	rule("2.5", "recurring.usage_type is licensed or metered", []catLimitCase{
		{name: "licensed", body: rec("usage_type", "licensed")},
		{name: "metered", body: rec("usage_type", "metered")},
		{name: "seat", body: rec("usage_type", "seat"), code: "usage_type_invalid", param: "recurring.usage_type"},
	})
	rule("D13", "tax_behavior is inclusive, exclusive or unspecified", []catLimitCase{
		{name: "inclusive", body: catPriceBody("tax_behavior", "inclusive")},
		{name: "exclusive", body: catPriceBody("tax_behavior", "exclusive")},
		{name: "unspecified", body: catPriceBody("tax_behavior", "unspecified")},
		{name: "both", body: catPriceBody("tax_behavior", "both"), code: "tax_behavior_invalid", param: "tax_behavior"},
	})
	rule("2.5", "nickname is at most 250 characters and lookup_key at most 200", []catLimitCase{
		{name: "nickname 250", body: catPriceBody("nickname", strings.Repeat("n", 250))},
		{name: "nickname 251", body: catPriceBody("nickname", strings.Repeat("n", 251)), code: "nickname_invalid", param: "nickname"},
		{name: "lookup_key 200", body: catPriceBody("lookup_key", strings.Repeat("l", 200))},
		{name: "lookup_key 201", body: catPriceBody("lookup_key", strings.Repeat("l", 201)), code: "lookup_key_invalid", param: "lookup_key"},
	})
	rule("D13", "price metadata has the same limits as product metadata", []catLimitCase{
		{name: "50 keys", body: catPriceBody("metadata", catMetadata(50, "v"))},
		{name: "51 keys", body: catPriceBody("metadata", catMetadata(51, "v")), code: "metadata_invalid", param: "metadata"},
		{name: "key 41", body: catPriceBody("metadata", map[string]string{strings.Repeat("k", 41): "v"}), code: "metadata_invalid", param: "metadata"},
	})

	harness.Rule(t, "D3", "inline price errors carry price. params", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		inline := func(kv ...any) map[string]any { return catProductBody("price", catPriceBody(kv...)) }
		catRunLimits(t, m.TestKey, "/v1/products", []catLimitCase{
			{name: "249", body: inline("unit_amount", 249), typ: "amount_too_small", code: "amount_below_minimum", param: "price.unit_amount"},
			{name: "250", body: inline("unit_amount", 250)},
			{name: "99999999", body: inline("unit_amount", 99999999)},
			{name: "100000000", body: inline("unit_amount", 100000000), typ: "amount_too_large", code: "amount_above_maximum", param: "price.unit_amount"},
			{name: "xyz", body: inline("currency", "xyz"), typ: "currency_unsupported", code: "currency_unsupported", param: "price.currency"},
			{name: "13 months", body: inline("recurring", map[string]any{"interval": "month", "interval_count": 13}), code: "interval_count_invalid", param: "price.recurring.interval_count"},
			{name: "missing currency", body: catProductBody("price", map[string]any{"unit_amount": 1000}), code: "parameter_missing", param: "price.currency"},
		})
		if l := catListProducts(t, m.Test, api.ListProductsParams{}); len(l.Data) != 2 {
			t.Fatalf("products = %d, want the 2 accepted ones", len(l.Data))
		}
	})
}
