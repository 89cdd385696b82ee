package main

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/kassa-pay/kassa/adapters/fx"
	"github.com/kassa-pay/kassa/modules/payments"
)

// feeCalculator builds the fee calculator of D7 from the configuration: the fee plans
// (--fee-plans, else the built-in defaults, which testdata/fees/default.json mirrors) and the
// ECB reference rates (--fx-file, else the bundled sample), refreshed from --fx-url when set.
// The returned refresher is nil without --fx-url; the caller runs it.
func feeCalculator(cfg config, log *slog.Logger) (*payments.FeeCalculator, *fx.Refresher, error) {
	schedule := payments.DefaultFeeSchedule()
	if cfg.FeePlans != "" {
		f, err := os.Open(cfg.FeePlans)
		if err != nil {
			return nil, nil, fmt.Errorf("fee plans: %w", err)
		}
		defer f.Close()
		if schedule, err = payments.ParseFeeSchedule(f); err != nil {
			return nil, nil, fmt.Errorf("fee plans %s: %w", cfg.FeePlans, err)
		}
	}
	var rates *fx.ECB
	if cfg.FXFile != "" {
		var err error
		if rates, err = fx.NewFromFile(cfg.FXFile); err != nil {
			return nil, nil, err
		}
	} else {
		rates = fx.NewSample()
		if cfg.FXURL == "" {
			log.Warn("fees are converted with the bundled sample ECB rates (test fixture figures); set KASSA_FX_URL (e.g. " +
				fx.DefaultECBURL + ") or KASSA_FX_FILE before taking live payments")
		}
	}
	var refresher *fx.Refresher
	if cfg.FXURL != "" {
		refresher = &fx.Refresher{Rates: rates, URL: cfg.FXURL, Every: cfg.FXRefresh, Log: log}
	}
	return payments.NewFeeCalculator(schedule, rates), refresher, nil
}
