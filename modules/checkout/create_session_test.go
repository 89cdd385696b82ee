package checkout

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func ptr[T any](v T) *T { return &v }

var (
	recurringPrice = "price_" + strings.Repeat("R", 24)
	oneTimePrice   = "price_" + strings.Repeat("O", 24)
	inactivePrice  = "price_" + strings.Repeat("I", 24)
	unknownPrice   = "price_" + strings.Repeat("U", 24)
	bigPrice       = "price_" + strings.Repeat("B", 24)
)

func testPrices() fakePrices {
	return fakePrices{
		recurringPrice: {ID: recurringPrice, Active: true, Recurring: true, UnitAmount: 1500, Currency: "EUR"},
		oneTimePrice:   {ID: oneTimePrice, Active: true, Recurring: false, UnitAmount: 1500, Currency: "EUR"},
		inactivePrice:  {ID: inactivePrice, Active: false, Recurring: true, UnitAmount: 1500, Currency: "EUR"},
		bigPrice:       {ID: bigPrice, Active: true, Recurring: true, UnitAmount: 50_000_000, Currency: "EUR"},
	}
}

func newTestService(t *testing.T) (*Service, *memStore, *fakeClocks) {
	t.Helper()
	svc, store, clocks, _ := newServiceWith(t, fakeMerchants{}, 0)
	return svc, store, clocks
}

var testScope = core.Scope{MerchantID: "mer_" + strings.Repeat("a", 24), Env: core.EnvTest}

func validInput() CreateInput {
	return CreateInput{Amount: ptr(int64(1000)), Currency: "eur", CustomerName: "Ada Lovelace", CustomerEmail: "ada@example.com"}
}

func subInput() CreateInput {
	in := validInput()
	in.Mode = "subscription"
	in.Amount = nil
	in.LineItems = []LineItem{{Name: "Plan", PriceID: ptr(recurringPrice)}}
	return in
}

