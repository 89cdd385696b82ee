package conformance

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/conformance/harness"
	"github.com/kassa-pay/kassa/core"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

func TestCheckoutCreate(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "2.1", "the create response has the documented shape", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		before := time.Now().Unix()
		s := csCreate(t, m.Test, sessionBody())
		after := time.Now().Unix()
		if !csIDPattern.MatchString(s.Id) {
			t.Fatalf("id %q is not cs_ + 24 base62", s.Id)
		}
		if s.Object != "checkout.session" || s.Status != "open" || s.Mode != "test" {
			t.Fatalf("object/status/mode = %s/%s/%s, want checkout.session/open/test", s.Object, s.Status, s.Mode)
		}
		if s.CheckoutMode != "payment" {
			t.Fatalf("checkout_mode = %s, want payment (the default)", s.CheckoutMode)
		}
		if s.Amount != 2500 || s.Currency != "EUR" {
			t.Fatalf("amount/currency = %d/%s, want 2500/EUR", s.Amount, s.Currency)
		}
		if s.CustomerName != "Ada Lovelace" || s.CustomerEmail != "ada@example.com" {
			t.Fatalf("customer = %q <%s>", s.CustomerName, s.CustomerEmail)
		}
		rest, ok := strings.CutPrefix(s.ClientSecret, s.Id+"_secret_")
		if !ok || !csSecretRandom.MatchString(rest) {
			t.Fatalf("client_secret %q is not <id>_secret_<≥32 base62>", s.ClientSecret)
		}
		csWantURL(t, s.CheckoutUrl, "c", s.Id, s.ClientSecret)
		csWantURL(t, s.EmbedUrl, "embed", s.Id, s.ClientSecret)
		if s.Created < before-1 || s.Created > after+1 {
			t.Fatalf("created = %d, want within [%d, %d]", s.Created, before, after)
		}
		if s.ExpiresAt != s.Created+86400 {
			t.Fatalf("expires_at = %d, want created + 86400 = %d", s.ExpiresAt, s.Created+86400)
		}
		if s.Payment != nil {
			t.Fatalf("payment = %+v, want null", s.Payment)
		}
		if s.Reference != nil || s.Description != nil || s.SuccessUrl != nil || s.CancelUrl != nil || s.CancellationReason != nil {
			t.Fatalf("optional fields not null: %+v", s)
		}
		if len(s.LineItems) != 0 || len(s.Metadata) != 0 {
			t.Fatalf("line_items/metadata = %v/%v, want empty", s.LineItems, s.Metadata)
		}
	})

	harness.Rule(t, "2.1", "every client_secret is different", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		a, b := csCreate(t, m.Test, sessionBody()), csCreate(t, m.Test, sessionBody())
		if a.Id == b.Id || a.ClientSecret == b.ClientSecret {
			t.Fatalf("two sessions share id or secret: %s %s", a.ClientSecret, b.ClientSecret)
		}
	})

	harness.Rule(t, "D6", "mode is the environment: live for a live key of an onboarded merchant", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		s := csCreate(t, m.Live, sessionBody())
		if s.Mode != "live" || s.CheckoutMode != "payment" {
			t.Fatalf("mode/checkout_mode = %s/%s, want live/payment", s.Mode, s.CheckoutMode)
		}
	})

	harness.Rule(t, "D6", "request mode payment is echoed as checkout_mode", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		s := csWantOK(t, csPost(t, m.TestKey, csWith("mode", "payment")))
		if s.CheckoutMode != "payment" || s.Mode != "test" {
			t.Fatalf("mode/checkout_mode = %s/%s, want test/payment", s.Mode, s.CheckoutMode)
		}
	})

	harness.Rule(t, "D2", "currency is uppercase in the response whatever the request case", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		for _, c := range []string{"eur", "EUR", "eUr", "usd", "Gbp"} {
			s := csWantOK(t, csPost(t, m.TestKey, csWith("currency", c)))
			if s.Currency != strings.ToUpper(c) {
				t.Fatalf("currency %q → %q, want %q", c, s.Currency, strings.ToUpper(c))
			}
		}
	})

	harness.Rule(t, "D2", "zero-decimal JPY is accepted with the same minimum", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		s := csWantOK(t, csPost(t, m.TestKey, csWith("currency", "jpy", "amount", 250)))
		if s.Currency != "JPY" || s.Amount != 250 {
			t.Fatalf("got %s %d", s.Currency, s.Amount)
		}
		r := csPost(t, m.TestKey, csWith("currency", "jpy", "amount", 249))
		csWantErr(t, r, 400, "amount_too_small", "amount_below_minimum", "amount")
		if !strings.Contains(string(r.Body), "at least 250 minor units, 250 JPY") {
			t.Fatalf("message does not give the minimum in yen: %s", r.Body)
		}
	})

	harness.Rule(t, "4.1", "the create response echoes reference, description, URLs, metadata and line items", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		b := sessionBody()
		b.Reference = ptr("order-1042")
		b.Description = ptr("Two books")
		b.SuccessUrl = ptr("https://shop.example.com/thanks?o=1042")
		b.CancelUrl = ptr("http://shop.example.com/cart")
		b.Metadata = &api.Metadata{"order_id": "1042", "note": "gift"}
		b.LineItems = &[]api.LineItemParams{
			{Name: "Book", Quantity: ptr(2), Amount: ptr(int64(1000)), ImageUrl: ptr("https://img.example.com/b.png"),
				PriceId: ptr("price_" + core.RandomBase62(24)), ProductId: ptr("prod_" + core.RandomBase62(24))},
			{Name: "Wrapping"},
		}
		s := csCreate(t, m.Test, b)
		if s.Reference == nil || *s.Reference != "order-1042" || s.Description == nil || *s.Description != "Two books" {
			t.Fatalf("reference/description not echoed: %v %v", s.Reference, s.Description)
		}
		if s.SuccessUrl == nil || *s.SuccessUrl != *b.SuccessUrl || s.CancelUrl == nil || *s.CancelUrl != *b.CancelUrl {
			t.Fatalf("urls not echoed: %v %v", s.SuccessUrl, s.CancelUrl)
		}
		if !reflect.DeepEqual(map[string]string(s.Metadata), map[string]string(*b.Metadata)) {
			t.Fatalf("metadata = %v, want %v", s.Metadata, *b.Metadata)
		}
		in := *b.LineItems
		if len(s.LineItems) != 2 {
			t.Fatalf("line_items = %+v", s.LineItems)
		}
		li := s.LineItems[0]
		if li.Name != "Book" || li.Quantity != 2 || li.Amount == nil || *li.Amount != 1000 ||
			li.ImageUrl == nil || *li.ImageUrl != *in[0].ImageUrl || li.PriceId == nil || *li.PriceId != *in[0].PriceId ||
			li.ProductId == nil || *li.ProductId != *in[0].ProductId {
			t.Fatalf("line_items[0] = %+v, want the request's", li)
		}
		li = s.LineItems[1]
		if li.Name != "Wrapping" || li.Quantity != 1 || li.Amount != nil || li.PriceId != nil {
			t.Fatalf("line_items[1] = %+v, want Wrapping × 1 (default quantity)", li)
		}
		// Retrieve shows the same thing.
		g := csGet(t, m.Test, s.Id)
		if !reflect.DeepEqual(g, s) {
			t.Fatalf("retrieve differs from create:\n%+v\n%+v", g, s)
		}
	})

	harness.Rule(t, "4.1", "amount 250 and 99,999,999 are accepted", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		for _, a := range []int64{250, 99_999_999} {
			s := csWantOK(t, csPost(t, m.TestKey, csWith("amount", a)))
			if s.Amount != a {
				t.Fatalf("amount = %d, want %d", s.Amount, a)
			}
		}
	})

	harness.Rule(t, "4.1", "amount 249 gives 400 amount_too_small/amount_below_minimum", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		for _, a := range []int64{249, 0, -1} {
			r := csPost(t, m.TestKey, csWith("amount", a))
			csWantErr(t, r, 400, "amount_too_small", "amount_below_minimum", "amount")
			// The message gives the minimum with its unit, in the session's currency.
			if !strings.Contains(string(r.Body), "at least 250 minor units, 2.50 EUR") {
				t.Fatalf("amount %d: message does not say the unit: %s", a, r.Body)
			}
		}
	})

	harness.Rule(t, "D2", "amount 100,000,000 gives 400 amount_too_large/amount_above_maximum", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		csWantErr(t, csPost(t, m.TestKey, csWith("amount", 100_000_000)), 400, "amount_too_large", "amount_above_maximum", "amount")
	})

	harness.Rule(t, "4.1", "payment mode without amount gives parameter_missing amount", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		csWantErr(t, csPost(t, m.TestKey, csWith("amount", nil)), 400, "invalid_request", "parameter_missing", "amount")
		csWantErr(t, csPost(t, m.TestKey, csWith("amount", nil, "mode", "payment")), 400, "invalid_request", "parameter_missing", "amount")
	})

	harness.Rule(t, "4.1", "required fields missing give parameter_missing with the field", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		for _, f := range []string{"currency", "customer_name", "customer_email"} {
			csWantErr(t, csPost(t, m.TestKey, csWith(f, nil)), 400, "invalid_request", "parameter_missing", f)
		}
	})

	harness.Rule(t, "D2", "an unsupported currency gives 400 currency_unsupported", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		for _, c := range []string{"xyz", "XXX", "eu", "euro"} {
			csWantErr(t, csPost(t, m.TestKey, csWith("currency", c)), 400, "currency_unsupported", "currency_unsupported", "currency")
		}
	})

	harness.Rule(t, "8", "customer_name is 2 to 120 characters", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		for _, n := range []string{"Ab", "Zö", strings.Repeat("a", 120), strings.Repeat("ö", 120)} {
			s := csWantOK(t, csPost(t, m.TestKey, csWith("customer_name", n)))
			if s.CustomerName != n {
				t.Fatalf("customer_name = %q, want %q", s.CustomerName, n)
			}
		}
		for _, n := range []string{"A", "ö", strings.Repeat("a", 121), strings.Repeat("ö", 121)} {
			csWantErr(t, csPost(t, m.TestKey, csWith("customer_name", n)), 400, "invalid_request", "customer_name_invalid", "customer_name")
		}
	})

	harness.Rule(t, "4.1", "customer_email must be a bare valid address", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		for _, e := range []string{"not-an-email", "a@", "@example.com", "Ada <ada@example.com>", "ada @example.com"} {
			csWantErr(t, csPost(t, m.TestKey, csWith("customer_email", e)), 400, "invalid_request", "customer_email_invalid", "customer_email")
		}
		s := csWantOK(t, csPost(t, m.TestKey, csWith("customer_email", "ada.lovelace+shop@mail.example.co.uk")))
		if s.CustomerEmail != "ada.lovelace+shop@mail.example.co.uk" {
			t.Fatalf("customer_email = %q", s.CustomerEmail)
		}
	})

	harness.Rule(t, "4.1", "success_url and cancel_url must be absolute http(s) URLs", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		for _, f := range []string{"success_url", "cancel_url"} {
			for _, u := range []string{"/thanks", "thanks", "ftp://shop.example.com/x", "https://", "javascript:alert(1)"} {
				csWantErr(t, csPost(t, m.TestKey, csWith(f, u)), 400, "invalid_request", f+"_invalid", f)
			}
		}
	})

	harness.Rule(t, "4.1", "line_items: 100 accepted, 101 rejected", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		s := csWantOK(t, csPost(t, m.TestKey, csWith("line_items", csLineItems(100))))
		if len(s.LineItems) != 100 {
			t.Fatalf("line_items = %d, want 100", len(s.LineItems))
		}
		csWantErr(t, csPost(t, m.TestKey, csWith("line_items", csLineItems(101))), 400, "invalid_request", "line_items_invalid", "line_items")
	})

	harness.Rule(t, "4.1", "a line item needs a name and a quantity of at least 1", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		csWantErr(t, csPost(t, m.TestKey, csWith("line_items", []map[string]any{{"quantity": 1}})),
			400, "invalid_request", "parameter_missing", "line_items.0.name")
		csWantErr(t, csPost(t, m.TestKey, csWith("line_items", []map[string]any{{"name": "A"}, {"name": "B", "quantity": 0}})),
			400, "invalid_request", "quantity_invalid", "line_items.1.quantity")
		csWantErr(t, csPost(t, m.TestKey, csWith("line_items", []map[string]any{{"name": "A", "quantity": 0}})),
			400, "invalid_request", "quantity_invalid", "line_items.0.quantity")
		csWantErr(t, csPost(t, m.TestKey, csWith("line_items", []map[string]any{{"name": "A", "amount": -1}})),
			400, "invalid_request", "amount_invalid", "line_items.0.amount")
		csWantErr(t, csPost(t, m.TestKey, csWith("line_items", []map[string]any{{"name": "A", "colour": "red"}})),
			400, "invalid_request", "parameter_unknown", "line_items.0.colour")
	})

	harness.Rule(t, "4.1", "in payment mode a line item's price_id is not fetched", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		unknown := "price_" + core.RandomBase62(24)
		s := csWantOK(t, csPost(t, m.TestKey, csWith("line_items", []map[string]any{{"name": "A", "price_id": unknown}})))
		if s.LineItems[0].PriceId == nil || *s.LineItems[0].PriceId != unknown || s.Amount != 2500 {
			t.Fatalf("session = %+v", s)
		}
	})

	harness.Rule(t, "D13", "metadata: 50 keys accepted, 51 rejected", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		s := csWantOK(t, csPost(t, m.TestKey, csWith("metadata", csMetadata(50))))
		if len(s.Metadata) != 50 {
			t.Fatalf("metadata has %d keys, want 50", len(s.Metadata))
		}
		csWantErr(t, csPost(t, m.TestKey, csWith("metadata", csMetadata(51))), 400, "invalid_request", "metadata_invalid", "metadata")
	})

	harness.Rule(t, "4.1", "an unknown mode gives 400 mode_invalid", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		for _, mode := range []string{"setup", "test", "PAYMENT", ""} {
			csWantErr(t, csPost(t, m.TestKey, csWith("mode", mode)), 400, "invalid_request", "mode_invalid", "mode")
		}
	})

	harness.Rule(t, "D3", "an unknown body field gives parameter_unknown", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		csWantErr(t, csPost(t, m.TestKey, csWith("customer", "cus_x")), 400, "invalid_request", "parameter_unknown", "customer")
	})

	harness.Rule(t, "D1", "a live key before onboarding gives 409 merchant_not_ready; test works; after onboarding live works", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, false)
		resp, err := m.Live.CreateCheckoutSessionWithResponse(context.Background(), nil, sessionBody())
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, resp, resp.HTTPResponse, resp.Body, 409, "resource_conflict", "merchant_not_ready", "")
		if s := csCreate(t, m.Test, sessionBody()); s.Mode != "test" {
			t.Fatalf("test session mode = %s", s.Mode)
		}
		done, err := operator(t).CompleteOnboardingWithResponse(context.Background(), m.ID)
		if err != nil {
			t.Fatal(err)
		}
		if done.StatusCode() != 200 {
			t.Fatalf("complete onboarding: %d %s", done.StatusCode(), done.Body)
		}
		if s := csCreate(t, m.Live, sessionBody()); s.Mode != "live" {
			t.Fatalf("live session mode = %s", s.Mode)
		}
	})
}

