package dashboardapi

import (
	"log/slog"
	"net/http"

	"github.com/kassa-pay/kassa/adapters/http/kit"
)

// NewDashboardLimits returns the request rates of the dashboard API: perSession counts the
// requests that carry a session cookie, per cookie (kept by its SHA-256, never in clear);
// perAddress counts those without one (sign-in, the served document), per client address. A
// cookie that opens no session answers 401, a failed authentication that the listener's
// kit.AuthThrottle bounds per address, so made-up cookies buy no extra requests. A nil
// limiter leaves its requests unlimited.
func NewDashboardLimits(log *slog.Logger, clientIP kit.ClientIP, perSession, perAddress kit.KeyedLimiter) *kit.RequestLimits {
	return kit.NewRequestLimits(log, clientIP,
		kit.LimitRule{Limiter: perSession, Key: func(r *http.Request) string {
			c, err := r.Cookie(SessionCookie)
			if err != nil || c.Value == "" {
				return ""
			}
			return kit.SecretKey(c.Value)
		}},
		kit.LimitRule{Limiter: perAddress, Key: func(r *http.Request) string {
			if c, err := r.Cookie(SessionCookie); err == nil && c.Value != "" {
				return ""
			}
			return clientIP.Key(r)
		}},
	)
}
