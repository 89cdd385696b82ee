package main

import (
	"fmt"
	"log/slog"
	"math"

	"github.com/kassa-pay/kassa/adapters/http/checkoutapi"
	"github.com/kassa-pay/kassa/adapters/http/dashboardapi"
	"github.com/kassa-pay/kassa/adapters/http/kit"
	"github.com/kassa-pay/kassa/adapters/ratelimit"
)

// throttles are the abuse throttles of the listeners (docs/operations.md, "Abuse throttles"), from the
// configuration; each listener counts on its own. The per-merchant rate of D5 is wired
// with the merchant API.
type throttles struct {
	clientIP      kit.ClientIP
	apiAuth       *kit.AuthThrottle  // merchant and operator APIs
	dashboardAuth *kit.AuthThrottle  // dashboard API
	dashboard     *kit.RequestLimits // per session, per address without one
	checkout      *kit.RequestLimits // browser API: per address, per client secret and address
}

func newThrottles(cfg config, log *slog.Logger) (throttles, error) {
	clientIP, err := kit.ParseTrustedProxies(cfg.TrustedProxies)
	if err != nil {
		return throttles{}, fmt.Errorf("KASSA_TRUSTED_PROXIES: %w", err)
	}
	if clientIP, err = clientIP.WithHeader(cfg.ProxyHeader); err != nil {
		return throttles{}, fmt.Errorf("KASSA_TRUSTED_PROXY_HEADER: %w", err)
	}
	failures := func() kit.KeyedLimiter {
		n := cfg.AuthFailuresPerMinute
		return ratelimit.NewKeyed(n/60, int(math.Ceil(n)))
	}
	perSecond := func(r float64) kit.KeyedLimiter { return ratelimit.NewKeyed(r, int(math.Ceil(r))) }
	dashLog, coLog := log.With("listener", "dashboard"), log.With("listener", "checkout")
	return throttles{
		clientIP:      clientIP,
		apiAuth:       kit.NewAuthThrottle(failures(), clientIP, log.With("listener", "api")),
		dashboardAuth: kit.NewAuthThrottle(failures(), clientIP, dashLog),
		dashboard:     dashboardapi.NewDashboardLimits(dashLog, clientIP, perSecond(cfg.DashboardRate), perSecond(cfg.DashboardRateAnon)),
		checkout:      checkoutapi.NewCheckoutLimits(coLog, clientIP, perSecond(cfg.CheckoutRate), perSecond(cfg.CheckoutRatePerIP)),
	}, nil
}