func TestCreateRules(t *testing.T) {
	t.Parallel()
	type want struct {
		typ   core.ErrorType
		code  string
		param string
	}
	invalid := func(code, param string) *want { return &want{core.TypeInvalidRequest, code, param} }
	manyItems := make([]LineItem, 101)
	for i := range manyItems {
		manyItems[i] = LineItem{Name: "x"}
	}
	manyMeta := map[string]string{}
	for i := range 51 {
		manyMeta[fmt.Sprint("k", i)] = "v"
	}
	live := core.Caller{Scope: core.Scope{MerchantID: testScope.MerchantID, Env: core.EnvLive}}
	cases := []struct {
		name   string
		caller *core.Caller
		mod    func(*CreateInput)
		base   func() CreateInput
		want   *want
		check  func(*testing.T, *Session)
	}{
		{name: "valid payment", check: func(t *testing.T, s *Session) {
			if s.Amount() != 1000 || s.Currency() != "EUR" || s.Mode() != ModePayment || s.Status() != StatusOpen {
				t.Errorf("got %+v", s.Snapshot())
			}
		}},
		{name: "live not onboarded checked first", caller: &live, mod: func(in *CreateInput) { in.Mode = "bogus" },
			want: &want{core.TypeResourceConflict, "merchant_not_ready", ""}},
		{name: "live onboarded ok", caller: &core.Caller{Scope: live.Scope, Onboarded: true}},
		{name: "mode explicit payment", mod: func(in *CreateInput) { in.Mode = "payment" }},
		{name: "mode unknown", mod: func(in *CreateInput) { in.Mode = "setup" }, want: invalid("mode_invalid", "mode")},
		{name: "amount missing", mod: func(in *CreateInput) { in.Amount = nil }, want: invalid("parameter_missing", "amount")},
		{name: "amount 249", mod: func(in *CreateInput) { in.Amount = ptr(int64(249)) },
			want: &want{core.TypeAmountTooSmall, "amount_below_minimum", "amount"}},
		{name: "amount 250 ok", mod: func(in *CreateInput) { in.Amount = ptr(int64(250)) }},
		{name: "amount max ok", mod: func(in *CreateInput) { in.Amount = ptr(core.MaxAmount) }},
		{name: "amount too large", mod: func(in *CreateInput) { in.Amount = ptr(core.MaxAmount + 1) },
			want: &want{core.TypeAmountTooLarge, "amount_above_maximum", "amount"}},
		{name: "currency missing", mod: func(in *CreateInput) { in.Currency = "" }, want: invalid("parameter_missing", "currency")},
		{name: "currency upper ok", mod: func(in *CreateInput) { in.Currency = "JPY" }, check: func(t *testing.T, s *Session) {
			if s.Currency() != "JPY" {
				t.Errorf("currency %q", s.Currency())
			}
		}},
		{name: "currency mixed case ok", mod: func(in *CreateInput) { in.Currency = "uSd" }},
		{name: "currency unsupported", mod: func(in *CreateInput) { in.Currency = "xyz" },
			want: &want{core.TypeCurrencyUnsupported, "currency_unsupported", "currency"}},
		{name: "name missing", mod: func(in *CreateInput) { in.CustomerName = "" }, want: invalid("parameter_missing", "customer_name")},
		{name: "name one char", mod: func(in *CreateInput) { in.CustomerName = " A " }, want: invalid("customer_name_invalid", "customer_name")},
		{name: "name two runes ok", mod: func(in *CreateInput) { in.CustomerName = " Żó " }, check: func(t *testing.T, s *Session) {
			if s.CustomerName() != "Żó" {
				t.Errorf("name %q", s.CustomerName())
			}
		}},
		{name: "name 120 runes ok", mod: func(in *CreateInput) { in.CustomerName = strings.Repeat("é", 120) }},
		{name: "name 121 runes", mod: func(in *CreateInput) { in.CustomerName = strings.Repeat("é", 121) },
			want: invalid("customer_name_invalid", "customer_name")},
		{name: "email missing", mod: func(in *CreateInput) { in.CustomerEmail = "" }, want: invalid("parameter_missing", "customer_email")},
		{name: "email no at", mod: func(in *CreateInput) { in.CustomerEmail = "ada.example.com" }, want: invalid("customer_email_invalid", "customer_email")},
		{name: "email display name", mod: func(in *CreateInput) { in.CustomerEmail = "Ada <ada@example.com>" }, want: invalid("customer_email_invalid", "customer_email")},
		{name: "email angle brackets", mod: func(in *CreateInput) { in.CustomerEmail = "<ada@example.com>" }, want: invalid("customer_email_invalid", "customer_email")},
		{name: "email space in domain", mod: func(in *CreateInput) { in.CustomerEmail = "ada@exa mple.com" }, want: invalid("customer_email_invalid", "customer_email")},
		{name: "email empty domain", mod: func(in *CreateInput) { in.CustomerEmail = "ada@" }, want: invalid("customer_email_invalid", "customer_email")},
		{name: "email too long", mod: func(in *CreateInput) {
			in.CustomerEmail = strings.Repeat("a", 64) + "@" + strings.Repeat("b", 186) + ".com"
		},
			want: invalid("customer_email_invalid", "customer_email")},
		{name: "email dotless domain rejected (one rule for every e-mail, core.ValidEmail)", mod: func(in *CreateInput) { in.CustomerEmail = "root@localhost" }, want: invalid("customer_email_invalid", "customer_email")},
		{name: "email plus ok", mod: func(in *CreateInput) { in.CustomerEmail = "ada+shop@mail.example.co.uk" }},
		{name: "success_url relative", mod: func(in *CreateInput) { in.SuccessURL = ptr("/done") }, want: invalid("success_url_invalid", "success_url")},
		{name: "success_url ftp", mod: func(in *CreateInput) { in.SuccessURL = ptr("ftp://example.com/x") }, want: invalid("success_url_invalid", "success_url")},
		{name: "success_url javascript", mod: func(in *CreateInput) { in.SuccessURL = ptr("javascript:alert(1)") }, want: invalid("success_url_invalid", "success_url")},
		{name: "success_url ok", mod: func(in *CreateInput) { in.SuccessURL = ptr("https://shop.example.com/ok?order=1") }},
		{name: "cancel_url no host", mod: func(in *CreateInput) { in.CancelURL = ptr("https:///x") }, want: invalid("cancel_url_invalid", "cancel_url")},
		{name: "cancel_url too long", mod: func(in *CreateInput) { in.CancelURL = ptr("https://e.com/" + strings.Repeat("a", 2048)) },
			want: invalid("cancel_url_invalid", "cancel_url")},
		{name: "cancel_url http ok", mod: func(in *CreateInput) { in.CancelURL = ptr("http://localhost:3000/cancel") }},
		{name: "reference 255 ok", mod: func(in *CreateInput) { in.Reference = ptr(strings.Repeat("r", 255)) }},
		{name: "reference 256", mod: func(in *CreateInput) { in.Reference = ptr(strings.Repeat("r", 256)) }, want: invalid("reference_invalid", "reference")},
		{name: "description 1001", mod: func(in *CreateInput) { in.Description = ptr(strings.Repeat("d", 1001)) }, want: invalid("description_invalid", "description")},
		{name: "line items 101", mod: func(in *CreateInput) { in.LineItems = manyItems }, want: invalid("line_items_invalid", "line_items")},
		{name: "line item empty name", mod: func(in *CreateInput) { in.LineItems = []LineItem{{Name: "a"}, {Name: ""}} },
			want: invalid("name_invalid", "line_items.1.name")},
		{name: "line item long name", mod: func(in *CreateInput) { in.LineItems = []LineItem{{Name: strings.Repeat("n", 251)}} },
			want: invalid("name_invalid", "line_items.0.name")},
		{name: "line item quantity default 1", mod: func(in *CreateInput) { in.LineItems = []LineItem{{Name: "a"}} }, check: func(t *testing.T, s *Session) {
			if q := s.LineItems()[0].Quantity; q != 1 {
				t.Errorf("quantity %d", q)
			}
		}},
		{name: "line item quantity 10000", mod: func(in *CreateInput) { in.LineItems = []LineItem{{Name: "a", Quantity: 10000}} },
			want: invalid("quantity_invalid", "line_items.0.quantity")},
		{name: "line item quantity negative", mod: func(in *CreateInput) { in.LineItems = []LineItem{{Name: "a", Quantity: -1}} },
			want: invalid("quantity_invalid", "line_items.0.quantity")},
		{name: "line item amount negative", mod: func(in *CreateInput) { in.LineItems = []LineItem{{Name: "a", Amount: ptr(int64(-1))}} },
			want: invalid("amount_invalid", "line_items.0.amount")},
		{name: "line item amount zero ok", mod: func(in *CreateInput) { in.LineItems = []LineItem{{Name: "a", Amount: ptr(int64(0))}} }},
		{name: "line item image not url", mod: func(in *CreateInput) { in.LineItems = []LineItem{{Name: "a", ImageURL: ptr("img.png")}} },
			want: invalid("image_url_invalid", "line_items.0.image_url")},
		{name: "line item price id shape", mod: func(in *CreateInput) { in.LineItems = []LineItem{{Name: "a", PriceID: ptr("price_123")}} },
			want: invalid("price_id_invalid", "line_items.0.price_id")},
		{name: "line item product id shape", mod: func(in *CreateInput) { in.LineItems = []LineItem{{Name: "a", ProductID: ptr(recurringPrice)}} },
			want: invalid("product_id_invalid", "line_items.0.product_id")},
		{name: "payment mode does not fetch price", mod: func(in *CreateInput) {
			in.LineItems = []LineItem{{Name: "a", PriceID: ptr(unknownPrice), ProductID: ptr("prod_" + strings.Repeat("p", 24))}}
		}},
		{name: "metadata 51 keys", mod: func(in *CreateInput) { in.Metadata = manyMeta }, want: invalid("metadata_invalid", "metadata")},
		{name: "metadata empty key", mod: func(in *CreateInput) { in.Metadata = map[string]string{"": "v"} }, want: invalid("metadata_invalid", "metadata")},
		{name: "metadata long key", mod: func(in *CreateInput) { in.Metadata = map[string]string{strings.Repeat("k", 41): "v"} }, want: invalid("metadata_invalid", "metadata")},
		{name: "metadata long value", mod: func(in *CreateInput) { in.Metadata = map[string]string{"k": strings.Repeat("v", 501)} }, want: invalid("metadata_invalid", "metadata.k")},
		{name: "metadata ok", mod: func(in *CreateInput) { in.Metadata = map[string]string{"order": "42"} }, check: func(t *testing.T, s *Session) {
			if s.Metadata()["order"] != "42" {
				t.Errorf("metadata %v", s.Metadata())
			}
		}},

		{name: "subscription mode refused until subscriptions exist", mod: func(in *CreateInput) { *in = subInput() },
			want: invalid("mode_unsupported", "mode")},
		{name: "subscription ok", base: subInput, mod: func(in *CreateInput) { in.LineItems[0].Quantity = 3 }, check: func(t *testing.T, s *Session) {
			if s.Amount() != 4500 || s.Mode() != ModeSubscription {
				t.Errorf("amount %d mode %s", s.Amount(), s.Mode())
			}
		}},
		{name: "subscription amount given", base: subInput, mod: func(in *CreateInput) { in.Amount = ptr(int64(1000)) }, want: invalid("amount_invalid", "amount")},
		{name: "subscription no line items", base: subInput, mod: func(in *CreateInput) { in.LineItems = nil },
			want: invalid("parameter_missing", "line_items.0.price_id")},
		{name: "subscription no price id", base: subInput, mod: func(in *CreateInput) { in.LineItems[0].PriceID = nil },
			want: invalid("parameter_missing", "line_items.0.price_id")},
		{name: "subscription unknown price", base: subInput, mod: func(in *CreateInput) { in.LineItems[0].PriceID = ptr(unknownPrice) },
			want: &want{core.TypeNotFound, "price_not_found", "line_items.0.price_id"}},
		{name: "subscription inactive price", base: subInput, mod: func(in *CreateInput) { in.LineItems[0].PriceID = ptr(inactivePrice) },
			want: invalid("price_inactive", "line_items.0.price_id")},
		{name: "subscription one-time price", base: subInput, mod: func(in *CreateInput) { in.LineItems[0].PriceID = ptr(oneTimePrice) },
			want: invalid("price_not_recurring", "line_items.0.price_id")},
		{name: "subscription currency mismatch", base: subInput, mod: func(in *CreateInput) { in.Currency = "usd" },
			want: invalid("currency_invalid", "currency")},
		{name: "subscription amount too large", base: subInput, mod: func(in *CreateInput) {
			in.LineItems[0].PriceID = ptr(bigPrice)
			in.LineItems[0].Quantity = 2
		}, want: &want{core.TypeAmountTooLarge, "amount_above_maximum", "line_items.0.quantity"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			svc, store, _ := newTestService(t)
			in := validInput()
			if tc.base != nil {
				in = tc.base()
			}
			if tc.mod != nil {
				tc.mod(&in)
			}
			caller := core.Caller{Scope: testScope}
			if tc.caller != nil {
				caller = *tc.caller
			}
			create := svc.Create
			if tc.base != nil { // the subscription rules, behind Create's refusal of the mode
				create = func(ctx context.Context, c core.Caller, in CreateInput) (*Session, error) {
					return svc.create(ctx, c.Scope, in)
				}
			}
			s, err := create(context.Background(), caller, in)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if tc.check != nil {
					tc.check(t, s)
				}
				if _, err := store.Get(context.Background(), caller.Scope, s.ID()); err != nil {
					t.Fatalf("not stored: %v", err)
				}
				return
			}
			var ce *core.Error
			if !errors.As(err, &ce) {
				t.Fatalf("want %s/%s, got %v", tc.want.typ, tc.want.code, err)
			}
			if ce.Type != tc.want.typ || ce.Code != tc.want.code || ce.Param != tc.want.param {
				t.Fatalf("want %s/%s (%s), got %s/%s (%s)", tc.want.typ, tc.want.code, tc.want.param, ce.Type, ce.Code, ce.Param)
			}
			if len(store.sessions) != 0 {
				t.Fatal("a refused session was stored")
			}
		})
	}
}

