package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/modules/payments"
)

func TestFeeCalculatorFromConfiguration(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	dir := t.TempDir()
	plans := filepath.Join(dir, "plans.json")
	// A plan twice the default card EEA percentage: the file must win over the built-in plans.
	if err := os.WriteFile(plans, []byte(`{"default_plan":"p","plans":{"p":{
		"card_eea":{"percent":"3.6","fixed_eur_minor":25,"psp_percent":"1","psp_fixed_eur_minor":10},
		"card_non_eea":{"percent":"2.8","fixed_eur_minor":25,"psp_percent":"2.2","psp_fixed_eur_minor":10},
		"sepa_debit":{"percent":"0","fixed_eur_minor":35,"psp_percent":"0","psp_fixed_eur_minor":20}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	calc, refresher, err := feeCalculator(config{FeePlans: plans, FXFile: filepath.Join("..", "..", "testdata", "ecb", "eurofxref-hist-sample.xml")}, log)
	if err != nil || refresher != nil {
		t.Fatalf("%v %v", refresher, err)
	}
	fee, err := calc.Compute(context.Background(), payments.FeeInput{Amount: 10000, Currency: "EUR",
		Method: payments.MethodCard, CardCountry: "DE", ChargedAt: time.Date(2026, 11, 18, 12, 0, 0, 0, time.UTC)})
	if err != nil || fee.ServiceFeeEUR != 385 { // 3.6 % of 100.00 + 0.25
		t.Fatalf("fee %+v %v", fee, err)
	}
	if _, r, err := feeCalculator(config{FXURL: "https://example.invalid/rates.xml", FXRefresh: time.Hour}, log); err != nil || r == nil || r.Every != time.Hour {
		t.Fatalf("refresher %+v %v", r, err)
	}
	for name, c := range map[string]config{
		"missing plans": {FeePlans: filepath.Join(dir, "none.json")},
		"bad plans":     {FeePlans: filepath.Join(dir, "bad.json")},
		"missing fx":    {FXFile: filepath.Join(dir, "none.xml")},
	} {
		os.WriteFile(filepath.Join(dir, "bad.json"), []byte(`{"plans":`), 0o600)
		if _, _, err := feeCalculator(c, log); err == nil || strings.TrimSpace(err.Error()) == "" {
			t.Errorf("%s: accepted", name)
		}
	}
}
