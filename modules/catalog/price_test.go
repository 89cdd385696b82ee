package catalog

import (
	"strings"
	"testing"

	"github.com/kassa-pay/kassa/core"
)

func TestNewPriceRules(t *testing.T) {
	ok := func(mod func(*PriceInput)) PriceInput {
		in := PriceInput{Currency: "eur", UnitAmount: 1000}
		if mod != nil {
			mod(&in)
		}
		return in
	}
	rec := func(r Recurring) func(*PriceInput) { return func(in *PriceInput) { in.Recurring = &r } }
	cases := []struct {
		name, prefix string
		in           PriceInput
		typ          core.ErrorType
		code, param  string
	}{
		{"one time", "", ok(nil), "", "", ""},
		{"amount 250", "", ok(func(in *PriceInput) { in.UnitAmount = 250 }), "", "", ""},
		{"amount 249", "", ok(func(in *PriceInput) { in.UnitAmount = 249 }), core.TypeAmountTooSmall, "amount_below_minimum", "unit_amount"},
		{"amount 249 inline", "price", ok(func(in *PriceInput) { in.UnitAmount = 249 }), core.TypeAmountTooSmall, "amount_below_minimum", "price.unit_amount"},
		{"amount max", "", ok(func(in *PriceInput) { in.UnitAmount = 99_999_999 }), "", "", ""},
		{"amount over max", "", ok(func(in *PriceInput) { in.UnitAmount = 100_000_000 }), core.TypeAmountTooLarge, "amount_above_maximum", "unit_amount"},
		{"currency missing", "", ok(func(in *PriceInput) { in.Currency = "" }), inv, core.CodeParameterMissing, "currency"},
		{"currency unsupported", "price", ok(func(in *PriceInput) { in.Currency = "xyz" }), core.TypeCurrencyUnsupported, "currency_unsupported", "price.currency"},
		{"tax inclusive", "", ok(func(in *PriceInput) { in.TaxBehavior = "inclusive" }), "", "", ""},
		{"tax exclusive", "", ok(func(in *PriceInput) { in.TaxBehavior = "exclusive" }), "", "", ""},
		{"tax unspecified", "", ok(func(in *PriceInput) { in.TaxBehavior = "unspecified" }), "", "", ""},
		{"tax bad", "", ok(func(in *PriceInput) { in.TaxBehavior = "included" }), inv, "tax_behavior_invalid", "tax_behavior"},
		{"lookup_key 200", "", ok(func(in *PriceInput) { in.LookupKey = ptr(strings.Repeat("l", 200)) }), "", "", ""},
		{"lookup_key 201", "", ok(func(in *PriceInput) { in.LookupKey = ptr(strings.Repeat("l", 201)) }), inv, "lookup_key_invalid", "lookup_key"},
		{"metadata bad", "price", ok(func(in *PriceInput) { in.Metadata = map[string]string{"k": strings.Repeat("v", 501)} }), inv, "metadata_invalid", "price.metadata.k"},
		{"monthly", "", ok(rec(Recurring{Interval: "month"})), "", "", ""},
		{"interval missing", "", ok(rec(Recurring{})), inv, core.CodeParameterMissing, "recurring.interval"},
		{"interval bad", "price", ok(rec(Recurring{Interval: "fortnight"})), inv, "interval_invalid", "price.recurring.interval"},
		{"365 days", "", ok(rec(Recurring{Interval: "day", IntervalCount: 365})), "", "", ""},
		{"366 days", "", ok(rec(Recurring{Interval: "day", IntervalCount: 366})), inv, "interval_count_invalid", "recurring.interval_count"},
		{"52 weeks", "", ok(rec(Recurring{Interval: "week", IntervalCount: 52})), "", "", ""},
		{"53 weeks", "", ok(rec(Recurring{Interval: "week", IntervalCount: 53})), inv, "interval_count_invalid", "recurring.interval_count"},
		{"12 months", "", ok(rec(Recurring{Interval: "month", IntervalCount: 12})), "", "", ""},
		{"13 months", "", ok(rec(Recurring{Interval: "month", IntervalCount: 13})), inv, "interval_count_invalid", "recurring.interval_count"},
		{"1 year", "", ok(rec(Recurring{Interval: "year", IntervalCount: 1})), "", "", ""},
		{"2 years", "", ok(rec(Recurring{Interval: "year", IntervalCount: 2})), inv, "interval_count_invalid", "recurring.interval_count"},
		{"negative count", "", ok(rec(Recurring{Interval: "month", IntervalCount: -1})), inv, "interval_count_invalid", "recurring.interval_count"},
		{"trial 0", "", ok(rec(Recurring{Interval: "month", TrialPeriodDays: ptr(0)})), "", "", ""},
		{"trial 730", "", ok(rec(Recurring{Interval: "month", TrialPeriodDays: ptr(730)})), "", "", ""},
		{"trial 731", "", ok(rec(Recurring{Interval: "month", TrialPeriodDays: ptr(731)})), inv, "trial_period_days_invalid", "recurring.trial_period_days"},
		{"trial negative", "", ok(rec(Recurring{Interval: "month", TrialPeriodDays: ptr(-1)})), inv, "trial_period_days_invalid", "recurring.trial_period_days"},
		{"metered", "", ok(rec(Recurring{Interval: "month", UsageType: "metered"})), "", "", ""},
		{"usage bad", "", ok(rec(Recurring{Interval: "month", UsageType: "tiered"})), inv, "usage_type_invalid", "recurring.usage_type"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewPrice(testScope, "prod_x", tc.in, tc.prefix, testNow)
			wantErr(t, err, tc.typ, tc.code, tc.param)
			if err != nil {
				return
			}
			if !p.Active() || p.Currency() != "EUR" || !core.HasIDShape(p.ID(), core.PrefixPrice) {
				t.Fatalf("bad new price %+v", p.Snapshot())
			}
			wantType := TypeOneTime
			if tc.in.Recurring != nil {
				wantType = TypeRecurring
			}
			if p.Type() != wantType {
				t.Fatalf("type %s, want %s", p.Type(), wantType)
			}
		})
	}
}