func TestCreateIssuesSecretAndURLs(t *testing.T) {
	t.Parallel()
	svc, _, _ := newTestService(t)
	s, err := svc.Create(context.Background(), core.Caller{Scope: testScope}, validInput())
	if err != nil {
		t.Fatal(err)
	}
	if !core.HasIDShape(s.ID(), core.PrefixSession) {
		t.Errorf("id %q", s.ID())
	}
	prefix := s.ID() + "_secret_"
	if !strings.HasPrefix(s.ClientSecret(), prefix) || len(s.ClientSecret()) < len(prefix)+32 {
		t.Errorf("client_secret %q", s.ClientSecret())
	}
	if want := "https://pay.example.com/c/" + s.ID() + "?cs=" + s.ClientSecret(); s.CheckoutURL() != want {
		t.Errorf("checkout_url %q, want %q", s.CheckoutURL(), want)
	}
	if want := "https://pay.example.com/embed/" + s.ID() + "?cs=" + s.ClientSecret(); s.EmbedURL() != want {
		t.Errorf("embed_url %q, want %q", s.EmbedURL(), want)
	}
	if !s.Created().Equal(t0) || !s.ExpiresAt().Equal(t0.Add(24*time.Hour)) {
		t.Errorf("created %v expires %v", s.Created(), s.ExpiresAt())
	}
	if s.Environment() != core.EnvTest || s.CancellationReason() != nil || s.Status() != StatusOpen {
		t.Errorf("env %s reason %v status %s", s.Environment(), s.CancellationReason(), s.Status())
	}
	other, _ := svc.Create(context.Background(), core.Caller{Scope: testScope}, validInput())
	if other.ID() == s.ID() || other.ClientSecret() == s.ClientSecret() {
		t.Error("ids and secrets must be fresh")
	}
}
