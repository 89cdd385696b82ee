// Package checkout holds hosted checkout sessions: their creation rules, their state machine
// (interface 3.1, D6) and their expiry, observed lazily on read and by the background sweep.
// It is pure: storage, prices and clocks come through ports.
package checkout

import (
	"strings"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/ports"
)

// Service is the checkout use cases.
type Service struct {
	store        Store
	prices       PriceLookup
	clocks       ports.Clocks
	checkoutBase string
	// Payments (EnablePayments): nil until wired. uow runs the two transactions of a charge
	// over the sessions and the charge use case's repositories (Tx).
	charger *payments.Charger
	uow     ports.UnitOfWorkOf[Tx]
	// Buyer use cases (EnableBuyer): nil until wired.
	buyer *BuyerDeps
	// chargeWait bounds how long a confirmation waits for another charge in flight.
	chargeWait time.Duration
}

// NewService wires the checkout use cases. checkoutBaseURL is the public base URL of the
// checkout origin (a trailing slash is dropped).
func NewService(store Store, prices PriceLookup, clocks ports.Clocks, checkoutBaseURL string) *Service {
	return &Service{
		store:        store,
		prices:       prices,
		clocks:       clocks,
		checkoutBase: strings.TrimRight(checkoutBaseURL, "/"),
		chargeWait:   ChargeWait,
	}
}

// expiredEvent expires s (which must be open) and returns its checkout.session.expired event,
// stamped at `at`.
func (svc *Service) expiredEvent(s *Session, at time.Time) ([]core.Event, error) {
	if err := s.Expire(); err != nil {
		return nil, err
	}
	return []core.Event{core.NewEvent(EventExpired, s.Scope(), at, SessionEvent{Session: s})}, nil
}

// expiryTime is when a due session expired: its expires_at. Lazy and swept expiries are thus
// stamped with the same instant whoever notices them first, and a test clock advance produces
// its events in time order.
func expiryTime(s *Session) time.Time { return s.ExpiresAt() }