func TestNewPriceDefaults(t *testing.T) {
	p, err := NewPrice(testScope, "prod_x", PriceInput{Currency: "usd", UnitAmount: 300, Recurring: &Recurring{Interval: "week"}}, "", testNow)
	if err != nil {
		t.Fatal(err)
	}
	r := p.Recurring()
	if p.TaxBehavior() != TaxUnspecified || r.IntervalCount != 1 || r.UsageType != UsageLicensed || p.Currency() != "USD" {
		t.Fatalf("defaults not filled: %+v %+v", p.Snapshot(), r)
	}
}

func TestPriceApply(t *testing.T) {
	cases := []struct {
		name        string
		patch       PricePatch
		code, param string
		check       func(*Price) bool
	}{
		{"unit_amount immutable", PricePatch{Immutable: []string{"unit_amount"}, Nickname: ptr("n")}, "parameter_immutable", "unit_amount", nil},
		{"currency immutable", PricePatch{Immutable: []string{"currency"}}, "parameter_immutable", "currency", nil},
		{"recurring immutable", PricePatch{Immutable: []string{"recurring"}}, "parameter_immutable", "recurring", nil},
		{"type immutable", PricePatch{Immutable: []string{"type"}}, "parameter_immutable", "type", nil},
		{"nickname", PricePatch{Nickname: ptr("Gold")}, "", "", func(p *Price) bool { return p.Nickname() == "Gold" }},
		{"lookup unset", PricePatch{LookupKey: ptr("")}, "", "", func(p *Price) bool { return p.LookupKey() == "" }},
		{"lookup too long", PricePatch{LookupKey: ptr(strings.Repeat("k", 201))}, "lookup_key_invalid", "lookup_key", nil},
		{"tax exclusive", PricePatch{TaxBehavior: ptr("exclusive")}, "", "", func(p *Price) bool { return p.TaxBehavior() == "exclusive" }},
		{"tax empty", PricePatch{TaxBehavior: ptr("")}, "", "", func(p *Price) bool { return p.TaxBehavior() == "unspecified" }},
		{"tax bad", PricePatch{TaxBehavior: ptr("gross")}, "tax_behavior_invalid", "tax_behavior", nil},
		{"metadata merge", PricePatch{Metadata: map[string]string{"a": "", "b": "2"}}, "", "",
			func(p *Price) bool { m := p.Metadata(); return len(m) == 1 && m["b"] == "2" }},
		{"metadata bad", PricePatch{Metadata: map[string]string{strings.Repeat("k", 41): "v"}}, "metadata_invalid", "metadata", nil},
		{"deactivate", PricePatch{Active: ptr(false)}, "", "", func(p *Price) bool { return !p.Active() }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewPrice(testScope, "prod_x", PriceInput{Currency: "eur", UnitAmount: 900, LookupKey: ptr("k"),
				Metadata: map[string]string{"a": "1"}}, "", testNow)
			if err != nil {
				t.Fatal(err)
			}
			err = p.Apply(tc.patch, testNow.Add(1))
			wantErr(t, err, inv, tc.code, tc.param)
			if err != nil {
				if p.Nickname() != "" || p.LookupKey() != "k" || !p.Active() {
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
