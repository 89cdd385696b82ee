package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
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
	calc, rates, refresher, err := feeCalculator(context.Background(), config{FeePlans: plans, FXFile: filepath.Join("..", "..", "testdata", "ecb", "eurofxref-hist-sample.xml")}, log)
	if err != nil || refresher != nil || rates == nil {
		t.Fatalf("%v %v %v", rates, refresher, err)
	}
	fee, err := calc.Compute(context.Background(), payments.FeeInput{Amount: 10000, Currency: "EUR",
		Method: payments.MethodCard, CardCountry: "DE", ChargedAt: time.Date(2026, 11, 18, 12, 0, 0, 0, time.UTC)})
	if err != nil || fee.ServiceFeeEUR != 385 { // 3.6 % of 100.00 + 0.25
		t.Fatalf("fee %+v %v", fee, err)
	}
	down := httptest.NewServer(http.NotFoundHandler())
	defer down.Close()
	if _, _, r, err := feeCalculator(context.Background(), config{FXURL: down.URL, FXRefresh: time.Hour}, log); err != nil || r == nil || r.Every != time.Hour {
		t.Fatalf("refresher %+v %v", r, err)
	}
	for name, c := range map[string]config{
		"missing plans": {FeePlans: filepath.Join(dir, "none.json")},
		"bad plans":     {FeePlans: filepath.Join(dir, "bad.json")},
		"missing fx":    {FXFile: filepath.Join(dir, "none.xml")},
	} {
		os.WriteFile(filepath.Join(dir, "bad.json"), []byte(`{"plans":`), 0o600)
		if _, _, _, err := feeCalculator(context.Background(), c, log); err == nil || strings.TrimSpace(err.Error()) == "" {
			t.Errorf("%s: accepted", name)
		}
	}
}

// With --fx-url and no --fx-file the rates are fetched before serving, so no fee is priced with
// the bundled sample's invented figures; a failed fetch keeps the sample and warns as loudly as
// running without --fx-url.
func TestFeeCalculatorFetchesFXURLAtStart(t *testing.T) {
	const doc = `<?xml version="1.0" encoding="UTF-8"?>
<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">
	<gesmes:subject>Reference rates</gesmes:subject>
	<gesmes:Sender><gesmes:name>European Central Bank</gesmes:name></gesmes:Sender>
	<Cube><Cube time="2026-11-23"><Cube currency="USD" rate="1.1700"/></Cube></Cube>
</gesmes:Envelope>`
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(doc)) }))
	defer up.Close()
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "no", http.StatusBadGateway) }))
	defer down.Close()
	day := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name    string
		url     string
		fetched bool
	}{{"reachable", up.URL, true}, {"unreachable", down.URL, false}} {
		var logs bytes.Buffer
		_, rates, r, err := feeCalculator(context.Background(), config{FXURL: c.url}, slog.New(slog.NewTextHandler(&logs, nil)))
		if err != nil || r == nil || rates == nil {
			t.Fatalf("%s: %v %v %v", c.name, rates, r, err)
		}
		_, last := rates.Range()
		if r.Fetched != c.fetched || last.Equal(day) != c.fetched {
			t.Errorf("%s: fetched %v, latest day %s", c.name, r.Fetched, last)
		}
		if warned := strings.Contains(logs.String(), "bundled sample"); warned == c.fetched {
			t.Errorf("%s: sample warning %v; log:\n%s", c.name, warned, logs.String())
		}
	}
}
