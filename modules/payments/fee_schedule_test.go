package payments

import (
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// The configuration file in testdata and the built-in defaults must say the same thing.
func TestDefaultFeeFileMatchesBuiltIn(t *testing.T) {
	t.Parallel()
	f, err := os.Open("../../testdata/fees/default.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := DecodeFeeScheduleConfig(f)
	if err != nil {
		t.Fatal(err)
	}
	if want := DefaultFeeScheduleConfig(); !reflect.DeepEqual(got, want) {
		t.Fatalf("testdata/fees/default.json differs from DefaultFeeScheduleConfig:\n%+v\n%+v", got, want)
	}
	if _, err := NewFeeSchedule(got); err != nil {
		t.Fatal(err)
	}
}

func TestDefaultFeeSchedule(t *testing.T) {
	t.Parallel()
	s := DefaultFeeSchedule()
	if s.DefaultPlanID() != "standard" || !reflect.DeepEqual(s.PlanIDs(), []string{"standard"}) {
		t.Fatalf("%s %v", s.DefaultPlanID(), s.PlanIDs())
	}
	p, ok := s.Plan("")
	if !ok || p.ID() != "standard" {
		t.Fatal("default plan")
	}
	want := map[FeeCategory][4]string{
		FeeCardEEA:    {"9/5", "25", "6/5", "10"},
		FeeCardNonEEA: {"14/5", "25", "11/5", "10"},
		FeeSEPADebit:  {"0/1", "35", "0/1", "20"},
	}
	for c, w := range want {
		r, ok := p.Rule(c)
		if !ok {
			t.Fatalf("no %s", c)
		}
		got := [4]string{r.Percent().String(), strconv.FormatInt(r.FixedEURMinor(), 10), r.PSPPercent().String(), strconv.FormatInt(r.PSPFixedEURMinor(), 10)}
		if got != w {
			t.Errorf("%s: %v, want %v", c, got, w)
		}
	}
}

func TestFeeScheduleRejects(t *testing.T) {
	t.Parallel()
	rule := `{"percent": "1.8", "fixed_eur_minor": 25, "psp_percent": "1.2", "psp_fixed_eur_minor": 10}`
	plan := func(eea string) string {
		return `{"card_eea": ` + eea + `, "card_non_eea": ` + rule + `, "sepa_debit": ` + rule + `}`
	}
	doc := func(def, plans string) string { return `{"default_plan": "` + def + `", "plans": ` + plans + `}` }
	ok := doc("standard", `{"standard": `+plan(rule)+`}`)
	if _, err := ParseFeeSchedule(strings.NewReader(ok)); err != nil {
		t.Fatalf("the valid document: %v", err)
	}
	bad := map[string]string{
		"not JSON":              `{`,
		"unknown key":           `{"default_plan": "standard", "plans": {}, "fees": 1}`,
		"no plans":              doc("standard", `{}`),
		"missing default plan":  doc("gold", `{"standard": `+plan(rule)+`}`),
		"missing line":          doc("standard", `{"standard": {"card_eea": `+rule+`, "card_non_eea": `+rule+`}}`),
		"percent as a number":   doc("standard", `{"standard": `+plan(`{"percent": 1.8, "fixed_eur_minor": 25, "psp_percent": "1", "psp_fixed_eur_minor": 1}`)+`}`),
		"negative percent":      doc("standard", `{"standard": `+plan(`{"percent": "-1", "fixed_eur_minor": 25, "psp_percent": "0", "psp_fixed_eur_minor": 1}`)+`}`),
		"exponent percent":      doc("standard", `{"standard": `+plan(`{"percent": "1e1", "fixed_eur_minor": 25, "psp_percent": "0", "psp_fixed_eur_minor": 1}`)+`}`),
		"percent above 100":     doc("standard", `{"standard": `+plan(`{"percent": "100.5", "fixed_eur_minor": 25, "psp_percent": "0", "psp_fixed_eur_minor": 1}`)+`}`),
		"negative fixed":        doc("standard", `{"standard": `+plan(`{"percent": "1", "fixed_eur_minor": -1, "psp_percent": "0", "psp_fixed_eur_minor": 0}`)+`}`),
		"PSP percent above fee": doc("standard", `{"standard": `+plan(`{"percent": "1", "fixed_eur_minor": 25, "psp_percent": "1.5", "psp_fixed_eur_minor": 10}`)+`}`),
		"PSP fixed above fee":   doc("standard", `{"standard": `+plan(`{"percent": "1", "fixed_eur_minor": 25, "psp_percent": "1", "psp_fixed_eur_minor": 30}`)+`}`),
		"trailing data":         ok + ` {}`,
	}
	for name, d := range bad {
		if _, err := ParseFeeSchedule(strings.NewReader(d)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
