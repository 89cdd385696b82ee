package checkoutapi

import (
	"log/slog"
	"net/http"

	"github.com/kassa-pay/kassa/adapters/http/kit"
)

// NewCheckoutLimits returns the request rates of the browser API: perAddress counts every
// request per client address (many buyers may share one), perSecret the requests of one
// client secret from one address (one buyer's page), the secret kept by its SHA-256, never in
// clear. A wrong secret answers 422 like an ended session (D6), so it is bounded by the
// address rate. A nil limiter leaves its requests unlimited.
func NewCheckoutLimits(log *slog.Logger, clientIP kit.ClientIP, perSecret, perAddress kit.KeyedLimiter) *kit.RequestLimits {
	return kit.NewRequestLimits(log, clientIP,
		kit.LimitRule{Limiter: perAddress, Key: clientIP.Key},
		kit.LimitRule{Limiter: perSecret, Key: func(r *http.Request) string {
			s := bearerToken(r.Header.Get("Authorization"))
			if s == "" {
				return ""
			}
			return kit.SecretKey(s) + " " + clientIP.Key(r)
		}},
	)
}
