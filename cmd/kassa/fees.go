package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/kassa-pay/kassa/adapters/fx"
	"github.com/kassa-pay/kassa/modules/payments"
)

// feeCalculator builds the fee calculator of D7 from the configuration: the fee plans
// (--fee-plans, else the built-in defaults, which testdata/fees/default.json mirrors) and the
// ECB reference rates (--fx-file, else the bundled sample), refreshed from --fx-url when set.
// Without --fx-file, --fx-url is fetched once before it returns, so fees are not priced with
// the sample's invented figures until the first background refresh; when that fetch fails the
// sample stays, with the same warning as without --fx-url. It returns the rates the
// calculator converts with, and the refresher (nil without --fx-url), which the caller runs.
func feeCalculator(ctx context.Context, cfg config, log *slog.Logger) (*payments.FeeCalculator, *fx.ECB, *fx.Refresher, error) {
	schedule := payments.DefaultFeeSchedule()
	if cfg.FeePlans != "" {
		f, err := os.Open(cfg.FeePlans)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("fee plans: %w", err)
		}
		defer func() { _ = f.Close() }()
		if schedule, err = payments.ParseFeeSchedule(f); err != nil {
			return nil, nil, nil, fmt.Errorf("fee plans %s: %w", cfg.FeePlans, err)
		}
	}
	var rates *fx.ECB
	if cfg.FXFile != "" {
		var err error
		if rates, err = fx.NewFromFile(cfg.FXFile); err != nil {
			return nil, nil, nil, err
		}
	} else {
		rates = fx.NewSample()
	}
	var refresher *fx.Refresher
	if cfg.FXURL != "" {
		refresher = &fx.Refresher{Rates: rates, URL: cfg.FXURL, Every: cfg.FXRefresh, Log: log}
	}
	if cfg.FXFile == "" {
		fetched := false
		if refresher != nil {
			if err := refresher.Fetch(ctx); err != nil {
				log.Warn("fx: fetching ECB rates at start failed", "url", cfg.FXURL, "error", err.Error())
			} else {
				fetched = true
				refresher.Fetched = true
			}
		}
		if !fetched {
			log.Warn("fees are converted with the bundled sample ECB rates (test fixture figures); set KASSA_FX_URL (e.g. " +
				fx.DefaultECBURL + ") or KASSA_FX_FILE before taking live payments")
		}
	}
	return payments.NewFeeCalculator(schedule, rates), rates, refresher, nil
}