// csSubscriptionFixture creates a product with a recurring monthly price (unit 1200, EUR), a
// one-time price and an archived recurring price, and returns their ids.
type csPrices struct{ recurring, oneTime, inactive string }

func csSubscriptionFixture(t *testing.T, m *Merchant) csPrices {
	t.Helper()
	ctx := context.Background()
	prod, err := m.Test.CreateProductWithResponse(ctx, nil, api.ProductCreate{Name: "Plan"})
	if err != nil {
		t.Fatal(err)
	}
	if prod.JSON200 == nil {
		t.Fatalf("create product: %d %s", prod.StatusCode(), prod.Body)
	}
	pid := prod.JSON200.Id
	mk := func(body api.PriceCreate) string {
		t.Helper()
		r, err := m.Test.CreatePriceWithResponse(ctx, pid, nil, body)
		if err != nil {
			t.Fatal(err)
		}
		if r.JSON200 == nil {
			t.Fatalf("create price: %d %s", r.StatusCode(), r.Body)
		}
		return r.JSON200.Id
	}
	monthly := &api.RecurringParams{Interval: wire.RecurringIntervalMonth}
	var p csPrices
	p.recurring = mk(api.PriceCreate{Currency: "eur", UnitAmount: 1200, Recurring: monthly})
	p.oneTime = mk(api.PriceCreate{Currency: "eur", UnitAmount: 1200})
	p.inactive = mk(api.PriceCreate{Currency: "eur", UnitAmount: 900, Recurring: monthly})
	up, err := m.Test.UpdatePriceWithResponse(ctx, pid, p.inactive, nil, api.PriceUpdate{Active: ptr(false)})
	if err != nil {
		t.Fatal(err)
	}
	if up.StatusCode() != 200 {
		t.Fatalf("archive price: %d %s", up.StatusCode(), up.Body)
	}
	return p
}

func csSubBody(priceID string, qty int) map[string]any {
	item := map[string]any{"name": "Plan"}
	if priceID != "" {
		item["price_id"] = priceID
	}
	if qty > 0 {
		item["quantity"] = qty
	}
	return csWith("amount", nil, "mode", "subscription", "line_items", []map[string]any{item})
}
