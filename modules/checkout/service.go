// Package checkout holds hosted checkout sessions: their creation rules, their state machine
// (interface 3.1, D6) and their expiry, observed lazily on read and by the background sweep.
// It is pure: storage, prices and clocks come through ports.
package checkout

import (
	"strings"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// Service is the checkout use cases.
type Service struct {
	store        Store
	prices       PriceLookup
	clocks       ports.Clocks
	checkoutBase string
	present      Presenter
	// Payments (EnablePayments): nil until wired.
	fees           Fees
	presentPayment PaymentPresenter
	// Buyer use cases (EnableBuyer): nil until wired.
	buyer *BuyerDeps
}

// NewService wires the checkout use cases. checkoutBaseURL is the public base URL of the
// checkout origin (a trailing slash is dropped); present renders sessions for event payloads
// (nil: a minimal built-in rendering, meant for tests).
func NewService(store Store, prices PriceLookup, clocks ports.Clocks, checkoutBaseURL string, present Presenter) *Service {
	if present == nil {
		present = minimalPresenter
	}
	return &Service{
		store:        store,
		prices:       prices,
		clocks:       clocks,
		checkoutBase: strings.TrimRight(checkoutBaseURL, "/"),
		present:      present,
	}
}

// expiredEvent expires s (which must be open) and returns its checkout.session.expired event,
// stamped at `at`.
func (svc *Service) expiredEvent(s *Session, at time.Time) ([]core.Event, error) {
	if err := s.Expire(); err != nil {
		return nil, err
	}
	return []core.Event{core.NewEvent(EventExpired, s.Scope(), at, s.ID(), svc.present(s))}, nil
}

// expiryTime is when a due session expired: its expires_at. Lazy and swept expiries are thus
// stamped with the same instant whoever notices them first, and a test clock advance produces
// its events in time order.
func expiryTime(s *Session) time.Time { return s.ExpiresAt() }

// minimalPresenter is the fallback rendering when no presenter is wired.
func minimalPresenter(s *Session) any {
	return map[string]any{
		"id":            s.ID(),
		"object":        "checkout.session",
		"mode":          string(s.Environment()),
		"checkout_mode": string(s.Mode()),
		"status":        string(s.Status()),
		"amount":        s.Amount(),
		"currency":      string(s.Currency()),
		"expires_at":    s.ExpiresAt().Unix(),
		"created":       s.Created().Unix(),
		"metadata":      s.Metadata(),
	}
}
